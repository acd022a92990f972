"""Soak: a steady mixed load with many watchers (some of them slow readers) for minutes, and what it
leaves behind: ``python -m bench.soak [--minutes 10] [--watchers 200]`` (``make soak``).

The storage service runs alone (its /metrics gives its watch count) under a ``protokube serve
--storage``. Writers create, update, patch and delete ConfigMaps at a steady pace, readers list and
get them; ``--watchers`` watches follow the namespace, a tenth of them reading one small chunk a
second (a slow reader is dropped by the gateway once its buffer fills, and starts again). Every
``--interval`` seconds the gateway's RSS, open fds, asyncio tasks and registered watchers and the
storage's RSS and watchers are sampled. Reported: the RSS slope after the warm-up (the first third
of the run, while the event windows fill — 5,000 events here; least squares, MiB per minute), and what is
left once the load and the watchers stop, compared with before they started (tasks, fds, storage
watches): the leaks. Writes bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

import uvloop

from bench.common import RESULTS_DIR, ROOT, free_port, gateway, rss_bytes, stop, wait_grpc_ready
from bench.loadgen import Connection

NS = "/api/v1/namespaces/default/configmaps"
# Event windows of the storage's watch ring and the gateway's watch cache: full within the warm-up
# (at the default pace, about 80 writes/s), so that what grows after it is what leaks.
WINDOW = 5_000
MiB = 2**20


def _metric(text: str, name: str) -> float:
    """The sum of a metric's samples in a Prometheus exposition."""
    return sum(float(m.group(1)) for m in re.finditer(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE))


def _scrape(url: str) -> str:
    with urlopen(url, timeout=10) as response:
        return response.read().decode()


class Soak:
    def __init__(self, gw_port: int, gw_pid: int, storage_pid: int, storage_metrics: str, args: argparse.Namespace):
        self.port, self.gw_pid, self.storage_pid = gw_port, gw_pid, storage_pid
        self.storage_metrics = storage_metrics
        self.args = args
        self.samples: list[dict] = []
        self.counts = {"writes": 0, "reads": 0, "errors": 0, "events": 0, "watch_restarts": 0}
        self.stopping = asyncio.Event()

    def sample(self, phase: str) -> dict:
        gw = _scrape(f"http://127.0.0.1:{self.port}/metrics")
        storage = _scrape(f"http://{self.storage_metrics}/metrics")
        point = {
            "t": time.monotonic(),
            "phase": phase,
            "gateway_rss": rss_bytes(self.gw_pid),
            "gateway_fds": len(list(Path(f"/proc/{self.gw_pid}/fd").iterdir())),
            "gateway_tasks": _metric(gw, "protokube_asyncio_tasks"),
            "gateway_watchers": _metric(gw, "apiserver_registered_watchers"),
            "storage_rss": rss_bytes(self.storage_pid),
            "storage_watchers": _metric(storage, "etcd_debugging_mvcc_watcher_total"),
            **self.counts,
        }
        self.samples.append(point)
        return point

    async def writer(self, n: int) -> None:
        conn, rng = Connection("127.0.0.1", self.port), random.Random(n)
        names: list[str] = []
        i = 0
        while not self.stopping.is_set():
            i += 1
            op = rng.random()
            if not names or (op < 0.4 and len(names) < self.args.objects_per_writer):
                name = f"s{n}-{i}"
                body = {
                    "metadata": {"name": name, "labels": {"w": str(n)}},
                    "data": {"v": "x" * rng.randrange(10, 2000)},
                }
                status, _ = await conn.request("POST", NS, json.dumps(body).encode())
                if status == 201:
                    names.append(name)
            elif op < 0.7:
                body = {"data": {"v": str(i)}}
                status, _ = await conn.request(
                    "PATCH",
                    f"{NS}/{rng.choice(names)}",
                    json.dumps(body).encode(),
                    {"Content-Type": "application/merge-patch+json"},
                )
            else:
                status, _ = await conn.request("DELETE", f"{NS}/{names.pop(rng.randrange(len(names)))}")
            self.counts["writes"] += 1
            self.counts["errors"] += status >= 500
            await asyncio.sleep(1 / self.args.write_rate)
        conn.close()

    async def reader(self) -> None:
        conn = Connection("127.0.0.1", self.port)
        while not self.stopping.is_set():
            status, _ = await conn.request("GET", f"{NS}?labelSelector=w%3D0&resourceVersion=0")
            self.counts["reads"] += 1
            self.counts["errors"] += status >= 500
            await asyncio.sleep(0.05)
        conn.close()

    async def watcher(self, slow: bool) -> None:
        """A watch from now; a slow one reads 256 bytes a second. When a watch ends, another starts."""
        while not self.stopping.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 16)
            except OSError:
                await asyncio.sleep(1)
                continue
            writer.write(f"GET {NS}?watch=1&allowWatchBookmarks=true HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            try:
                while not self.stopping.is_set():
                    if slow:
                        chunk = await asyncio.wait_for(reader.read(256), 5)
                        await asyncio.sleep(1)
                    else:
                        chunk = await asyncio.wait_for(reader.read(1 << 16), 5)
                    if not chunk:
                        break
                    self.counts["events"] += chunk.count(b'{"type":')
            except (TimeoutError, OSError):
                pass
            writer.close()
            if not self.stopping.is_set():
                self.counts["watch_restarts"] += 1

    async def run(self) -> dict:
        baseline = self.sample("baseline")
        tasks = [asyncio.create_task(self.writer(n)) for n in range(self.args.writers)]
        tasks += [asyncio.create_task(self.reader()) for _ in range(2)]
        tasks += [asyncio.create_task(self.watcher(slow=i % 10 == 0)) for i in range(self.args.watchers)]
        end = time.monotonic() + self.args.minutes * 60
        while time.monotonic() < end:
            await asyncio.sleep(self.args.interval)
            point = self.sample("load")
            print(
                f"{(point['t'] - baseline['t']) / 60:5.1f} min  gateway {point['gateway_rss'] / MiB:6.1f} MiB "
                f"{point['gateway_tasks']:5.0f} tasks {point['gateway_fds']:4d} fds "
                f"{point['gateway_watchers']:4.0f} watchers  storage {point['storage_rss'] / MiB:6.1f} MiB "
                f"{point['storage_watchers']:4.0f} watches  writes {self.counts['writes']:,} "
                f"errors {self.counts['errors']} restarts {self.counts['watch_restarts']}",
                flush=True,
            )
        self.stopping.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(self.args.settle)
        after = self.sample("after")
        return self.report(baseline, after)

    def report(self, baseline: dict, after: dict) -> dict:
        load = [s for s in self.samples if s["phase"] == "load"]
        steady = load[len(load) // 3 :]
        return {
            "minutes": self.args.minutes,
            "watchers": self.args.watchers,
            "gateway_rss_slope_mib_per_min": _slope(steady, "gateway_rss") * 60 / MiB,
            "storage_rss_slope_mib_per_min": _slope(steady, "storage_rss") * 60 / MiB,
            "leaked": {
                key: after[key] - baseline[key]
                for key in ("gateway_tasks", "gateway_fds", "gateway_watchers", "storage_watchers")
            },
            "counts": self.counts,
            "samples": self.samples,
        }


def _slope(points: list[dict], key: str) -> float:
    """Least-squares slope of ``key`` over time (per second)."""
    if len(points) < 2:
        return 0.0
    ts = [p["t"] for p in points]
    vs = [p[key] for p in points]
    mt, mv = sum(ts) / len(ts), sum(vs) / len(vs)
    den = sum((t - mt) ** 2 for t in ts)
    return sum((t - mt) * (v - mv) for t, v in zip(ts, vs, strict=True)) / den if den else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--write-rate", type=float, default=20.0, help="writes per second per writer")
    parser.add_argument("--objects-per-writer", type=int, default=100, help="each writer keeps at most this many")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--settle", type=float, default=15.0, help="seconds after the load before the last sample")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    from bench.__main__ import raise_file_limit

    raise_file_limit()
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        address, metrics = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
        argv_storage = [sys.executable, "-m", "protokube", "storage", "--listen", address, "--listen-metrics", metrics]
        argv_storage += ["--watch-ring-size", str(WINDOW)]
        storage = subprocess.Popen(
            [*argv_storage, "--data-dir", f"{tmp}/storage"], cwd=ROOT, stdout=subprocess.DEVNULL, start_new_session=True
        )
        try:
            asyncio.run(wait_grpc_ready(address, storage, 20))
            with gateway(Path(tmp) / "gw", "--storage", address, "--watch-cache-window", str(WINDOW)) as gw:
                result = uvloop.run(Soak(gw.port, gw.pid, storage.pid, metrics, args).run())
        finally:
            stop(storage)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "soak.json").write_text(json.dumps(result, indent=1))
    print(
        f"\nsoak of {args.minutes:g} min with {args.watchers} watchers: {result['counts']}\n"
        f"RSS slope after warm-up: gateway {result['gateway_rss_slope_mib_per_min']:+.2f} MiB/min, "
        f"storage {result['storage_rss_slope_mib_per_min']:+.2f} MiB/min\n"
        f"left after the load (vs before): {result['leaked']}"
    )
    return 1 if result["counts"]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
