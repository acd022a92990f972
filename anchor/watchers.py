"""The anchor bench's watch load: many watchers of one ConfigMap over HTTPS while a writer updates it.

The same pieces as bench/watch_fanout.py: ``bench.loadgen watch`` (one asyncio process, raw sockets,
here with the admin client certificate) holds the watches and reads each event's send time from its
bytes; ``write_steadily`` updates the ConfigMap on schedule. CPU per delivery: each server process's
CPU over the window divided by the events delivered; the load generator's and the writer's own CPU
beside it, to show the client side is not the bottleneck.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from bench.common import ROOT, cpu_seconds, stop
from bench.loadgen import client_tls, configmap
from bench.watch_fanout import COLLECTION, NAME, write_steadily

if TYPE_CHECKING:
    from anchor.launch import Server

SETTLE_SECONDS = 1.0  # after the last write: deliveries still on their way


def _resource_version(server: Server) -> str:
    """The ConfigMap's resourceVersion, creating it the first time."""
    with server.client() as client:
        response = client.get(f"{COLLECTION}/{NAME}")
        if response.status_code == 404:
            response = client.post(COLLECTION, content=configmap(NAME, {"sent": "0.0"}))
        response.raise_for_status()
        return response.json()["metadata"]["resourceVersion"]


def fanout(server: Server, watchers: int, rate: float, seconds: float) -> dict[str, Any]:
    """``watchers`` watches of the ConfigMap, ``rate`` updates a second for ``seconds``: delivery latency,
    events delivered of those expected, CPU seconds of each server process, of the load generator and of
    the writer (this process) over the window."""
    host, port = server.address()
    config = {
        "host": host,
        "port": port,
        "watchers": watchers,
        "path": f"{COLLECTION}?watch=1&resourceVersion={_resource_version(server)}",
        "max_seconds": seconds + 120,
        "tls": server.tls_files(),
    }
    argv = [sys.executable, "-m", "bench.loadgen", "watch", json.dumps(config)]
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        line = proc.stdout.readline()  # "ready" once every watch is open (bounded by the loadgen's timeouts)
        if line.strip() != "ready":
            raise RuntimeError(f"watch load did not start: {line!r}")
        time.sleep(0.5)
        before, loadgen0, writer0 = server.cpu(), cpu_seconds(proc.pid), time.process_time()
        began = time.perf_counter()
        writer = asyncio.run(write_steadily(host, port, rate, seconds, client_tls(server.tls_files())))
        time.sleep(SETTLE_SECONDS)
        after, loadgen1, writer1 = server.cpu(), cpu_seconds(proc.pid), time.process_time()
        window = time.perf_counter() - began
        proc.stdin.write("stop\n")
        proc.stdin.flush()
        out, _ = proc.communicate(timeout=60)
        delivered = json.loads(out)
    finally:
        stop(proc)
    return {
        "watchers": watchers,
        "count": delivered["events"],
        "expected": watchers * writer["writes"],
        "open_s": round(delivered["open_seconds"], 2),
        "p50_ms": round(delivered["p50_ms"], 1),
        "p99_ms": round(delivered["p99_ms"], 1),
        "max_ms": round(delivered["max_ms"], 1),
        "write_p50_ms": round(writer["p50_ms"], 1),
        "write_errors": writer["errors"],
        "window_s": round(window, 2),
        "cpu_s": {name: round(after[name] - before[name], 2) for name in before},
        "client_cpu_s": {"watch loadgen": round(loadgen1 - loadgen0, 2), "writer": round(writer1 - writer0, 2)},
    }
