"""`protokube serve`: the API server — the HTTP gateway plus its storage.

By default the storage service runs embedded, as a child process on a free loopback port with its
data under --data-dir (its own CPU core: the gateway and storage do not share one Python
interpreter). ``--storage HOST:PORT`` points the gateway at a running storage service or a real
etcd instead.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import uvloop
import yaml

from gateway.app import APIServer, Settings, create_app
from gateway.negotiation.negotiate import Formats
from gateway.server import listen_socket, serve_app
from gateway.storage.etcd import EtcdBackend
from protokube.schema import descriptors
from protokube.schema.registry import build

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / "data"
WATCH_DRAIN_SECONDS = 0.5
log = logging.getLogger("protokube.serve")


def parse_args(argv: list[str], prog: str = "protokube serve") -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT for the HTTP API")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="data directory of embedded storage")
    p.add_argument("--storage", help="HOST:PORT of an etcd-v3 API endpoint instead of embedded storage")
    p.add_argument(
        "--compaction-retention",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="history the embedded storage keeps (etcd's 5 minutes by default)",
    )
    p.add_argument(
        "--watch-cache-window",
        type=int,
        default=10_000,
        metavar="EVENTS",
        help="recent events each watch cache keeps; older watch starts get 410 Gone",
    )
    p.add_argument(
        "--bookmark-interval",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="seconds between periodic watch bookmarks",
    )
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="GATE=BOOL,...",
        help="CBORServingAndStorage=true serves and accepts CBOR (off by default, as in 1.32)",
    )
    p.add_argument("--access-log", action="store_true")
    p.add_argument("--log-level", default="WARNING")
    return p.parse_args(argv)


KNOWN_GATES = {"CBORServingAndStorage": False}


def feature_gates(text: str) -> dict[str, bool]:
    """Parse --feature-gates A=true,B=false (unknown gates and values are errors, as upstream)."""
    gates = dict(KNOWN_GATES)
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        if name not in KNOWN_GATES or value.lower() not in ("true", "false"):
            raise SystemExit(f"protokube serve: invalid feature gate {item!r}; known gates: {', '.join(KNOWN_GATES)}")
        gates[name] = value.lower() == "true"
    return gates


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: receive SIGTERM when the gateway process dies, even by SIGKILL (Linux)."""
    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def start_embedded_storage(data_dir: Path, retention: float) -> tuple[subprocess.Popen[str], str]:
    address = f"127.0.0.1:{_free_port()}"
    command = [
        sys.executable,
        "-m",
        "protokube",
        "storage",
        "--listen",
        address,
        "--data-dir",
        str(data_dir / "storage"),
        "--compaction-retention",
        str(retention),
    ]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, preexec_fn=_die_with_parent)
    assert child.stdout is not None
    line = child.stdout.readline()
    if "listening" not in line:
        child.kill()
        raise RuntimeError(f"embedded storage did not start: {line.strip() or 'no output'}")
    return child, address


def write_kubeconfig(data_dir: Path, listen: str) -> Path:
    """A kubeconfig for this server that kubectl can use as is."""
    path = data_dir / "kubeconfig"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "protokube", "cluster": {"server": f"http://{listen}"}}],
        "contexts": [{"name": "protokube", "context": {"cluster": "protokube", "user": "protokube"}}],
        "users": [{"name": "protokube", "user": {}}],
        "current-context": "protokube",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


async def run(args: argparse.Namespace) -> None:
    child = None
    storage = args.storage
    if storage is None:
        child, storage = start_embedded_storage(args.data_dir, args.compaction_retention)
    backend = EtcdBackend(storage)
    try:
        await backend.wait_ready(10)
        settings = Settings(
            watch_cache_window=args.watch_cache_window,
            bookmark_interval=args.bookmark_interval,
            formats=Formats(cbor=feature_gates(args.feature_gates)["CBORServingAndStorage"]),
        )
        server = APIServer(backend, args.listen, build(descriptors.all_messages()), settings)
        await server.start()
        shutdown = asyncio.Event()

        def stop() -> None:
            server.close_watches()  # watch streams end now (a moment to write their last chunk) ...
            loop.call_later(WATCH_DRAIN_SECONDS, shutdown.set)  # ... then the graceful shutdown of the rest

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        kubeconfig = write_kubeconfig(args.data_dir, args.listen)
        sock = listen_socket(args.listen)
        print(f"protokube serving on http://{args.listen} (storage {storage})", flush=True)
        print(f"export KUBECONFIG={kubeconfig}", flush=True)
        await serve_app(create_app(server), sock, shutdown, access_log=args.access_log)
        await server.stop()
    finally:
        if child is not None:
            child.terminate()
            try:
                child.wait(5)
            except subprocess.TimeoutExpired:
                child.kill()


def gateway_main(argv: list[str]) -> int:
    """`protokube gateway --storage HOST:PORT`: the HTTP gateway alone, against running storage."""
    if not any(a == "--storage" or a.startswith("--storage=") for a in argv):
        print("protokube gateway: --storage HOST:PORT is required (or use protokube serve)", file=sys.stderr)
        return 2
    return main(argv, prog="protokube gateway")


def main(argv: list[str], prog: str = "protokube serve") -> int:
    args = parse_args(argv, prog)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.makedirs(args.data_dir, exist_ok=True)
    try:
        uvloop.run(run(args))  # uvloop: a faster event loop for HTTP and gRPC alike
    except (OSError, RuntimeError) as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 1
    return 0
