"""Storage benchmark: our etcd-compatible service against a real etcd and against its own floor, a
no-op gRPC handler, with the same Python load client.

    python -m bench.storage [--quick]
    python -m bench.storage --serve-noop HOST:PORT    # the no-op gRPC server alone

Measures durable puts/s (1 and 32 concurrent clients), put latency and the CPU each put costs the
serving process; the same for the no-op server (a grpc.aio server configured as ours, on uvloop as
ours, whose KV.Put handler returns an empty PutResponse: the ceiling of the gRPC layer in Python);
group commit on/off, the raw rate of single-row fsync'd SQLite commits on this disk (the ceiling
without group commit), watch event delivery latency, and the latency of a Range over 10,000 keys.
The 32-client loads run in alternating rounds (ours, the no-op, etcd; each its best round), so that a
drift of the shared machine hits all alike. Every server runs as a subprocess on a free loopback port
with a temporary data dir and is killed afterwards; every loop is bounded in time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import uvloop

from bench.common import (
    Row,
    at_least,
    at_most,
    best_rounds,
    clients,
    cpu_seconds,
    fmt_ms,
    fmt_rate,
    free_port,
    grpc_server,
    percentile,
    quantiles,
    ratio_row,
    storage_server,
)
from protokube import heap
from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc
from protokube.server.app import StorageOptions, grpc_options

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
VALUE = b"v" * 256
GOALS = {
    "puts_32_vs_etcd": 0.5,  # ours >= 50% of etcd's puts/s at 32 clients
    "puts_32_vs_noop": 0.8,  # ours >= 80% of a no-op gRPC handler's calls/s at 32 clients
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


def noop():
    """The no-op gRPC server (``--serve-noop``) as a subprocess, like the others."""
    address = f"127.0.0.1:{free_port()}"
    return grpc_server([sys.executable, "-m", "bench.storage", "--serve-noop", address], address)


async def serve_noop(listen: str) -> None:
    """A grpc.aio server with the storage service's options and garbage collector settings whose KV.Put
    returns an empty PutResponse (the request parsed, as every handler's is); Maintenance.Status answers
    too, for the readiness check."""

    async def empty(request, context) -> bytes:
        return b""

    def method(request_cls) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            empty, request_deserializer=request_cls.FromString, response_serializer=bytes
        )

    server = grpc.aio.server(options=grpc_options(StorageOptions().max_request_bytes))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler("etcdserverpb.KV", {"Put": method(pb.PutRequest)}),
            grpc.method_handlers_generic_handler("etcdserverpb.Maintenance", {"Status": method(pb.StatusRequest)}),
        )
    )
    server.add_insecure_port(listen)
    await server.start()
    heap.settle()  # as the storage service does once started
    await server.wait_for_termination()


@dataclass(frozen=True)
class Target:
    """A running server under measurement: where it listens, and its process (whose CPU is read)."""

    address: str
    pid: int


def _children() -> set[int]:
    """This process's child processes (listed by the thread that started them)."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(FileNotFoundError):  # a thread that has ended
            found.update(int(pid) for pid in Path(f"/proc/self/task/{task}/children").read_text().split())
    return found


@contextlib.contextmanager
def measured(server: contextlib.AbstractContextManager[str]) -> Iterator[Target]:
    """Start a server (a context manager yielding its address) and find its process: the one new child."""
    before = _children()
    with server as address:
        (pid,) = _children() - before
        yield Target(address, pid)


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


def load(target: Target, clients: int, seconds: float) -> dict:
    """put_load, with the CPU (user + system, all threads) the server spent per put."""
    cpu = cpu_seconds(target.pid)
    result = asyncio.run(put_load(target.address, clients, seconds))
    puts = result["puts_per_s"] * seconds
    result["cpu_us_per_put"] = (cpu_seconds(target.pid) - cpu) / puts * 1e6 if puts else float("nan")
    result["per_s"] = result["puts_per_s"]  # what best_rounds compares
    return result


def extras(address: str, seconds: float) -> dict:
    """Watch delivery and range latencies."""
    return {
        **asyncio.run(watch_latency(address, 200 if seconds < 3 else 1000)),
        **asyncio.run(range_latency(address, 10_000, 5 if seconds < 3 else 20)),
    }


def run(quick: bool) -> dict:
    """Run every measurement; returns the figures (quick: about 40 seconds)."""
    seconds, rounds = (2.0, 3) if quick else (8.0, 3)
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp, contextlib.ExitStack() as servers:
        tmp_path = Path(tmp)
        for name in ("sqlite", "ours", "ours-nogc", "etcd"):
            (tmp_path / name).mkdir()
        results: dict = {"quick": quick, "seconds_per_run": seconds}
        results["sqlite_commits_per_s"] = sqlite_commit_rate(tmp_path / "sqlite", min(seconds, 2.0))
        targets = {"ours": servers.enter_context(measured(ours(tmp_path / "ours")))}
        targets["noop"] = servers.enter_context(measured(noop()))
        if Path(ETCD).exists():
            targets["etcd"] = servers.enter_context(measured(etcd(tmp_path / "etcd")))
        for name, target in targets.items():
            load(target, 32, 0.5)  # warm-up: connections, SQLite cache and WAL
            results[name] = {"c1": load(target, 1, seconds)}
        for name, best in best_rounds(rounds, list(targets), lambda name: load(targets[name], 32, seconds)).items():
            results[name]["c32"] = best
        for name in ("ours", "etcd"):
            if name in targets:
                results[name].update(extras(targets[name].address, seconds))
        with measured(ours(tmp_path / "ours-nogc", group_commit=False)) as target:
            load(target, 32, 0.5)
            results["ours_no_group_commit"] = {"c32": load(target, 32, seconds)}
    ours_r = results["ours"]
    ratios = {
        "group_commit_gain_32": ours_r["c32"]["puts_per_s"] / results["ours_no_group_commit"]["c32"]["puts_per_s"],
        "p99_put_ms": ours_r["c32"]["p99_ms"],
        "puts_32_vs_noop": ours_r["c32"]["puts_per_s"] / results["noop"]["c32"]["puts_per_s"],
        "cpu_32_vs_noop": ours_r["c32"]["cpu_us_per_put"] / results["noop"]["c32"]["cpu_us_per_put"],
    }
    if "etcd" in results:
        ratios["puts_32_vs_etcd"] = ours_r["c32"]["puts_per_s"] / results["etcd"]["c32"]["puts_per_s"]
        ratios["puts_1_vs_etcd"] = ours_r["c1"]["puts_per_s"] / results["etcd"]["c1"]["puts_per_s"]
    results["ratios"] = ratios
    return results


def _cell(r: dict, key: str, spec: str, unit: str = "") -> str:
    return format(r[key], spec) + unit if key in r else "-"


def report(results: dict) -> str:
    header = ("", "puts/s 1c", "CPU/put", "p50 ms", "p99 ms", "puts/s 32c", "CPU/put", "p50 ms", "p99 ms")
    lines_of = [(*header, "watch p99", "range 1", "range 10k")]
    for name, label in (
        ("ours", "protokube"),
        ("noop", "no-op gRPC handler"),
        ("ours_no_group_commit", "protokube, no group commit"),
        ("etcd", "etcd"),
    ):
        r = results.get(name)
        if r is None:
            continue
        cells = [label]
        for load in (r.get("c1", {}), r["c32"]):
            cells += [_cell(load, "puts_per_s", ".0f"), _cell(load, "cpu_us_per_put", ".0f", " us")]
            cells += [_cell(load, "p50_ms", ".2f"), _cell(load, "p99_ms", ".2f")]
        cells += [_cell(r, "watch_p99_ms", ".2f", " ms"), _cell(r, "range_1_p50_ms", ".3f", " ms")]
        cells.append(_cell(r, "range_10k_p50_ms", ".1f", " ms"))
        lines_of.append(tuple(cells))
    widths = [max(len(row[i]) for row in lines_of) for i in range(len(lines_of[0]))]
    lines = [
        "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in lines_of
    ]
    lines.append("")
    lines.append(f"SQLite single-row fsync'd commits/s on this disk: {results['sqlite_commits_per_s']:.0f}")
    ratios = results["ratios"]
    checks = [
        ("puts_32_vs_noop", "ours/no-op gRPC handler calls/s at 32 clients", "x", ">="),
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
    lines.append(f"ours/no-op CPU per call at 32 clients: {ratios['cpu_32_vs_noop']:.2f}x")
    if "puts_1_vs_etcd" in ratios:
        lines.append(f"ours/etcd puts/s with 1 client: {ratios['puts_1_vs_etcd']:.2f}x")
    return "\n".join(lines)


def _cpu(us: float) -> str:
    return f"{us:,.0f} µs"


def rows(results: dict) -> list[Row]:
    """The storage figures for the suite's table: ours against the no-op gRPC handler and etcd, measured in
    the same run."""
    ours_r, noop_r, etcd_r = results["ours"], results["noop"], results.get("etcd")
    out = []
    for load in ("c1", "c32"):
        n = clients(load[1:])
        mine, floor = ours_r[load], noop_r[load]
        goal = (at_least, GOALS["puts_32_vs_noop"]) if load == "c32" else ()
        out.append(
            ratio_row(
                "storage",
                f"durable puts/s, {n}",
                fmt_rate(mine["puts_per_s"]),
                f"no-op gRPC handler {fmt_rate(floor['puts_per_s'])}",
                mine["puts_per_s"] / floor["puts_per_s"],
                *goal,
            )
        )
        out.append(
            ratio_row(
                "storage",
                f"storage CPU per put, {n}",
                _cpu(mine["cpu_us_per_put"]),
                f"no-op gRPC handler {_cpu(floor['cpu_us_per_put'])}",
                mine["cpu_us_per_put"] / floor["cpu_us_per_put"],
            )
        )
        if etcd_r is None:
            continue
        theirs = etcd_r[load]
        goal = (at_least, GOALS["puts_32_vs_etcd"]) if load == "c32" else ()
        out.append(
            ratio_row(
                "storage",
                f"durable puts/s, {n}",
                fmt_rate(mine["puts_per_s"]),
                f"etcd {fmt_rate(theirs['puts_per_s'])}",
                mine["puts_per_s"] / theirs["puts_per_s"],
                *goal,
            )
        )
        out.append(
            ratio_row(
                "storage",
                f"storage CPU per put, {n}",
                _cpu(mine["cpu_us_per_put"]),
                f"etcd {_cpu(theirs['cpu_us_per_put'])}",
                mine["cpu_us_per_put"] / theirs["cpu_us_per_put"],
            )
        )
        out.append(
            ratio_row(
                "storage",
                f"put p99, {n}",
                fmt_ms(mine["p99_ms"]),
                f"etcd {fmt_ms(theirs['p99_ms'])}",
                mine["p99_ms"] / theirs["p99_ms"],
            )
        )
    if etcd_r is None:
        out.append(Row("storage", "etcd", "not installed (Debian etcd-server)"))
    else:
        for key, label in (
            ("range_1_p50_ms", "range of 1 key, p50"),
            ("range_10k_p50_ms", "range of 10,000 keys, p50"),
        ):
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
    parser.add_argument("--quick", action="store_true", help="short runs (about 40 s in all)")
    parser.add_argument("--serve-noop", metavar="HOST:PORT", help="serve the no-op gRPC handler here, nothing else")
    args = parser.parse_args(argv)
    if args.serve_noop:
        uvloop.run(serve_noop(args.serve_noop))  # the storage service's event loop
        return 0
    print(report(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
