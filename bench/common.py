"""What every benchmark section shares: ports, servers as subprocesses, /proc readings, statistics, the report row.

Every server is a subprocess in its own session on a loopback port, killed (its whole process group) when
the ``with`` block ends; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path

import grpc

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "bench" / "results"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
GRPC_OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- statistics ------------------------------------------------------------------------------
def percentile(samples: Sequence[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def quantiles(samples: Sequence[float], points: int = 201) -> list[float]:
    """``points`` evenly spaced quantiles (0 to 1) of the samples: a compact latency distribution for charts."""
    if not samples:
        return []
    ordered = sorted(samples)
    last = len(ordered) - 1
    return [ordered[round(i * last / (points - 1))] for i in range(points)]


def latency_summary(seconds: Sequence[float], elapsed: float) -> dict:
    """Rate, p50/p99 (ms) and the distribution (ms) of request latencies measured over ``elapsed`` seconds."""
    return {
        "count": len(seconds),
        "per_s": len(seconds) / elapsed if elapsed > 0 else float("nan"),
        "p50_ms": percentile(seconds, 0.50) * 1000,
        "p99_ms": percentile(seconds, 0.99) * 1000,
        "max_ms": max(seconds, default=float("nan")) * 1000,
        "cdf_ms": [s * 1000 for s in quantiles(seconds)],
    }


# --- /proc ---------------------------------------------------------------------------------
def rss_bytes(pid: int) -> int:
    """Resident set size of one process (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (all its threads), in seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine() -> dict:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": sys.version.split()[0],
        "kernel": os.uname().release,
    }


# --- processes -------------------------------------------------------------------------------
def stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group, SIGKILL it if it lingers."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
    except ProcessLookupError:
        pass


@contextmanager
def grpc_server(argv: list[str], address: str, timeout: float = 20.0) -> Iterator[str]:
    """Run an etcd-API server subprocess until it answers Maintenance.Status; kill it afterwards."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        asyncio.run(wait_grpc_ready(address, proc, timeout))
        yield address
    finally:
        stop(proc)


async def wait_grpc_ready(address: str, proc: subprocess.Popen, timeout: float) -> None:
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


def storage_server(data_dir: Path, *, group_commit: bool = True):
    """protokube's storage service alone (no compaction), as a context manager yielding its address."""
    address = f"127.0.0.1:{free_port()}"
    argv = [sys.executable, "-m", "protokube", "storage", "--listen", address, "--data-dir", str(data_dir)]
    argv += ["--compaction-retention", "0"]
    if not group_commit:
        argv.append("--no-group-commit")
    return grpc_server(argv, address)


@dataclass
class Gateway:
    """A running ``protokube serve``: its URL, its pid (the gateway process, not its storage child)."""

    url: str
    host: str
    port: int
    storage: str
    pid: int
    started: float  # time.perf_counter() when the process was started
    secure_port: int = 0  # the HTTPS port (certificates in the data dir's pki/)


@contextmanager
def gateway(data_dir: Path, *args: str, timeout: float = 120.0) -> Iterator[Gateway]:
    """``python -m protokube serve`` until its "serving on" line; killed afterwards. The benchmarks talk
    to its plain-HTTP port (--insecure-listen); its HTTPS port is on another free port.

    ``timeout`` is long enough for a gateway whose watch cache loads 100,000 objects before it serves.
    """
    port, secure_port = free_port(), free_port()
    started = time.perf_counter()
    argv = [sys.executable, "-m", "protokube", "serve", "--listen", f"127.0.0.1:{secure_port}"]
    argv += ["--insecure-listen", f"127.0.0.1:{port}", "--data-dir", str(data_dir)]
    proc = subprocess.Popen(
        [*argv, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    ready = threading.Event()
    found: dict[str, str] = {}
    log: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if len(log) < 200:
                log.append(line)
            match = re.search(r"serving on \S+ \(storage (\S+)\)", line)
            if match:
                found["storage"] = match.group(1)
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout
        while not ready.wait(0.05):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("gateway did not start:\n" + "".join(log))
        gw = Gateway(f"http://127.0.0.1:{port}", "127.0.0.1", port, found["storage"], proc.pid, started, secure_port)
        # The line comes just before the HTTP server serves: wait until it answers.
        wait_for(lambda: _healthy(gw), max(deadline - time.monotonic(), 5), "the gateway to answer")
        yield gw
    finally:
        stop(proc)


def request(
    gw: Gateway, method: str, path: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 60
) -> tuple[int, bytes]:
    """One request on a fresh connection, for setting things up (never for measuring)."""
    conn = HTTPConnection(gw.host, gw.port, timeout=timeout)
    try:
        hdrs = dict(headers or {})
        if body is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _healthy(gw: Gateway) -> bool:
    try:
        return request(gw, "GET", "/healthz", timeout=2)[0] == 200
    except OSError:
        return False


def wait_for(check, timeout: float, what: str, interval: float = 0.05):
    """Poll ``check()`` until it returns something truthy; RuntimeError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(interval)


def run_json(argv: list[str], timeout: float) -> dict:
    """Run a helper process (e.g. ``python -m bench.loadgen``) that prints one JSON document."""
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def loadgen(mode: str, config: dict, timeout: float) -> dict:
    """Run one load of ``bench.loadgen`` in its own process; returns its JSON result."""
    return run_json([sys.executable, "-m", "bench.loadgen", mode, json.dumps(config)], timeout)


def best_rounds(rounds: int, targets: Sequence[str], measure: Callable[[str], dict]) -> dict[str, dict]:
    """Each target's best of ``rounds`` measurements (by ``per_s``), the targets alternating so that a
    drift of the machine hits all alike (a shared machine's noise only ever slows a run down)."""
    best: dict[str, dict] = {}
    for _ in range(rounds):
        for target in targets:
            r = measure(target)
            if target not in best or r["per_s"] > best[target]["per_s"]:
                best[target] = r
        time.sleep(0.2)
    return best


# --- the report --------------------------------------------------------------------------
@dataclass
class Row:
    """One figure of the report: its value, the limit it is compared with, the ratio, the goal."""

    section: str
    figure: str
    value: str
    limit: str = ""
    ratio: float | None = None
    goal: str = ""
    met: bool | None = None


def at_least(ratio: float, goal: float) -> tuple[str, bool]:
    return f">= {goal:g}", ratio >= goal


def at_most(ratio: float, goal: float) -> tuple[str, bool]:
    return f"<= {goal:g}", ratio <= goal


def ratio_row(section: str, figure: str, value: str, limit: str, ratio: float, check=None, goal: float = 0) -> Row:
    """A row with a ratio and, when ``check`` (at_least / at_most) is given, a goal on that ratio."""
    if check is None:
        return Row(section, figure, value, limit, ratio)
    text, met = check(ratio, goal)
    return Row(section, figure, value, limit, ratio, text, met)


def clients(n: int | str) -> str:
    return f"{n} client" if str(n) == "1" else f"{n} clients"


def fmt_rate(per_s: float) -> str:
    return f"{per_s:,.0f}/s"


def fmt_ms(ms: float) -> str:
    return f"{ms:,.1f} ms" if ms >= 10 else f"{ms:.2f} ms"


def fmt_bytes(n: float) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):,.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):,.1f} KiB"
    return f"{n:,.0f} B"


HEADER = ("section", "figure", "value", "limit (compared with)", "ratio", "goal", "met")


def _cells(r: Row) -> tuple[str, ...]:
    met = "—" if r.met is None else ("yes" if r.met else "NO")
    return (r.section, r.figure, r.value, r.limit, "" if r.ratio is None else f"{r.ratio:.2f}", r.goal, met)


def markdown_table(rows: Sequence[Row]) -> str:
    """The same rows as a Markdown table (for the README's Performance section)."""
    lines = ["| " + " | ".join(HEADER) + " |", "| --- | --- | ---: | --- | ---: | --- | --- |"]
    lines += ["| " + " | ".join(c.strip().replace("|", "\\|") for c in _cells(r)) + " |" for r in rows]
    return "\n".join(lines)


def table(rows: Sequence[Row]) -> str:
    header = HEADER
    cells = [header] + [_cells(r) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    right = {2, 4}
    lines = []
    for n, row in enumerate(cells):
        pairs = enumerate(zip(row, widths, strict=True))
        parts = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in pairs]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
