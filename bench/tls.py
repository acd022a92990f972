"""TLS: GET of one pod over HTTPS with the admin client certificate (TLS, client-certificate
authentication, authorization) against the same GET on the insecure listener, in one run.

Both loads come from ``bench.loadgen gets`` (keep-alive connections, the same client code but for
the TLS context) at each concurrency, interleaved so drifts of the machine hit both alike, each
keeping the best of its rounds. The request reads the watch cache (``?resourceVersion=0``), so the
figure shows what the transport and authentication add to a cheap request. The load client is Python
too and pays for TLS as well; the gateway's CPU time per request (from /proc) shows the server's
share alone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.common import (
    Row,
    at_least,
    best_rounds,
    clients,
    cpu_seconds,
    fmt_ms,
    gateway,
    loadgen,
    ratio_row,
    request,
    wait_for,
)
from bench.pods import load_pods, pod_dict

CONCURRENCY = (1, 16, 64)
TARGETS = ("insecure", "tls")
GOAL = 0.8


def run(quick: bool) -> dict:
    seconds, rounds = (1, 1) if quick else (4, 2)
    concurrency = (16,) if quick else CONCURRENCY
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp, gateway(Path(tmp) / "data") as gw:
        load_pods(gw.storage, 0, 1)
        path = f"/api/v1/namespaces/default/pods/{pod_dict(0)['metadata']['name']}?resourceVersion=0"
        wait_for(lambda: request(gw, "GET", path)[0] == 200, 20, "the pod in the cache")
        pki = Path(tmp) / "data" / "pki"
        tls = {"ca": str(pki / "ca.crt"), "cert": str(pki / "admin.crt"), "key": str(pki / "admin.key")}
        configs = {
            "insecure": {"host": gw.host, "port": gw.port, "path": path},
            "tls": {"host": gw.host, "port": gw.secure_port, "path": path, "tls": tls},
        }
        for config in configs.values():  # warm-up (and a check that both answer 200)
            warm = loadgen("gets", {**config, "clients": 2, "seconds": 0.5}, 60)
            if warm["errors"] or not warm["count"]:
                raise RuntimeError(f"GET did not answer 200: {warm}")
        results: dict = {"seconds_per_run": seconds, "rounds": rounds, "runs": {}}
        for c in concurrency:

            def measure(target: str, c: int = c) -> dict:
                used = cpu_seconds(gw.pid)
                r = loadgen("gets", {**configs[target], "clients": c, "seconds": seconds}, seconds + 60)
                r["server_cpu_us"] = (cpu_seconds(gw.pid) - used) / max(r["count"], 1) * 1e6
                return r

            results["runs"][str(c)] = best_rounds(rounds, TARGETS, measure)
    return results


def rows(results: dict) -> list[Row]:
    out = []
    for c, run in results["runs"].items():
        insecure, tls = run["insecure"], run["tls"]
        out.append(
            ratio_row(
                "tls",
                f"GET over TLS + client cert, {clients(c)}",
                f"{tls['per_s']:,.0f} req/s",
                f"insecure listener {insecure['per_s']:,.0f} req/s",
                tls["per_s"] / insecure["per_s"],
                at_least,
                GOAL,
            )
        )
        out.append(
            ratio_row(
                "tls",
                f"gateway CPU per GET over TLS + client cert, {clients(c)}",
                f"{tls['server_cpu_us']:,.0f} µs",
                f"insecure listener {insecure['server_cpu_us']:,.0f} µs",
                tls["server_cpu_us"] / insecure["server_cpu_us"],
            )
        )
        out.append(
            ratio_row(
                "tls",
                f"GET p99 over TLS + client cert, {clients(c)}",
                fmt_ms(tls["p99_ms"]),
                f"insecure listener {fmt_ms(insecure['p99_ms'])}",
                tls["p99_ms"] / insecure["p99_ms"],
            )
        )
    return out
