"""PNG charts of a run's results (matplotlib, Agg backend): throughput against concurrency, latency distributions."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter

from bench.common import clients as clients_text


def _cdf(ax, cdf_ms: list[float], label: str) -> None:
    if cdf_ms:
        ax.plot(cdf_ms, [i / (len(cdf_ms) - 1) for i in range(len(cdf_ms))], label=label)


def _plain_log_x(ax) -> None:
    """A log x axis labelled with plain numbers (1, 10, 100), minor ticks unlabelled."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _latency_axes(ax, title: str) -> None:
    _plain_log_x(ax)
    ax.set_xlabel("latency (ms, log scale)")
    ax.set_ylabel("fraction of requests")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def http_ceiling(results: dict, out: Path) -> list[Path]:
    clients = [int(c) for c in results["runs"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    labels = {"bare": "bare Quart app", "gateway": "gateway GET", "gateway_rv0": "gateway GET ?resourceVersion=0"}
    for target, label in labels.items():
        left.plot(clients, [results["runs"][str(c)][target]["per_s"] for c in clients], marker="o", label=label)
        right.plot(
            clients, [results["runs"][str(c)][target].get("p99_ms") for c in clients], marker="o", label=label + " p99"
        )
    for ax, ylabel, title in (
        (left, "requests/s", "GET of one pod: throughput"),
        (right, "p99 latency (ms)", "GET of one pod: p99 latency (wrk)"),
    ):
        ax.set_xscale("log")
        ax.set_xticks(clients, [str(c) for c in clients])
        ax.set_xlabel("concurrent connections")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend()
    return [_save(fig, out / "http_ceiling.png")]


def tls(results: dict, out: Path) -> list[Path]:
    clients = [int(c) for c in results["runs"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    labels = {"insecure": "insecure listener", "tls": "TLS + client certificate"}
    for target, label in labels.items():
        left.plot(clients, [results["runs"][str(c)][target]["per_s"] for c in clients], marker="o", label=label)
        biggest = results["runs"][str(max(clients))][target]
        _cdf(right, biggest.get("cdf_ms", []), f"{label}, {clients_text(max(clients))}")
    _plain_log_x(left)
    left.set_xlabel("concurrent connections")
    left.set_ylabel("requests/s")
    left.set_title("GET of one pod (?resourceVersion=0)")
    left.grid(True, alpha=0.3)
    left.legend()
    _latency_axes(right, "GET latency distribution")
    return [_save(fig, out / "tls.png")]


def storage(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    names = {"ours": "protokube storage", "ours_no_group_commit": "protokube, no group commit", "etcd": "etcd"}
    for key, label in names.items():
        r = results.get(key)
        if r is None:
            continue
        points = [(int(c[1:]), r[c]["puts_per_s"]) for c in ("c1", "c32") if c in r]
        left.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        _cdf(right, r["c32"].get("cdf_ms", []), f"{label}, 32 clients")
    left.set_xscale("log")
    left.set_xticks([1, 32], ["1", "32"])
    left.set_xlabel("concurrent clients")
    left.set_ylabel("durable puts/s")
    left.set_title("puts/s against concurrency")
    left.grid(True, alpha=0.3)
    left.legend()
    _latency_axes(right, "put latency distribution, 32 clients")
    return [_save(fig, out / "storage.png")]


def writes(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    clients = sorted(int(c) for c in results["clients"])
    for phase in ("create", "update"):
        rates = [results["clients"][str(c)].get(phase, {}).get("per_s") for c in clients]
        left.plot(clients, rates, marker="o", label=f"{phase}s/s")
        for c in clients:
            _cdf(right, results["clients"][str(c)].get(phase, {}).get("cdf_ms", []), f"{phase}, {clients_text(c)}")
    left.axhline(results["storage_puts_32"]["puts_per_s"], color="grey", linestyle="--", label="storage puts/s, 32 c")
    left.set_xscale("log")
    left.set_xticks(clients, [str(c) for c in clients])
    left.set_xlabel("concurrent clients")
    left.set_ylabel("writes/s")
    left.set_title("configmap writes through the gateway")
    left.grid(True, alpha=0.3)
    left.legend()
    _latency_axes(right, "write latency distribution")
    return [_save(fig, out / "writes.png")]


def lists(results: dict, out: Path) -> list[Path]:
    names = list(results["lists"])
    times = [results["lists"][n]["median_ms"] for n in names]
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(names) + 1.5))
    ax.barh(names, times)
    ax.axvline(results["naive_json_dumps_ms"], color="red", linestyle="--", label="json.dumps of the same dicts")
    _plain_log_x(ax)
    ax.invert_yaxis()
    ax.set_xlabel("time to last byte (ms, log scale)")
    ax.set_title(f"listing {results['pods']:,} pods")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend()
    return [_save(fig, out / "lists.png")]


def watch_fanout(results: dict, out: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for watchers, r in results["runs"].items():
        _cdf(ax, r.get("cdf_ms", []), f"{watchers} watchers")
    _latency_axes(ax, f"write-to-delivery latency, {results['rate']} writes/s")
    return [_save(fig, out / "watch_fanout.png")]


def memory(results: dict, out: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    points = [results["empty"], results["at_small"], results["at_large"]]
    pods = [p["pods"] for p in points]
    ax.plot(pods, [p["rss"] / 2**20 for p in points], marker="o", label="after the cache filled")
    ax.plot(pods, [p["rss_json"] / 2**20 for p in points], marker="o", label="after serving each pod as JSON")
    ax.set_xlabel("pods in the watch cache")
    ax.set_ylabel("gateway RSS (MiB)")
    ax.set_title("gateway memory")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return [_save(fig, out / "memory.png")]


def encodings(results: dict, out: Path) -> list[Path]:
    formats = list(results["formats"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.38
    xs = range(len(formats))
    for offset, op in ((-width / 2, "encode"), (width / 2, "decode")):
        left.bar([x + offset for x in xs], [results["formats"][f][f"{op}_us"] for f in formats], width, label=op)
    for offset, key, label in ((-width / 2, "bytes", "raw"), (width / 2, "gzip_bytes", "gzip")):
        right.bar([x + offset for x in xs], [results["formats"][f][key] for f in formats], width, label=label)
    left.set_yscale("log")
    left.set_ylabel("µs per object (log scale)")
    left.set_title("encode / decode time, one pod")
    right.set_ylabel("bytes")
    right.set_title("size, one pod")
    for ax in (left, right):
        ax.set_xticks(list(xs), formats)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend()
    return [_save(fig, out / "encodings.png")]


def startup(results: dict, out: Path) -> list[Path]:
    labels = ["first groups", "all kinds"]
    points = [results["small"], results["all"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(labels, [p["ready_seconds"] for p in points])
    left.set_ylabel("seconds until /readyz answers 200")
    left.set_title("start-up time")
    right.bar(labels, [p["rss"] / 2**20 for p in points])
    right.set_ylabel("gateway RSS (MiB)")
    right.set_title("idle memory")
    for ax in (left, right):
        ax.grid(True, axis="y", alpha=0.3)
    return [_save(fig, out / "startup.png")]


def scaleout(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for target, label in (("ours", "our storage"), ("etcd", "etcd")):
        runs = results.get(target) or {}
        if not runs:
            continue
        counts = [int(n) for n in runs]
        left.plot(counts, [runs[n]["gets_per_s"] for n in runs], marker="o", label=label)
        right.plot(counts, [runs[n]["creates_per_s"] for n in runs], marker="o", label=label)
    for ax, title in ((left, "GET from the watch cache"), (right, "creates, 32 clients")):
        ax.set_xlabel("gateway processes")
        ax.set_ylabel("requests/s")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend()
    return [_save(fig, out / "scaleout.png")]


def openapi(results: dict, out: Path) -> list[Path]:
    labels = ["first GET\n(builds)", "repeated GET\n(cached)", "If-None-Match\n(304)"]
    values = [results["first_ms"], results["full_ms_p50"], results["not_modified_ms_p50"]]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(labels, values)
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms, log scale; p50 for repeated)")
    ax.set_title("OpenAPI v3 document of apps/v1")
    ax.grid(True, axis="y", alpha=0.3)
    return [_save(fig, out / "openapi.png")]


def apf(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    cost = results["cost"]
    left.bar(["APF on", "APF off"], [cost["on"]["per_s"], cost["off"]["per_s"]])
    left.set_ylabel("GETs/s")
    left.set_title(f"GET throughput, {clients_text(cost['clients'])}")
    left.grid(True, axis="y", alpha=0.3)
    fairness = results["fairness"]
    _cdf(right, fairness["idle"]["mouse"]["cdf_ms"], "mouse alone")
    _cdf(right, fairness["flood"]["mouse"]["cdf_ms"], "mouse under a 20× elephant")
    _latency_axes(right, "the mouse's latency in a 3-seat level")
    return [_save(fig, out / "apf.png")]


def robustness(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    codes = results["measured"]["codes"]
    left.bar(sorted(codes), [codes[c] for c in sorted(codes)])
    left.set_xlabel("HTTP status")
    left.set_ylabel("answers")
    left.set_title(f"{results['measured']['requests']:,} hostile requests: {results['measured']['per_s']:,.0f}/s")
    right.bar(["before", "after"], [results["rss_before"] / 2**20, results["rss_after"] / 2**20])
    right.set_ylabel("gateway RSS (MiB)")
    right.set_title("memory before and after them")
    for ax in (left, right):
        ax.grid(True, axis="y", alpha=0.3)
    return [_save(fig, out / "robustness.png")]


def customresources(results: dict, out: Path) -> list[Path]:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    kinds = ["configmaps", "crontabs"]
    left.bar(kinds, [results["creates"][k]["per_s"] for k in kinds])
    left.set_ylabel("creates/s")
    left.set_title("creates, 8 clients")
    right.bar(kinds, [results["lists"][k]["median_ms"] for k in kinds])
    right.set_ylabel("ms (median)")
    right.set_title(f"list of {results['count']:,} objects as JSON")
    for ax in (left, right):
        ax.grid(True, axis="y", alpha=0.3)
    return [_save(fig, out / "customresources.png")]


CHARTS = {
    "http": http_ceiling,
    "tls": tls,
    "storage": storage,
    "writes": writes,
    "lists": lists,
    "watch": watch_fanout,
    "memory": memory,
    "encodings": encodings,
    "startup": startup,
    "scaleout": scaleout,
    "openapi": openapi,
    "apf": apf,
    "robustness": robustness,
    "customresources": customresources,
}


def draw(sections: dict, out: Path) -> list[Path]:
    """Every chart whose section ran without error."""
    paths: list[Path] = []
    for name, chart in CHARTS.items():
        results = sections.get(name)
        if results and "error" not in results:
            paths += chart(results, out)
    return paths
