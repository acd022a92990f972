"""`protokube storage`: run the etcd-compatible storage service until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

import uvloop

from protokube import heap
from protokube.cliargs import DEFAULT_DATA_DIR, Parser, directory, host_port, is_loopback, lock_data_dir
from protokube.server.app import ServerTLS, StorageOptions, start_storage


def _listen(text: str) -> str:
    return text if text.startswith("unix://") else host_port(text)


def parse_args(argv: list[str]) -> argparse.Namespace:
    defaults = StorageOptions()
    p = Parser("protokube storage", __doc__ or "")
    p.add_argument("--listen", default="127.0.0.1:2379", type=_listen, help="HOST:PORT (port 0: any) or unix://PATH")
    p.add_argument(
        "--data-dir", type=directory, default=str(DEFAULT_DATA_DIR / "storage"), help="directory of the database"
    )
    p.add_argument(
        "--compaction-retention",
        type=float,
        default=defaults.compaction_retention,
        metavar="SECONDS",
        help="history kept by periodic auto-compaction (0: never compact automatically)",
    )
    p.add_argument("--max-request-bytes", type=int, default=defaults.max_request_bytes, metavar="N")
    p.add_argument(
        "--quota-backend-bytes",
        type=int,
        default=defaults.quota_backend_bytes,
        metavar="N",
        help="backend size at which writes fail and the NOSPACE alarm is raised (0: 2 GiB, as etcd)",
    )
    p.add_argument("--in-memory", action="store_true", help="keep the database in memory, lost at exit (tests)")
    p.add_argument("--no-group-commit", action="store_true", help="one SQLite commit per write request (benchmarking)")
    p.add_argument(
        "--progress-notify-interval",
        type=float,
        default=defaults.progress_notify_interval,
        metavar="SECONDS",
        help="interval of progress notifications to watches that ask for them",
    )
    p.add_argument("--watch-ring-size", type=int, default=defaults.watch_ring_size, metavar="EVENTS")
    p.add_argument(
        "--watch-stream-buffer-bytes",
        type=int,
        default=defaults.watch_stream_buffer_bytes,
        metavar="N",
        help="watch responses queued for a client that does not keep up before its watches are paced",
    )
    p.add_argument(
        "--listen-metrics",
        type=host_port,
        metavar="HOST:PORT",
        help="serve Prometheus metrics on /metrics here (etcd's --listen-metrics-urls; port 0: any)",
    )
    p.add_argument("--cert-file", type=Path, help="serve TLS with this certificate (TCP listeners)")
    p.add_argument("--key-file", type=Path, help="key of --cert-file")
    p.add_argument("--trusted-ca-file", type=Path, help="CA that signs the client certificates")
    p.add_argument("--client-cert-auth", action="store_true", help="require client certificates (mutual TLS)")
    p.add_argument("--log-level", default="WARNING")
    args = p.parse_args(argv)
    if (args.cert_file is None) != (args.key_file is None):
        p.error("--cert-file and --key-file go together")
    if args.client_cert_auth and args.trusted_ca_file is None:
        p.error("--client-cert-auth needs --trusted-ca-file")
    tcp = not args.listen.startswith("unix://")
    if args.cert_file is not None and not tcp:
        p.error("TLS is for TCP listeners; a unix socket is owner-only instead")
    mutual = args.cert_file is not None and args.client_cert_auth
    if tcp and not is_loopback(args.listen.rpartition(":")[0]) and not mutual:
        p.error(
            f"--listen {args.listen} is not a loopback address: other hosts may only reach storage over "
            "mutual TLS (--cert-file, --key-file, --trusted-ca-file and --client-cert-auth)"
        )
    return args


def server_tls(args: argparse.Namespace) -> ServerTLS | None:
    if args.cert_file is None:
        return None
    return ServerTLS(args.cert_file, args.key_file, args.trusted_ca_file, args.client_cert_auth)


async def serve(args: argparse.Namespace) -> None:
    server = await start_storage(
        args.listen,
        args.data_dir,
        compaction_retention=args.compaction_retention,
        max_request_bytes=args.max_request_bytes,
        quota_backend_bytes=args.quota_backend_bytes,
        group_commit=not args.no_group_commit,
        progress_notify_interval=args.progress_notify_interval,
        watch_ring_size=args.watch_ring_size,
        watch_stream_buffer_bytes=args.watch_stream_buffer_bytes,
        metrics_listen=args.listen_metrics or "",
        tls=server_tls(args),
        in_memory=args.in_memory,
    )
    heap.settle()  # the keyspace loaded: frozen (protokube/heap.py)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if server.metrics_address:
        print(f"storage metrics on http://{server.metrics_address}/metrics", flush=True)
    print(f"storage listening on {server.address}", flush=True)  # last: it tells callers the service is up
    await stop.wait()
    await server.stop()


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    lock_data_dir(args.data_dir, "protokube storage")
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        uvloop.run(serve(args))  # uvloop: ~10% more requests/s than the default loop here
    except (OSError, ValueError) as exc:
        print(f"protokube storage: {exc}", file=sys.stderr)
        return 1
    return 0
