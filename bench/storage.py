"""Storage benchmark: our etcd-compatible service against a real etcd, same Python load client.

    python -m bench.storage [--quick]

Measures durable puts/s (1 and 32 concurrent clients) and put latency, group commit on/off,
the raw rate of single-row fsync'd SQLite commits on this disk (the ceiling without group
commit), watch event delivery latency, and the latency of a Range over 10,000 keys. Every
server runs as a subprocess on a free loopback port with a temporary data dir and is killed
afterwards; every loop is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import grpc
from etcdserverpb import rpc_pb2 as pb
from etcdserverpb import rpc_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
VALUE = b"v" * 256
GOALS = {
    "puts_32_vs_etcd": 0.5,  # ours >= 50% of etcd's puts/s at 32 clients
    "p99_put_ms": 20.0,  # p99 put latency below 20 ms (32 clients)
    "group_commit_gain_32": 2.0,  # group commit >= 2x one-commit-per-write at 32 clients
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- servers ---------------------------------------------------------------------------------
@contextmanager
def process(argv: list[str], address: str, timeout: float = 20.0):
    """Run a server subprocess until it answers Maintenance.Status; kill it afterwards."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        asyncio.run(wait_ready(address, proc, timeout))
        yield address
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)


async def wait_ready(address: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(address) as channel:
        stub = rpc_pb2_grpc.MaintenanceStub(channel)
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {proc.args}")
            try:
                await stub.Status(pb.StatusRequest(), timeout=1)
                return
            except grpc.aio.AioRpcError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)


def ours(data_dir: Path, group_commit: bool = True):
    address = f"127.0.0.1:{free_port()}"
    argv = [sys.executable, "-m", "protokube", "storage", "--listen", address, "--data-dir", str(data_dir)]
    argv += ["--compaction-retention", "0"]
    if not group_commit:
        argv.append("--no-group-commit")
    return process(argv, address)


def etcd(data_dir: Path):
    client, peer = free_port(), free_port()
    address = f"127.0.0.1:{client}"
    argv = [
        ETCD,
        "--name=bench",
        f"--data-dir={data_dir}",
        f"--listen-client-urls=http://{address}",
        f"--advertise-client-urls=http://{address}",
        f"--listen-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-cluster=bench=http://127.0.0.1:{peer}",
    ]
    return process(argv, address)


# --- measurements ----------------------------------------------------------------------------
async def put_load(address: str, clients: int, seconds: float) -> dict:
    """`clients` concurrent sequential writers for `seconds`: throughput and latency."""
    latencies: list[float] = []
    async with grpc.aio.insecure_channel(address) as channel:
        kv = rpc_pb2_grpc.KVStub(channel)
        await kv.Put(pb.PutRequest(key=b"/bench/warmup", value=VALUE))
        deadline = time.perf_counter() + seconds

        async def writer(n: int) -> None:
            i = 0
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                await kv.Put(pb.PutRequest(key=b"/bench/%d/%d" % (n, i % 100), value=VALUE), timeout=10)
                latencies.append(time.perf_counter() - start)
                i += 1

        began = time.perf_counter()
        await asyncio.gather(*(writer(n) for n in range(clients)))
        elapsed = time.perf_counter() - began
    return {
        "puts_per_s": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
    }


async def watch_latency(address: str, events: int) -> dict:
    """Put then wait for the watch event, one at a time: put issued -> event received."""
    latencies: list[float] = []
    async with grpc.aio.insecure_channel(address) as channel:
        kv, watch = rpc_pb2_grpc.KVStub(channel), rpc_pb2_grpc.WatchStub(channel)
        call = watch.Watch()
        await call.write(
            pb.WatchRequest(create_request=pb.WatchCreateRequest(key=b"/watched/", range_end=b"/watched0"))
        )
        await asyncio.wait_for(call.read(), 10)  # created
        for i in range(events):
            start = time.perf_counter()
            put = asyncio.ensure_future(kv.Put(pb.PutRequest(key=b"/watched/%d" % (i % 10), value=VALUE)))
            response = await asyncio.wait_for(call.read(), 10)
            latencies.append(time.perf_counter() - start)
            assert response.events, response
            await put
        call.cancel()
    return {
        "watch_p50_ms": percentile(latencies, 0.5) * 1000,
        "watch_p99_ms": percentile(latencies, 0.99) * 1000,
    }


async def range_latency(address: str, keys: int, repeats: int) -> dict:
    """Time a Range over `keys` keys (loaded with 128-put transactions first)."""
    async with grpc.aio.insecure_channel(address, options=[("grpc.max_receive_message_length", 2**30)]) as channel:
        kv = rpc_pb2_grpc.KVStub(channel)
        for first in range(0, keys, 128):
            ops = [
                pb.RequestOp(request_put=pb.PutRequest(key=b"/range/%06d" % i, value=VALUE))
                for i in range(first, min(keys, first + 128))
            ]
            await kv.Txn(pb.TxnRequest(success=ops))
        latencies = []
        for _ in range(repeats):
            start = time.perf_counter()
            r = await kv.Range(pb.RangeRequest(key=b"/range/", range_end=b"/range0"))
            latencies.append(time.perf_counter() - start)
            assert len(r.kvs) == keys
    return {"range_10k_p50_ms": percentile(latencies, 0.5) * 1000}


def sqlite_commit_rate(data_dir: Path, seconds: float) -> float:
    """Single-row transactions per second with WAL + synchronous=FULL (fsync per commit)."""
    db = sqlite3.connect(data_dir / "raw.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
    n, deadline = 0, time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        db.execute("BEGIN")
        db.execute("INSERT INTO t (v) VALUES (?)", (VALUE,))
        db.execute("COMMIT")
        n += 1
    rate = n / (time.perf_counter() - began)
    db.close()
    return rate


def measure_server(server, seconds: float, *, extras: bool, single: bool = True) -> dict:
    with server as address:
        asyncio.run(put_load(address, 32, 0.5))  # warm-up: connections, SQLite cache and WAL
        result = {}
        if single:
            result["c1"] = asyncio.run(put_load(address, 1, seconds))
        result["c32"] = asyncio.run(put_load(address, 32, seconds))
        if extras:
            result.update(asyncio.run(watch_latency(address, 200 if seconds < 3 else 1000)))
            result.update(asyncio.run(range_latency(address, 10_000, 5 if seconds < 3 else 20)))
    return result


def run(quick: bool) -> dict:
    """Run every measurement; returns the figures (quick: about half a minute)."""
    seconds = 2.0 if quick else 8.0
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        tmp_path = Path(tmp)
        for name in ("sqlite", "ours", "ours-nogc", "etcd"):
            (tmp_path / name).mkdir()
        results: dict = {"quick": quick, "seconds_per_run": seconds}
        results["sqlite_commits_per_s"] = sqlite_commit_rate(tmp_path / "sqlite", min(seconds, 2.0))
        results["ours"] = measure_server(ours(tmp_path / "ours"), seconds, extras=True)
        results["ours_no_group_commit"] = measure_server(
            ours(tmp_path / "ours-nogc", group_commit=False), seconds, extras=False
        )
        if Path(ETCD).exists():
            results["etcd"] = measure_server(etcd(tmp_path / "etcd"), seconds, extras=True)
    ours_32 = results["ours"]["c32"]
    ratios = {
        "group_commit_gain_32": ours_32["puts_per_s"] / results["ours_no_group_commit"]["c32"]["puts_per_s"],
        "p99_put_ms": ours_32["p99_ms"],
    }
    if "etcd" in results:
        ratios["puts_32_vs_etcd"] = ours_32["puts_per_s"] / results["etcd"]["c32"]["puts_per_s"]
        ratios["puts_1_vs_etcd"] = results["ours"]["c1"]["puts_per_s"] / results["etcd"]["c1"]["puts_per_s"]
    results["ratios"] = ratios
    return results


def report(results: dict) -> str:
    rows = [("", "puts/s 1c", "p50 ms", "p99 ms", "puts/s 32c", "p50 ms", "p99 ms", "watch p99", "range 10k")]
    for name, label in (
        ("ours", "protokube"),
        ("ours_no_group_commit", "protokube, no group commit"),
        ("etcd", "etcd"),
    ):
        r = results.get(name)
        if r is None:
            continue
        c1, c32 = r.get("c1", {}), r["c32"]
        rows.append(
            (
                label,
                f"{c1.get('puts_per_s', float('nan')):.0f}",
                f"{c1.get('p50_ms', float('nan')):.2f}",
                f"{c1.get('p99_ms', float('nan')):.2f}",
                f"{c32['puts_per_s']:.0f}",
                f"{c32['p50_ms']:.2f}",
                f"{c32['p99_ms']:.2f}",
                f"{r['watch_p99_ms']:.2f} ms" if "watch_p99_ms" in r else "-",
                f"{r['range_10k_p50_ms']:.1f} ms" if "range_10k_p50_ms" in r else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    lines.append("")
    lines.append(f"SQLite single-row fsync'd commits/s on this disk: {results['sqlite_commits_per_s']:.0f}")
    ratios = results["ratios"]
    checks = [
        ("puts_32_vs_etcd", "ours/etcd puts/s at 32 clients", "x", ">="),
        ("group_commit_gain_32", "group commit on/off at 32 clients", "x", ">="),
        ("p99_put_ms", "p99 put latency at 32 clients", " ms", "<"),
    ]
    for key, label, unit, op in checks:
        if key not in ratios:
            lines.append(f"{label}: not measured (etcd missing)")
            continue
        value, goal = ratios[key], GOALS[key]
        met = value >= goal if op == ">=" else value < goal
        lines.append(f"{label}: {value:.2f}{unit} (goal {op} {goal:g}{unit}) {'met' if met else 'NOT MET'}")
    if "puts_1_vs_etcd" in ratios:
        lines.append(f"ours/etcd puts/s with 1 client: {ratios['puts_1_vs_etcd']:.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (< 40 s in all)")
    args = parser.parse_args(argv)
    print(report(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
