"""make anchor-bench: kube-apiserver + etcd against protokube (embedded storage) on the same machine in
the same run, with each server process's CPU seconds per load.

Loads, the same for both, over HTTPS with the admin certificate (kube-apiserver serves nothing else):
creates of pods at 32 clients (which fill the namespace with ``--pods`` pods) and of ConfigMaps at one
client; GETs of one pod from the watch cache (resourceVersion=0) and most recent, at 1 and 32 clients
(bench.loadgen's gets); LISTs of every pod as JSON and as protobuf (the median of 3). protokube runs
without its controllers, as kube-apiserver runs without kube-controller-manager.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from anchor import launch
from anchor.differential.__main__ import PROTOKUBE_ARGS
from bench.common import cpu_seconds, gateway, latency_summary, loadgen
from bench.pods import pod_dict
from protokube.gateway.security import certs

NS = "bench"
PODS = f"/api/v1/namespaces/{NS}/pods"
PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True, slots=True)
class Server:
    """A server under load: its URL, TLS files and the pids whose CPU is its cost."""

    label: str
    url: str
    pki: certs.TLSFiles
    pids: dict[str, int]

    def client(self) -> httpx.Client:
        return launch.admin_client(self.url, self.pki)

    def cpu(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids.items()}


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def measured(server: Server, load: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A load's own figures with each server process's CPU seconds spent during it."""
    before = server.cpu()
    result = load()
    after = server.cpu()
    return {**result, "cpu_s": {name: round(after[name] - before[name], 2) for name in before}}


def creates(server: Server, paths_and_bodies: list[tuple[str, dict[str, Any]]], clients: int) -> dict[str, Any]:
    """POST each body over ``clients`` connections (one httpx client per thread): rate and latency."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    local = threading.local()

    def one(item: tuple[str, dict[str, Any]]) -> None:
        nonlocal errors
        if not hasattr(local, "client"):
            local.client = server.client()
        started = time.perf_counter()
        status = local.client.post(item[0], json=item[1]).status_code
        with lock:
            latencies.append(time.perf_counter() - started)
            errors += status != 201

    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, paths_and_bodies))
    summary = latency_summary(latencies, time.perf_counter() - began)
    return {k: round(v, 2) for k, v in summary.items() if k != "cdf_ms"} | {"errors": errors}


def gets(server: Server, path: str, clients: int, seconds: float) -> dict[str, Any]:
    host, port = server.url.removeprefix("https://").split(":")
    tls = {"ca": str(server.pki.ca.cert), "cert": str(server.pki.admin.cert), "key": str(server.pki.admin.key)}
    config = {"host": host, "port": int(port), "path": path, "clients": clients, "seconds": seconds, "tls": tls}
    result = loadgen("gets", config, timeout=seconds + 60)
    return {k: round(v, 2) for k, v in result.items() if k != "cdf_ms"}


def lists(server: Server, accept: str, repeats: int = 3) -> dict[str, Any]:
    times, size = [], 0
    with server.client() as client:
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(PODS, headers={"Accept": accept})
            times.append(time.perf_counter() - started)
            response.raise_for_status()
            size = len(response.content)
    return {"median_ms": round(sorted(times)[len(times) // 2] * 1000, 1), "bytes": size}


def run_loads(server: Server, pods: int, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with server.client() as client:
        client.post("/api/v1/namespaces", json={"metadata": {"name": NS}}).raise_for_status()
        client.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "default"}})
    pod_bodies = [(PODS, pod_dict(i, NS)) for i in range(pods)]
    for body in pod_bodies:
        body[1].pop("status", None)
        body[1]["metadata"].pop("ownerReferences", None)
    out["create pods, 32 clients"] = measured(server, lambda: creates(server, pod_bodies, 32))
    configmaps = [(f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": f"c{i}"}}) for i in range(300)]
    out["create configmaps, 1 client"] = measured(server, lambda: creates(server, configmaps, 1))
    one = f"{PODS}/{pod_bodies[0][1]['metadata']['name']}"
    for clients in (1, 32):
        out[f"GET cached, {clients} clients"] = measured(
            server, lambda c=clients: gets(server, f"{one}?resourceVersion=0", c, seconds)
        )
        out[f"GET most recent, {clients} clients"] = measured(server, lambda c=clients: gets(server, one, c, seconds))
    out["LIST pods, JSON"] = measured(server, lambda: lists(server, "application/json"))
    out["LIST pods, protobuf"] = measured(server, lambda: lists(server, PROTOBUF))
    return out


@contextmanager
def servers(tmp: Path) -> Iterator[tuple[Server, Server]]:
    with launch.anchor(tmp / "kube") as kube, gateway(tmp / "protokube", *PROTOKUBE_ARGS) as ours:
        storage = [pid for pid in _children(ours.pid) if pid != ours.pid]
        yield (
            Server(
                "kube-apiserver+etcd",
                kube.url,
                kube.pki,
                {"kube-apiserver": kube.apiserver_pid, "etcd": kube.etcd_pid},
            ),
            Server(
                "protokube",
                f"https://127.0.0.1:{ours.secure_port}",
                certs.ensure(tmp / "protokube" / "pki"),
                {"gateway": ours.pid} | {f"storage {pid}": pid for pid in storage},
            ),
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anchor.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=5.0, help="of each GET load")
    parser.add_argument("--results", type=Path, default=launch.ROOT / ".cache" / "anchor" / "bench.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="anchor-bench-") as tmp, servers(Path(tmp)) as both:
        results = {server.label: run_loads(server, args.pods, args.seconds) for server in both}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=1))
    theirs, ours = results.values()
    print(f"{'load':34} {'kube-apiserver+etcd':>40}  {'protokube':>40}")
    for load in theirs:
        print(f"{load:34} {_cell(theirs[load]):>40}  {_cell(ours[load]):>40}")
    print(f"results: {args.results}")
    return 0


def _cell(result: dict[str, Any]) -> str:
    cpu = sum(result["cpu_s"].values())
    if "per_s" in result:
        return f"{result['per_s']:.0f}/s p50 {result['p50_ms']:.1f} ms, CPU {cpu:.1f} s"
    return f"{result['median_ms']:.0f} ms ({result['bytes'] / 1e6:.1f} MB), CPU {cpu:.1f} s"


if __name__ == "__main__":
    sys.exit(main())
