"""The storage backend over gRPC: an etcd v3 client (the ``Backend`` of storage/backend.py).

It speaks to the embedded storage service and to a real etcd alike. Writes are transactions on
the key's create/mod revision (optimistic concurrency, as k8s.io/apiserver's etcd3 store does);
gRPC errors become the typed exceptions of storage/backend.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from protokube.gateway.storage import endpoints
from protokube.gateway.storage.backend import (
    Compacted,
    FutureRevision,
    KeyExists,
    KeyValue,
    ListResult,
    ModRevisionMismatch,
    NoSpace,
    RequestTooLarge,
    StorageError,
    Unavailable,
)
from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.etcdserverpb import rpc_pb2_grpc as rpc_grpc

# Lists of many large objects exceed gRPC's 4 MiB default.
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
# The watches' channel keeps a small fixed HTTP/2 stream window (16 KiB read ahead, no bandwidth
# probing, which grows it to megabytes): a watch cache that reads slower than its events come (one
# response a turn or two of a busy event loop) then holds storage's writes back, and storage sends
# what waits in fewer, larger responses (server/watchhub.py), instead of the gateway falling further
# behind at a response a turn. A larger event still comes whole: the window opens for a message read.
WATCH_CHANNEL_OPTIONS = [*CHANNEL_OPTIONS, ("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]
COMPACT_REV_KEY = b"compact_rev_key"  # upstream's key: its version counts compaction turns
READ_WAIT = 10.0  # seconds a read waits for a storage member to take it
log = logging.getLogger("protokube.etcd")


def _translate(err: grpc.aio.AioRpcError) -> StorageError:
    """A gRPC error as the storage error it stands for; details that name internal addresses are
    logged by the caller, never sent to clients."""
    details = err.details() or ""
    if "required revision has been compacted" in details:
        return Compacted()
    if "required revision is a future revision" in details:
        return FutureRevision(details)
    if "database space exceeded" in details:
        return NoSpace()
    if "request is too large" in details or err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return RequestTooLarge()  # etcd's own limit, or gRPC's limit on the message itself
    if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return Unavailable()
    return StorageError(f"storage error: {err.code().name}: {details}")


@dataclass(frozen=True)
class ClientTLS:
    """TLS to storage (kube-apiserver's --etcd-cafile, --etcd-certfile, --etcd-keyfile)."""

    ca_file: Path | None = None  # None: the system's trust store
    cert_file: Path | None = None  # with key_file: our client certificate (mutual TLS)
    key_file: Path | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: Path | None) -> bytes | None:
            return path.read_bytes() if path else None

        return grpc.ssl_channel_credentials(read(self.ca_file), read(self.key_file), read(self.cert_file))


ATTEMPT_SECONDS = 5.0  # each try of wait_available


class StorageUnavailable(RuntimeError):
    """The storage did not answer within the time given to it."""


def _why(err: BaseException, channel: grpc.aio.Channel) -> str:
    if isinstance(err, grpc.aio.AioRpcError):
        return f"{err.code().name}: {err.details()}"
    return f"no connection, gRPC channel {channel.get_state().name}"


class EtcdBackend:
    """A connection to an etcd-v3 API: one endpoint (``host:port``, ``unix://path``) or the members
    of a cluster (``h1:2379,h2:2379,h3:2379``, each tried in turn when the one in use fails); TLS
    with ``tls``. Reads wait for a member to answer for a while; writes are never sent twice."""

    def __init__(self, target: str, tls: ClientTLS | None = None) -> None:
        self.target = target
        self.endpoints = endpoints.parse(target)
        self.tls = tls
        self.channel = self._channel(endpoints.grpc_target(self.endpoints))
        self.watch_channel = self._channel(endpoints.grpc_target(self.endpoints), WATCH_CHANNEL_OPTIONS)
        self.kv = rpc_grpc.KVStub(self.channel)
        self.watch_stub = rpc_grpc.WatchStub(self.watch_channel)
        self.maintenance = rpc_grpc.MaintenanceStub(self.channel)
        # Whether every member sends progress notifications in order (the watch cache may then
        # serve consistent reads); checked against their versions in wait_ready.
        self.progress_notify = True

    def _channel(self, target: str, options: list[tuple[str, Any]] = CHANNEL_OPTIONS) -> grpc.aio.Channel:
        options = [*options, *endpoints.tls_name_options(self.endpoints, self.tls is not None)]
        if self.tls is None:
            return grpc.aio.insecure_channel(target, options=options)
        return grpc.aio.secure_channel(target, self.tls.credentials(), options=options)

    def stale(self, key: bytes, mod_revision: int) -> bool:
        return False

    async def close(self) -> None:
        await self.channel.close()
        await self.watch_channel.close()

    async def wait_ready(self, timeout: float) -> None:
        """Wait for the storage, then check what every member's version guarantees (upstream's
        feature-support checker): progress notifications are trusted only from etcd >= 3.4.31 or
        >= 3.5.13, where they are ordered after every event they cover."""
        await asyncio.wait_for(self.channel.channel_ready(), timeout)
        versions = await asyncio.wait_for(self._member_versions(), timeout)
        self.progress_notify = all(endpoints.orders_progress_notifications(v) for v in versions)
        if not self.progress_notify:
            log.warning(
                "storage %s runs etcd %s: consistent reads go to storage, not to the watch cache",
                self.target,
                ", ".join(versions),
            )

    async def wait_available(self, timeout: float, attempt: float = ATTEMPT_SECONDS) -> None:
        """``wait_ready``, tried again until ``timeout`` seconds have passed, with a log line for
        every failed attempt naming the storage and why; then StorageUnavailable saying so."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                await self.wait_ready(max(0.1, min(attempt, left)))
                return
            except (TimeoutError, grpc.aio.AioRpcError) as err:
                reason = _why(err, self.channel)
                if time.monotonic() >= deadline:
                    raise StorageUnavailable(
                        f"storage {self.target} not reachable after {timeout:g} s ({reason})"
                    ) from None
                log.warning("storage %s not reachable yet (%s); trying again", self.target, reason)

    async def _member_versions(self) -> list[str]:
        if len(self.endpoints) == 1:
            status = await self._call(self.maintenance.Status, rpc.StatusRequest())
            return [status.version]
        versions = []
        for endpoint in self.endpoints:
            channel = self._channel(endpoints.grpc_target([endpoint]))
            try:
                status = await rpc_grpc.MaintenanceStub(channel).Status(rpc.StatusRequest(), timeout=READ_WAIT)
                versions.append(status.version)
            except grpc.aio.AioRpcError:
                log.warning("storage member %s did not answer its version", endpoint.address)
            finally:
                await channel.close()
        return versions

    async def _call(self, method, request):
        try:
            return await method(request)
        except grpc.aio.AioRpcError as err:
            raise _translate(err) from None

    async def _read(self, method, request):
        """An idempotent read: waits up to READ_WAIT for a member to take it (failover)."""
        try:
            return await method(request, wait_for_ready=True, timeout=READ_WAIT)
        except grpc.aio.AioRpcError as err:
            raise _translate(err) from None

    async def current_revision(self) -> int:
        response = await self._read(self.kv.Range, rpc.RangeRequest(key=b"\x00", count_only=True, limit=1))
        return response.header.revision

    async def get(self, key: bytes, revision: int = 0) -> tuple[KeyValue | None, int]:
        """The key's value (None when absent) and the revision it was read at."""
        response = await self._read(self.kv.Range, rpc.RangeRequest(key=key, revision=revision))
        return (response.kvs[0] if response.kvs else None), response.header.revision

    async def list(self, start: bytes, end: bytes, revision: int = 0, limit: int = 0) -> ListResult:
        request = rpc.RangeRequest(key=start, range_end=end, revision=revision, limit=limit)
        response = await self._read(self.kv.Range, request)
        return ListResult(list(response.kvs), response.header.revision, response.more, response.count)

    async def create(self, key: bytes, value: bytes) -> int:
        """Put ``key`` only if absent; returns the new revision (KeyExists otherwise)."""
        request = rpc.TxnRequest(
            compare=[rpc.Compare(key=key, target=rpc.Compare.CREATE, result=rpc.Compare.EQUAL, create_revision=0)],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))],
        )
        response = await self._call(self.kv.Txn, request)
        if not response.succeeded:
            raise KeyExists(key.decode())
        return response.header.revision

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> int:
        """Put ``key`` only if unchanged since ``mod_revision``; returns the new revision."""
        put = rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))
        return await self._if_unchanged(key, mod_revision, put)

    async def delete(self, key: bytes, mod_revision: int) -> int:
        """Delete ``key`` only if unchanged since ``mod_revision``; returns the deletion revision."""
        return await self._if_unchanged(
            key, mod_revision, rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=key))
        )

    async def _if_unchanged(self, key: bytes, mod_revision: int, operation: rpc.RequestOp) -> int:
        """Run ``operation`` in a transaction guarded by the key's mod revision (optimistic concurrency)."""
        request = rpc.TxnRequest(
            compare=[rpc.Compare(key=key, target=rpc.Compare.MOD, result=rpc.Compare.EQUAL, mod_revision=mod_revision)],
            success=[operation],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=key))],
        )
        response = await self._call(self.kv.Txn, request)
        if not response.succeeded:
            kvs = response.responses[0].response_range.kvs
            raise ModRevisionMismatch(kvs[0] if kvs else None)
        return response.header.revision

    async def compact(self, revision: int) -> None:
        await self._call(self.kv.Compact, rpc.CompactionRequest(revision=revision, physical=True))

    async def claim_compaction(self, turn: int, revision: int) -> tuple[bool, int, int]:
        """One turn of upstream's compaction protocol on ``compact_rev_key``: if the key's version
        is still ``turn``, store ``revision`` in it (so this gateway compacts up to ``revision``);
        else someone else did this turn. Returns (claimed, the key's version now, current revision)."""
        request = rpc.TxnRequest(
            compare=[
                rpc.Compare(result=rpc.Compare.EQUAL, target=rpc.Compare.VERSION, key=COMPACT_REV_KEY, version=turn)
            ],
            success=[rpc.RequestOp(request_put=rpc.PutRequest(key=COMPACT_REV_KEY, value=str(revision).encode()))],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=COMPACT_REV_KEY))],
        )
        response = await self._call(self.kv.Txn, request)
        if response.succeeded:
            return True, turn + 1, response.header.revision
        return False, response.responses[0].response_range.kvs[0].version, response.header.revision

    def watch(self, start: bytes, end: bytes, start_revision: int) -> EtcdWatch:
        """A watch on [start, end) from ``start_revision`` with previous values and progress."""
        return EtcdWatch(self.watch_stub, start, end, start_revision)


class EtcdWatch:
    """One etcd watch on its own gRPC stream; ``request_progress`` asks where it stands.

    Use as ``async with etcd.watch(...) as watch: async for response in watch.responses()``.
    A compacted start revision raises Compacted; the stream is cancelled on exit.
    """

    def __init__(self, stub: rpc_grpc.WatchStub, start: bytes, end: bytes, start_revision: int) -> None:
        self._requests: asyncio.Queue[rpc.WatchRequest | None] = asyncio.Queue()
        create = rpc.WatchCreateRequest(
            key=start, range_end=end, start_revision=start_revision, prev_kv=True, progress_notify=True
        )
        self._requests.put_nowait(rpc.WatchRequest(create_request=create))
        self._stub = stub
        self._call: grpc.aio.StreamStreamCall | None = None

    async def _request_stream(self) -> AsyncIterator[rpc.WatchRequest]:
        while (item := await self._requests.get()) is not None:
            yield item

    async def __aenter__(self) -> EtcdWatch:
        self._call = self._stub.Watch(self._request_stream())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._call is not None:
            self._call.cancel()
        self._requests.put_nowait(None)

    def request_progress(self) -> None:
        self._requests.put_nowait(rpc.WatchRequest(progress_request=rpc.WatchProgressRequest()))

    async def responses(self) -> AsyncIterator[rpc.WatchResponse]:
        assert self._call is not None, "use the watch in an async with block"
        try:
            async for response in self._call:
                if response.compact_revision:
                    raise Compacted(response.compact_revision)
                if response.canceled:
                    raise StorageError(f"storage canceled the watch: {response.cancel_reason}")
                yield response
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise _translate(err) from None
