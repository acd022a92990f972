"""Scale-out on this machine: GET and create throughput of 1, 2 (and 4) gateway processes
(``serve --gateways N``, SO_REUSEPORT) against our storage and against Debian's etcd, with the CPU
each process used; and write throughput through one gateway on etcd against our storage.

GETs are of one ConfigMap from the watch cache (``resourceVersion=0``) with wrk at 64 connections,
so they measure the gateways' own work. No goals: a 2-core machine shares its cores between the
gateways, the storage and the load generator, so the figures report how far N processes get here.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from bench.common import Row, cpu_seconds, fmt_rate, gateway, loadgen, ratio_row, request
from bench.http_ceiling import wrk
from bench.storage import ETCD, etcd

CONNECTIONS = 64


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def measure(data_dir: Path, gateways: int, seconds: float, storage: str | None) -> dict:
    args = ["--gateways", str(gateways)] + (["--storage", storage] if storage else [])
    with gateway(data_dir, *args) as gw:
        status, _ = request(gw, "POST", "/api/v1/namespaces/default/configmaps", b'{"metadata":{"name":"hot"}}')
        assert status == 201, status
        time.sleep(1)  # the workers' caches have the object
        procs = [gw.pid, *(p for p in children(gw.pid) if _is_gateway(p))]
        before = {p: cpu_seconds(p) for p in procs}
        url = f"{gw.url}/api/v1/namespaces/default/configmaps/hot?resourceVersion=0"
        gets = wrk(url, CONNECTIONS, max(1, round(seconds)))
        config = {"host": gw.host, "port": gw.port, "clients": 32, "seconds": seconds, "creates_only": True}
        creates = loadgen("writes", {**config, "tag": f"g{gateways}"}, seconds * 4 + 60)["create"]
        used = [round(cpu_seconds(p) - before[p], 2) for p in procs]
    return {"gets_per_s": gets["per_s"], "creates_per_s": creates["per_s"], "cpu_seconds": used}


def _is_gateway(pid: int) -> bool:
    return b"--gateway-index" in Path(f"/proc/{pid}/cmdline").read_bytes()


def run(quick: bool) -> dict:
    seconds = 1.0 if quick else 6.0
    counts = (1, 2) if quick else (1, 2, 4)
    results: dict = {"seconds": seconds, "ours": {}, "etcd": {}}
    with tempfile.TemporaryDirectory(prefix="bench-scaleout-") as tmp:
        for n in counts:
            results["ours"][str(n)] = measure(Path(tmp) / f"ours-{n}", n, seconds, None)
        if shutil.which(ETCD):  # Debian's etcd-server
            for n in counts:
                with etcd(Path(tmp) / f"etcd-{n}") as address:
                    results["etcd"][str(n)] = measure(Path(tmp) / f"gw-etcd-{n}", n, seconds, address)
    return results


def rows(results: dict) -> list[Row]:
    out: list[Row] = []
    for target, label in (("ours", "our storage"), ("etcd", "etcd")):
        runs = results[target]
        if not runs:
            out.append(Row("scaleout", f"gateways on {label}", "not run (etcd not installed)"))
            continue
        one = runs["1"]
        for n, r in runs.items():
            cpu = " + ".join(f"{c:.1f}" for c in r["cpu_seconds"])
            for figure, key in (("GET/s", "gets_per_s"), ("creates/s", "creates_per_s")):
                out.append(
                    ratio_row(
                        "scaleout",
                        f"{figure}, {n} gateway(s) on {label} (CPU s: {cpu})",
                        fmt_rate(r[key]),
                        f"1 gateway {fmt_rate(one[key])}",
                        r[key] / one[key],
                    )
                )
    if results["etcd"]:
        ours, etcd = results["ours"]["1"]["creates_per_s"], results["etcd"]["1"]["creates_per_s"]
        out.append(
            ratio_row(
                "scaleout", "creates/s through 1 gateway on etcd", fmt_rate(etcd), f"ours {fmt_rate(ours)}", etcd / ours
            )
        )
    return out
