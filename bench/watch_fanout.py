"""Watch fan-out: many concurrent watchers of one resource while writes land at a steady rate.

The watchers are keep-alive connections of a separate process (``bench.loadgen watch``), each a
``GET .../configmaps?watch=1&resourceVersion=RV``. This process updates one configmap ``RATE`` times a
second (open loop: each write starts on schedule, on a pool of connections), its send time in the data;
the watchers read it from each event's bytes and record write-to-delivery latency. CPU per delivered
event: the gateway process's utime+stime over the window divided by the events delivered. Measured with
few watchers and with many: encoding is shared, so the per-event cost should not grow with watchers.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, Row, at_most, cpu_seconds, fmt_ms, gateway, latency_summary, ratio_row, request, stop
from bench.loadgen import Connection, configmap

RATE = 20  # writes per second
NAME = "fanout"
COLLECTION = "/api/v1/namespaces/default/configmaps"
# Issue 30's goals for the many watchers: delivery p99, and with 1,000 of them (a full run) gateway
# CPU per delivery (with fewer, the writes' own CPU weighs more in it).
GOAL_P99_MS = 250.0
GOAL_CPU_US = 25.0
GOAL_CPU_WATCHERS = 1000


async def write_steadily(host: str, port: int, rate: float, seconds: float, tls: ssl.SSLContext | None = None) -> dict:
    """Unconditional updates of the configmap on schedule (over ``tls`` if given); returns the PUT latencies."""
    pool: asyncio.Queue[Connection] = asyncio.Queue()
    for _ in range(8):
        pool.put_nowait(Connection(host, port, tls))
    latencies: list[float] = []
    errors = 0

    async def write() -> None:
        nonlocal errors
        conn = await pool.get()
        try:
            start = time.perf_counter()
            body = configmap(NAME, {"sent": f"{time.time():.6f}"})
            status, _ = await conn.request("PUT", f"{COLLECTION}/{NAME}", body)
            latencies.append(time.perf_counter() - start)
            errors += status != 200
        finally:
            pool.put_nowait(conn)

    tasks = []
    began = time.perf_counter()
    for k in range(int(rate * seconds)):
        await asyncio.sleep(max(0.0, began + k / rate - time.perf_counter()))
        tasks.append(asyncio.create_task(write()))
    await asyncio.gather(*tasks)
    while not pool.empty():
        pool.get_nowait().close()
    return {**latency_summary(latencies, time.perf_counter() - began), "writes": len(tasks), "errors": errors}


def measure(gw, watchers: int, seconds: float, resource_version: str) -> dict:
    config = {
        "host": gw.host,
        "port": gw.port,
        "watchers": watchers,
        "path": f"{COLLECTION}?watch=1&resourceVersion={resource_version}",
        "max_seconds": seconds + 120,
    }
    argv = [sys.executable, "-m", "bench.loadgen", "watch", json.dumps(config)]
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        line = proc.stdout.readline()  # "ready" once every watch is open (bounded by the loadgen's own timeouts)
        if line.strip() != "ready":
            raise RuntimeError(f"watch load did not start: {line!r}")
        time.sleep(0.5)
        cpu0, t0 = cpu_seconds(gw.pid), time.perf_counter()
        writer = asyncio.run(write_steadily(gw.host, gw.port, RATE, seconds))
        time.sleep(1.0)  # deliveries still on their way
        cpu1, t1 = cpu_seconds(gw.pid), time.perf_counter()
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        out, _ = proc.communicate(timeout=60)
        delivered = json.loads(out)
    finally:
        stop(proc)
    cpu = cpu1 - cpu0
    return {
        **delivered,
        "writer": writer,
        "expected_events": watchers * writer["writes"],
        "gateway_cpu_seconds": cpu,
        "window_seconds": t1 - t0,
        "cpu_us_per_event": cpu / max(delivered["events"], 1) * 1e6,
    }


def run(quick: bool) -> dict:
    many = 200 if quick else 1000
    seconds = 3.0 if quick else 15.0
    results: dict = {"rate": RATE, "seconds": seconds, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp, gateway(Path(tmp) / "data") as gw:
        status, body = request(gw, "POST", COLLECTION, configmap(NAME, {"sent": "0.0"}))
        if status != 201:
            raise RuntimeError(f"create failed: {status} {body[:200]!r}")
        rv = json.loads(body)["metadata"]["resourceVersion"]
        for watchers in (10, many):
            results["runs"][str(watchers)] = measure(gw, watchers, seconds, rv)
            _, body = request(gw, "GET", f"{COLLECTION}/{NAME}")
            rv = json.loads(body)["metadata"]["resourceVersion"]
    results["few"], results["many"] = "10", str(many)
    return results


def rows(results: dict) -> list[Row]:
    few, many = results["runs"][results["few"]], results["runs"][results["many"]]
    out = []
    for label, r in ((results["few"], few), (results["many"], many)):
        delivered = f"{r['events']:,}/{r['expected_events']:,} events"
        out.append(Row("watch", f"{label} watchers, {RATE} writes/s: delivered", delivered))
        out.append(Row("watch", f"{label} watchers: delivery p50", fmt_ms(r["p50_ms"])))
        out.append(
            ratio_row(
                "watch",
                f"{label} watchers: delivery p99",
                fmt_ms(r["p99_ms"]),
                fmt_ms(GOAL_P99_MS),
                r["p99_ms"] / GOAL_P99_MS,
                at_most if r is many else None,
                1.0,
            )
        )
    out.append(Row("watch", f"{results['few']} watchers: gateway CPU per event", f"{few['cpu_us_per_event']:,.0f} µs"))
    out.append(
        ratio_row(
            "watch",
            f"{results['many']} watchers: gateway CPU per event",
            f"{many['cpu_us_per_event']:,.1f} µs",
            f"{GOAL_CPU_US:.0f} µs",
            many["cpu_us_per_event"] / GOAL_CPU_US,
            at_most if int(results["many"]) >= GOAL_CPU_WATCHERS else None,
            1.0,
        )
    )
    extra_cpu = many["gateway_cpu_seconds"] - few["gateway_cpu_seconds"]
    extra_events = max(many["events"] - few["events"], 1)
    per_extra = f"{extra_cpu / extra_events * 1e6:,.0f} µs"
    out.append(Row("watch", f"gateway CPU per extra delivery ({results['few']} → {results['many']})", per_extra))
    busy = many["gateway_cpu_seconds"] / many["window_seconds"]
    out.append(Row("watch", f"{results['many']} watchers: gateway CPU", f"{busy:.0%} of a core"))
    return out
