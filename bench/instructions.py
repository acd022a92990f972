"""Instructions per request of a gateway process, counted by callgrind (``make instructions``).

On a shared machine the timed figures move by tens of percent from one minute to the next; the
instructions a request costs do not, so this is how a change to the request path is judged before the
benches confirm it. A gateway runs under valgrind's callgrind with counting off, beside a storage
service keeping its data in memory. After a warm-up, N1 and then N2 requests are counted (callgrind_control
zeroes the counters, switches counting on and off, and dumps them), and the figure is
(I(N2) - I(N1)) / (N2 - N1), which cancels what a measurement itself costs once.

Callgrind slows the process about fifty times, so the gateway's periodic work (APF's sampling, the
loop's histograms) counts for more per request than it costs at full speed, and more on a busy machine.
The count under the ASGI application (``ApiASGI.__call__``, the same difference) leaves that work out and
is printed beside; it is the steadier of the two (it is only there when the gateway is compiled).

    python -m bench.instructions [create] [get] [--n1 100] [--n2 200]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from http.client import HTTPConnection
from pathlib import Path

from bench.common import ROOT, free_port, grpc_server

WARM_UP = 50
READY_TIMEOUT = 600.0  # seconds: a gateway starts some fifty times slower under callgrind
ASGI_APPLICATION = re.compile(r"^\s*([\d,]+) .*CPyDef_asgi_____call___3_ApiASGI_gen_____mypyc_generator_helper__ ")
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
KINDS = ("create", "get")


def configmap(name: str) -> bytes:
    return json.dumps({"metadata": {"name": name}, "data": {"a": "b" * 100}}).encode()


class Client:
    """The requests counted: creates of new configmaps, or GETs of one from the watch cache."""

    def __init__(self, port: int) -> None:
        self.conn = HTTPConnection("127.0.0.1", port, timeout=120)
        self.created = 0

    def ready(self) -> bool:
        try:
            self.conn.request("GET", "/readyz")
            response = self.conn.getresponse()
            response.read()
            return response.status == 200
        except OSError:
            self.conn.close()
            return False

    def call(self, method: str, path: str, body: bytes | None, expected: int) -> None:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, path, body, headers)
        response = self.conn.getresponse()
        response.read()
        if response.status != expected:
            raise RuntimeError(f"{method} {path}: {response.status}, expected {expected}")

    def create(self) -> None:
        self.created += 1
        self.call("POST", CONFIGMAPS, configmap(f"counted-{self.created}"), 201)

    def get(self) -> None:
        self.call("GET", f"{CONFIGMAPS}/target?resourceVersion=0", None, 200)


class Counted:
    """A gateway under callgrind, counting only between ``start`` and ``dump``."""

    def __init__(self, storage: str, data_dir: Path) -> None:
        self.port = free_port()
        data_dir.mkdir(parents=True)
        self.out = data_dir / "callgrind.out"
        argv = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}",
            sys.executable, "-m", "protokube", "gateway", "--storage", storage, "--data-dir", str(data_dir),
            "--insecure-listen", f"127.0.0.1:{self.port}", "--listen", f"127.0.0.1:{free_port()}",
        ]  # fmt: skip
        self.log = (data_dir / "gateway.log").open("w")
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def control(self, *args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(self.proc.pid)], capture_output=True, timeout=120, check=True)

    def counted(self, requests: int, one: Callable[[], None]) -> tuple[int, int]:
        """Instructions of ``requests`` calls of ``one``: the whole process's, and under the ASGI application."""
        before = set(self.out.parent.glob(self.out.name + "*"))
        self.control("-z")
        self.control("-i", "on")
        for _ in range(requests):
            one()
        self.control("-i", "off")
        self.control("-d")
        deadline = time.monotonic() + 60
        while not (dumps := set(self.out.parent.glob(self.out.name + "*")) - before):
            if time.monotonic() > deadline:
                raise RuntimeError("callgrind wrote no dump")
            time.sleep(0.2)
        dump = max(dumps, key=lambda p: p.stat().st_mtime)
        time.sleep(0.5)  # written whole
        with dump.open() as lines:  # its "totals:" line (its "summary:" line says 0 for a dump on demand)
            total = next(int(line.split()[1]) for line in lines if line.startswith("totals:"))
        return total, _under_application(dump)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        self.log.close()


def _under_application(dump: Path) -> int:
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", str(dump)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    for line in annotated.splitlines():
        match = ASGI_APPLICATION.match(line)
        if match:
            return int(match.group(1).replace(",", ""))
    return 0


def measure(kinds: list[str], n1: int, n2: int) -> dict[str, dict[str, int]]:
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as tmp:
        storage_dir = Path(tmp) / "storage"
        argv = [sys.executable, "-m", "protokube", "storage", "--in-memory", "--data-dir", str(storage_dir)]
        address = f"127.0.0.1:{free_port()}"
        with grpc_server([*argv, "--listen", address], address):
            for kind in kinds:
                gateway = Counted(address, Path(tmp) / kind)
                try:
                    client = Client(gateway.port)
                    deadline = time.monotonic() + READY_TIMEOUT
                    while not client.ready():
                        if time.monotonic() > deadline or gateway.proc.poll() is not None:
                            raise RuntimeError(f"the gateway did not become ready (see {gateway.log.name})")
                        time.sleep(1)
                    one = client.create if kind == "create" else client.get
                    if kind == "get":
                        client.call("POST", CONFIGMAPS, configmap("target"), 201)
                        time.sleep(2)  # in the watch cache
                    for _ in range(WARM_UP):
                        one()
                    first, first_app = gateway.counted(n1, one)
                    second, second_app = gateway.counted(n2, one)
                finally:
                    gateway.stop()
                results[kind] = {
                    "process": (second - first) // (n2 - n1),
                    "application": (second_app - first_app) // (n2 - n1),
                    "n1": n1,
                    "n2": n2,
                }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kinds", nargs="*", help="create and/or get (default: both)")
    parser.add_argument("--n1", type=int, default=100)
    parser.add_argument("--n2", type=int, default=200)
    args = parser.parse_args()
    unknown = [kind for kind in args.kinds if kind not in KINDS]
    if unknown:
        parser.error(f"unknown {unknown}: choose from {', '.join(KINDS)}")
    results = measure(args.kinds or list(KINDS), args.n1, args.n2)
    for kind, counted in results.items():
        print(
            f"{kind:7s} {counted['process']:>10,} instructions a request (gateway process)"
            f"  {counted['application']:>10,} under the ASGI application"
        )


if __name__ == "__main__":
    main()
