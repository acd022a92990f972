"""make anchor-bench: kube-apiserver + etcd against protokube (embedded storage) and protokube on an etcd
of its own (the same etcd binary, a fresh data dir) on the same machine in the same run, with each server
process's CPU seconds per load: the third column separates the storage's cost from the API layer's.

Loads, the same for both, over HTTPS with the admin certificate (kube-apiserver serves nothing else):
creates of pods at 32 clients (which fill the namespace with ``--pods`` pods) and of ConfigMaps at one
client; GETs of one pod from the watch cache (resourceVersion=0) and most recent, at 1 and 32 clients
(bench.loadgen's gets); LISTs of every pod as JSON and as protobuf (the median of 3); ``--watchers``
watches of one ConfigMap while it is updated ``--watch-rate`` times a second (anchor.watchers). protokube
runs without its controllers, as kube-apiserver runs without kube-controller-manager. Each load records
the load average at its start; the report gives each server's CPU per request (per delivered event for
watches) and protokube's / kube-apiserver's ratio of it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anchor import launch, report, watchers
from anchor.differential.__main__ import PROTOKUBE_ARGS
from anchor.launch import Server
from bench.common import Gateway, gateway, latency_summary, loadgen
from bench.pods import pod_dict
from protokube.gateway.security import certs

NS = "bench"
PODS = f"/api/v1/namespaces/{NS}/pods"
PROTOBUF = "application/vnd.kubernetes.protobuf"
KUBE = report.KUBE


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def measured(server: Server, load: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A load's own figures with each server process's CPU seconds spent during it (unless the load
    measured its own window) and the load average (1, 5, 15 min) at its start."""
    load_avg = [round(x, 2) for x in os.getloadavg()]
    before = server.cpu()
    result = load()
    after = server.cpu()
    return {"cpu_s": {name: round(after[name] - before[name], 2) for name in before}, **result, "load_avg": load_avg}


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
    host, port = server.address()
    config = {"host": host, "port": port, "path": path, "clients": clients, "seconds": seconds}
    config["tls"] = server.tls_files()
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
    return {"count": repeats, "median_ms": round(sorted(times)[len(times) // 2] * 1000, 1), "bytes": size}


def run_loads(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """Every load against one server, in order; each with its CPU and load average."""
    pods, seconds = args.pods, args.seconds
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
    out[f"{args.watchers} watchers, {args.watch_rate:g} writes/s"] = measured(
        server, lambda: watchers.fanout(server, args.watchers, args.watch_rate, args.watch_seconds)
    )
    return out


def _protokube(label: str, gw: Gateway, data_dir: Path, storage: dict[str, int]) -> Server:
    """A started protokube as a Server: its gateway process, its children and ``storage``'s pids."""
    children = {f"storage {pid}": pid for pid in _children(gw.pid) if pid != gw.pid}
    pki = certs.ensure(data_dir / "pki")
    return Server(label, f"https://127.0.0.1:{gw.secure_port}", pki, {"gateway": gw.pid} | children | storage)


@contextmanager
def servers(tmp: Path, etcd_binary: str | None) -> Iterator[tuple[Server, Server, Server]]:
    """kube-apiserver + etcd, protokube (embedded storage), protokube on an etcd of its own (the
    anchor's binary unless ``etcd_binary``)."""
    on_etcd_label = f"protokube on etcd {launch.etcd_version(etcd_binary)}"
    with (
        launch.anchor(tmp / "kube") as kube,
        gateway(tmp / "protokube", *PROTOKUBE_ARGS) as ours,
        launch.etcd(tmp / "protokube-etcd", etcd_binary) as (etcd_url, etcd_pid),
        gateway(tmp / "protokube-on-etcd", *PROTOKUBE_ARGS, "--storage", etcd_url.removeprefix("http://")) as on_etcd,
    ):
        yield (
            Server(KUBE, kube.url, kube.pki, {"kube-apiserver": kube.apiserver_pid, "etcd": kube.etcd_pid}),
            _protokube("protokube", ours, tmp / "protokube", {}),
            _protokube(on_etcd_label, on_etcd, tmp / "protokube-on-etcd", {"etcd": etcd_pid}),
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anchor.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=5.0, help="of each GET load")
    parser.add_argument("--watchers", type=int, default=1000, help="watch connections of one ConfigMap")
    parser.add_argument("--watch-rate", type=float, default=20.0, help="updates a second while they watch")
    parser.add_argument("--watch-seconds", type=float, default=15.0, help="how long the updates go on")
    parser.add_argument(
        "--protokube-etcd",
        metavar="PATH",
        help="the etcd binary of the protokube-on-etcd column (default: the anchor's, the same as kube-apiserver's)",
    )
    parser.add_argument("--results", type=Path, default=launch.ROOT / ".cache" / "anchor" / "bench.json")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="anchor-bench-") as tmp,
        servers(Path(tmp), args.protokube_etcd) as all_three,
    ):
        results: dict[str, Any] = {server.label: run_loads(server, args) for server in all_three}
    results["ratios"] = report.ratios(results)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=1))
    print(report.table(results))
    print(f"results: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
