"""Build and run the storage service; the in-process API is `start_storage`."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, fields
from pathlib import Path

import grpc

from protokube.server.backend import SqliteBackend
from protokube.server.compaction import Compactor
from protokube.server.groupcommit import GroupCommitter
from protokube.server.kv import KVService
from protokube.server.lease import LeaseService
from protokube.server.lessor import Lessor
from protokube.server.maintenance import MaintenanceService
from protokube.server.metrics import StorageMetrics
from protokube.server.mvcc import MvccStore, entry_from_row
from protokube.server.quota import Quota, stored_alarms
from protokube.server.rpc import generic_handler
from protokube.server.watch import WatchService
from protokube.server.watchhub import STREAM_BUFFER_BYTES, WatchHub

GRPC_OVERHEAD_BYTES = 512 * 1024  # etcd lets gRPC accept this much beyond --max-request-bytes


@dataclass
class StorageOptions:
    compaction_retention: float = 300.0  # seconds of history kept by auto-compaction; 0 = off
    max_request_bytes: int = 1572864  # etcd's default --max-request-bytes (1.5 MiB)
    quota_backend_bytes: int = 0  # etcd's --quota-backend-bytes (0: its default, 2 GiB)
    group_commit: bool = True  # batch concurrent writes into one SQLite commit
    watch_ring_size: int = 100_000  # recent events kept in memory for watch catch-up
    watch_stream_buffer_bytes: int = STREAM_BUFFER_BYTES  # queued on a watch stream before pacing it
    progress_notify_interval: float = 600.0  # etcd's default: 10 minutes
    lease_check_interval: float = 0.5  # how often expired leases are looked for
    min_lease_ttl: int = 2  # etcd's minimum TTL with default election settings
    metrics_listen: str = ""  # HOST:PORT of the /metrics endpoint (etcd's --listen-metrics-urls); "" = none
    tls: ServerTLS | None = None  # TLS on a TCP listener (etcd's --cert-file, --key-file, --trusted-ca-file)
    in_memory: bool = False  # the database in memory (server/memorydb.py), not in data_dir


@dataclass(frozen=True)
class ServerTLS:
    cert_file: Path
    key_file: Path
    trusted_ca_file: Path | None = None  # with it, clients must present a certificate it signed
    client_cert_auth: bool = False

    def credentials(self) -> grpc.ServerCredentials:
        ca = self.trusted_ca_file.read_bytes() if self.trusted_ca_file else None
        return grpc.ssl_server_credentials(
            [(self.key_file.read_bytes(), self.cert_file.read_bytes())],
            root_certificates=ca,
            require_client_auth=self.client_cert_auth and ca is not None,
        )


def grpc_options(max_request_bytes: int) -> list[tuple[str, int]]:
    """The gRPC server's channel arguments (the bench's no-op gRPC server takes them too)."""
    return [
        ("grpc.max_receive_message_length", max_request_bytes + GRPC_OVERHEAD_BYTES),
        ("grpc.max_send_message_length", 2**31 - 1),
        ("grpc.so_reuseport", 0),
        # etcd clients (the Kubernetes API server) ping every few seconds: allow it.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 5000),
        ("grpc.http2.max_ping_strikes", 0),
        # gRPC core cancels calls beyond 1000 waiting for a handler; etcd refuses none.
        ("grpc.server.max_pending_requests", 50_000),
        ("grpc.server.max_pending_requests_hard_limit", 100_000),
    ]


class StorageServer:
    """A running storage service."""

    def __init__(
        self,
        server: grpc.aio.Server,
        address: str,
        backend: SqliteBackend,
        hub: WatchHub,
        committer: GroupCommitter,
        compactor: Compactor,
        leases: LeaseService,
        metrics: StorageMetrics,
        metrics_address: str,
    ) -> None:
        self.address = address  # HOST:PORT, or unix://PATH
        self.metrics_address = metrics_address  # "" when /metrics is not served
        self._metrics = metrics
        self._hub = hub
        self._server = server
        self._backend = backend
        self._committer = committer
        self._compactor = compactor
        self._leases = leases

    @property
    def commits(self) -> int:
        """SQLite write transactions committed since start."""
        return self._backend.commits

    @property
    def writes(self) -> int:
        """Write requests committed since start."""
        return self._committer.writes

    async def stop(self, grace: float = 1.0) -> None:
        self._metrics.stop()
        await self._server.stop(grace)
        await self._leases.stop()
        await self._compactor.stop()
        await self._hub.stop()
        await self._committer.stop()
        self._backend.close()


def _load(backend: SqliteBackend, options: StorageOptions) -> tuple[MvccStore, dict[str, int]]:
    """Rebuild the in-memory store from the database; returns it and the meta counters."""
    loaded = backend.load()
    meta = loaded.meta
    if "cluster_id" not in meta:
        meta["cluster_id"] = random.getrandbits(63) | 1
        meta["member_id"] = random.getrandbits(63) | 1
        backend.set_meta({"cluster_id": meta["cluster_id"], "member_id": meta["member_id"]})
    lessor = Lessor(options.min_lease_ttl)
    store = MvccStore(backend, lessor, meta["cluster_id"], meta["member_id"])
    store.rev = meta.get("revision", 1)
    store.compacted = meta.get("compacted", -1)
    for lease_id, ttl in loaded.leases:
        lessor.grant(lease_id, ttl)  # full TTL again, as etcd after a leader change
    for row in loaded.current:
        entry = entry_from_row(row)
        store.state[entry.key] = entry
        lessor.attach(entry.key, 0, entry.lease)
    return store, meta


UNIX = "unix://"


def _split_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--listen must be HOST:PORT or unix://PATH, got {listen!r}")
    return host.strip("[]"), int(port)


def _bind(server: grpc.aio.Server, listen: str, tls: ServerTLS | None = None) -> str:
    """Listen on HOST:PORT (port 0: any) or on a Unix socket (unix://PATH, owner-only); returns
    the address clients use."""
    if listen.startswith(UNIX):
        path = Path(listen[len(UNIX) :]).resolve()
        path.unlink(missing_ok=True)
        old_umask = os.umask(0o177)  # the socket file is created owner-only
        try:
            bound = server.add_insecure_port(f"unix:{path}")
        finally:
            os.umask(old_umask)
        if bound == 0:
            raise OSError(f"cannot listen on {listen}")
        return f"{UNIX}{path}"
    host, port = _split_listen(listen)
    address = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    try:
        bound = server.add_secure_port(address, tls.credentials()) if tls else server.add_insecure_port(address)
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise OSError(f"cannot listen on {listen} (address in use or not local)")
    return f"{host}:{bound}"


async def start_storage(listen: str, data_dir: Path, **options) -> StorageServer:
    """Open (or create) the store in data_dir and serve it on listen (HOST:PORT, port 0 = any).

    Options are the fields of StorageOptions.
    """
    known = {f.name for f in fields(StorageOptions)}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"unknown storage options: {sorted(unknown)}")
    opts = StorageOptions(**options)
    if not listen.startswith(UNIX):
        _split_listen(listen)  # refuse a malformed address before opening the database

    metrics = StorageMetrics()
    backend = SqliteBackend(Path(data_dir), commit_duration=metrics.commit_duration, in_memory=opts.in_memory)
    store, meta = _load(backend, opts)
    hub = WatchHub(
        store,
        ring_size=opts.watch_ring_size,
        progress_interval=opts.progress_notify_interval,
        max_response_bytes=opts.max_request_bytes,
        stream_buffer_bytes=opts.watch_stream_buffer_bytes,
    )
    committer = GroupCommitter(store, hub, batching=opts.group_commit)
    compactor = Compactor(store, committer, retention=opts.compaction_retention, done=meta.get("compact_done", 0))
    quota = Quota(backend, opts.quota_backend_bytes, store.member_id, stored_alarms(meta))
    leases = LeaseService(store, committer, quota, opts.lease_check_interval)

    server = grpc.aio.server(options=grpc_options(opts.max_request_bytes))
    server.add_generic_rpc_handlers(
        (
            generic_handler("KV", KVService(store, committer, compactor, opts.max_request_bytes, quota), metrics),
            generic_handler("Watch", WatchService(hub), metrics),
            generic_handler("Lease", leases, metrics),
            generic_handler("Maintenance", MaintenanceService(store, quota), metrics),
        )
    )
    try:
        address = _bind(server, listen, opts.tls)
    except OSError:
        backend.close()
        raise
    metrics.watch_state(
        [
            ("etcd_server_has_leader", "Whether or not a leader exists. 1 is existence, 0 is not.", lambda: 1),
            ("etcd_server_is_leader", "Whether or not this member is a leader. 1 if is, 0 otherwise.", lambda: 1),
            (
                "etcd_mvcc_db_total_size_in_bytes",
                "Total size of the underlying database physically allocated in bytes.",
                lambda: backend.sizes()[0],
            ),
            (
                "etcd_mvcc_db_total_size_in_use_in_bytes",
                "Total size of the underlying database logically in use in bytes.",
                lambda: backend.sizes()[1],
            ),
            ("etcd_debugging_mvcc_keys_total", "Total number of keys.", lambda: len(store.state)),
            ("etcd_debugging_mvcc_current_revision", "The current revision of store.", lambda: store.rev),
            (
                "etcd_debugging_mvcc_compact_revision",
                "The revision of the last compaction in store.",
                lambda: max(store.compacted, 0),
            ),
            ("etcd_debugging_mvcc_watcher_total", "Total number of watchers.", hub.watcher_count),
            (
                "etcd_debugging_mvcc_slow_watcher_total",
                "Total number of unsynced slow watchers.",
                hub.slow_watcher_count,
            ),
            (
                "protokube_storage_watch_catch_ups",
                "Watchers being caught up (from a past revision, or after falling behind) by a task of their own.",
                lambda: len(hub.catch_ups),
            ),
            (
                "protokube_storage_watch_queued_bytes",
                "Bytes of watch responses queued on the streams and not yet written to their clients.",
                hub.queued_bytes,
            ),
        ]
    )
    metrics_address = metrics.serve(opts.metrics_listen) if opts.metrics_listen else ""
    committer.start()
    hub.start()
    compactor.start()
    leases.start()
    await server.start()
    return StorageServer(server, address, backend, hub, committer, compactor, leases, metrics, metrics_address)
