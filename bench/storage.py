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
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import grpc
from etcdserverpb import rpc_pb2 as pb
from etcdserverpb import rpc_pb2_grpc

from bench.common import (
    Row,
    at_least,
    at_most,
    clients,
    fmt_ms,
    fmt_rate,
    free_port,
    grpc_server,
    percentile,
    quantiles,
    ratio_row,
    storage_server,
)

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
VALUE = b"v" * 256
GOALS = {
    "puts_32_vs_etcd": 0.5,  # ours >= 50% of etcd's puts/s at 32 clients
    "p99_put_ms": 20.0,  # p99 put latency below 20 ms (32 clients)
    "group_commit_gain_32": 2.0,  # group commit >= 2x one-commit-per-write at 32 clients
}


# --- servers ---------------------------------------------------------------------------------
def ours(data_dir: Path, group_commit: bool = True):
    return storage_server(data_dir, group_commit=group_commit)


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
    return grpc_server(argv, address)


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
        "cdf_ms": [s * 1000 for s in quantiles(latencies)],
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
    """Time a Range over `keys` keys (loaded with 128-put transactions first), and a Range of one of them."""
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
        single = []
        for i in range(repeats * 50):
            start = time.perf_counter()
            r = await kv.Range(pb.RangeRequest(key=b"/range/%06d" % (i * 7919 % keys)))
            single.append(time.perf_counter() - start)
            assert len(r.kvs) == 1
    return {
        "range_10k_p50_ms": percentile(latencies, 0.5) * 1000,
        "range_1_p50_ms": percentile(single, 0.5) * 1000,
        "range_1_p99_ms": percentile(single, 0.99) * 1000,
    }


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
    rows = [
        ("", "puts/s 1c", "p50 ms", "p99 ms", "puts/s 32c", "p50 ms", "p99 ms", "watch p99", "range 1", "range 10k")
    ]
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
                f"{r['range_1_p50_ms']:.3f} ms" if "range_1_p50_ms" in r else "-",
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


def rows(results: dict) -> list[Row]:
    """The storage figures for the suite's table: ours against etcd measured in the same run."""
    ours_r, etcd_r = results["ours"], results.get("etcd")
    out = []
    if etcd_r is None:
        return [Row("storage", "etcd", "not installed (Debian etcd-server)")]
    for load, goal in (("c1", None), ("c32", 0.5)):
        n = load[1:]
        mine, theirs = ours_r[load]["puts_per_s"], etcd_r[load]["puts_per_s"]
        row = ratio_row(
            "storage", f"durable puts/s, {clients(n)}", fmt_rate(mine), f"etcd {fmt_rate(theirs)}", mine / theirs
        )
        if goal is not None:
            row = ratio_row(row.section, row.figure, row.value, row.limit, row.ratio, at_least, goal)
        out.append(row)
        mine, theirs = ours_r[load]["p99_ms"], etcd_r[load]["p99_ms"]
        out.append(
            ratio_row("storage", f"put p99, {clients(n)}", fmt_ms(mine), f"etcd {fmt_ms(theirs)}", mine / theirs)
        )
    for key, label in (("range_1_p50_ms", "range of 1 key, p50"), ("range_10k_p50_ms", "range of 10,000 keys, p50")):
        mine, theirs = ours_r[key], etcd_r[key]
        out.append(ratio_row("storage", label, fmt_ms(mine), f"etcd {fmt_ms(theirs)}", mine / theirs, at_most, 2.0))
    mine, theirs = ours_r["watch_p99_ms"], etcd_r["watch_p99_ms"]
    out.append(ratio_row("storage", "watch delivery p99", fmt_ms(mine), f"etcd {fmt_ms(theirs)}", mine / theirs))
    gain = results["ratios"]["group_commit_gain_32"]
    nogc = results["ours_no_group_commit"]["c32"]["puts_per_s"]
    out.append(
        ratio_row(
            "storage",
            "group commit, puts/s 32 clients",
            fmt_rate(ours_r["c32"]["puts_per_s"]),
            f"no group commit {fmt_rate(nogc)}",
            gain,
        )
    )
    sqlite_rate = results["sqlite_commits_per_s"]
    out.append(
        ratio_row(
            "storage",
            "puts/s 1 client vs raw fsync'd commits",
            fmt_rate(ours_r["c1"]["puts_per_s"]),
            f"SQLite {fmt_rate(sqlite_rate)}",
            ours_r["c1"]["puts_per_s"] / sqlite_rate,
        )
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (< 40 s in all)")
    args = parser.parse_args(argv)
    print(report(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
