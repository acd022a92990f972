"""The anchor bench's printed report: the servers side by side, each load's figures, its CPU per request
(per delivered event for watches) with protokube's / kube-apiserver's ratio, and the load average at the
load's start."""

from __future__ import annotations

from typing import Any

KUBE = "kube-apiserver+etcd"
WIDTH = 34


def cpu_per_request(result: dict[str, Any]) -> float:
    """Seconds of CPU of every process of the server per request (or delivered event) of the load."""
    return sum(result["cpu_s"].values()) / max(result["count"], 1)


def ratios(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """For each protokube column and load: its CPU per request / kube-apiserver+etcd's."""
    theirs = results[KUBE]
    out: dict[str, dict[str, float]] = {}
    for label, ours in results.items():
        if label == KUBE:
            continue
        out[label] = {
            load: round(cpu_per_request(ours[load]) / cpu_per_request(theirs[load]), 2)
            for load in theirs
            if cpu_per_request(theirs[load]) > 0
        }
    return out


def _figures(result: dict[str, Any]) -> str:
    if "expected" in result:  # watchers: the share of the expected events delivered, latency
        delivered = result["count"] / max(result["expected"], 1)
        return f"{delivered:.0%} p50 {result['p50_ms']:.0f} p99 {result['p99_ms']:.0f} ms"
    if "per_s" in result:
        return f"{result['per_s']:.0f}/s p50 {result['p50_ms']:.1f} ms"
    return f"{result['median_ms']:.0f} ms, {result['bytes'] / 1e6:.1f} MB"


def _cpu(result: dict[str, Any], ratio: float | None) -> str:
    per = cpu_per_request(result) * 1e3
    cell = f"{per * 1e3:.0f} µs" if per < 1 else f"{per:.1f} ms"
    if ratio is not None:
        cell += f" ×{ratio:.2f}"
    return cell + f" (load {result['load_avg'][0]:.1f})"


def table(results: dict[str, Any]) -> str:
    """The servers as columns; per load a row of figures and a row of CPU per request (ratio, load)."""
    labels = [label for label in results if label != "ratios"]
    lines = [f"{'load':{WIDTH}}" + "".join(f"{label:{WIDTH}}" for label in labels)]
    for load in results[KUBE]:
        lines.append(f"{load:{WIDTH}}" + "".join(f"{_figures(results[label][load]):{WIDTH}}" for label in labels))
        cells = [_cpu(results[label][load], results["ratios"].get(label, {}).get(load)) for label in labels]
        lines.append(f"{'  CPU per request (× kube, load)':{WIDTH}}" + "".join(f"{c:{WIDTH}}" for c in cells))
        clients = [results[label][load].get("client_cpu_s") for label in labels]
        if all(clients):
            windows = [results[label][load]["window_s"] for label in labels]
            cells = [
                f"{sum(c.values()):.1f} s in {w:.0f} s ({sum(c.values()) / w:.0%} of a core)"
                for c, w in zip(clients, windows, strict=True)
            ]
            lines.append(f"{'  load generator + writer CPU':{WIDTH}}" + "".join(f"{c:{WIDTH}}" for c in cells))
    return "\n".join(lines)
