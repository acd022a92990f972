"""The storage seam: what the gateway needs from an etcd-v3 key-value store.

Everything above this seam (object storage, watch caches, the registry) reaches storage only
through ``Backend``. Keys and values are bytes; every write and every event carries the store's
revision, which is the resourceVersion clients see. The data types are etcd's own messages
(``mvccpb.KeyValue``, ``mvccpb.Event``, ``etcdserverpb.WatchResponse``): the protocol is etcd's.

Implementations: ``storage.etcd.EtcdBackend`` (gRPC, to the storage service or a real etcd) and
``storage.memory.MemoryBackend`` (in memory, for fast white-box tests of the layers above).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.mvccpb import kv_pb2

KeyValue = kv_pb2.KeyValue
Event = kv_pb2.Event
WatchResponse = rpc.WatchResponse


class StorageError(Exception):
    """Storage failed in a way the client did not cause (rendered as 500 or 503)."""


class KeyExists(StorageError):
    """A create found the key already there."""


class Compacted(StorageError):
    """The requested revision is older than the oldest kept (upstream: 410 Expired)."""

    def __init__(self, compact_revision: int = 0) -> None:
        super().__init__("mvcc: required revision has been compacted")
        self.compact_revision = compact_revision


class FutureRevision(StorageError):
    """The requested revision is newer than the store's current revision."""


class RequestTooLarge(StorageError):
    """The write is bigger than storage accepts (etcd's --max-request-bytes)."""

    def __init__(self) -> None:
        super().__init__("etcdserver: request is too large")


class NoSpace(StorageError):
    """Storage cannot grow: etcd's NOSPACE (its quota), or a full disk."""

    def __init__(self) -> None:
        super().__init__("etcdserver: mvcc: database space exceeded")


class PlainFailure(StorageError):
    """A failure below storage that upstream reports as a plain error: a 500 without a reason,
    its message as it is (e.g. a CRD's conversion webhook failing)."""


class Unavailable(StorageError):
    """Storage cannot be reached, or did not answer in time."""

    def __init__(self) -> None:
        super().__init__("etcdserver: request timed out")


# The largest revision storage can hold (etcd revisions are int64).
MAX_REVISION = 2**63 - 1


class ModRevisionMismatch(Exception):
    """The key changed since it was read; ``current`` is what it holds now (None: deleted)."""

    def __init__(self, current: KeyValue | None) -> None:
        super().__init__("the key was modified")
        self.current = current


@dataclass(frozen=True, slots=True)
class ListResult:
    kvs: list[KeyValue]
    revision: int  # the revision the list was read at
    more: bool
    count: int  # keys in the range from the start key (etcd's count)


class Watch(Protocol):
    """One watch on a key range: ``async with backend.watch(...) as w: async for r in w.responses()``.

    The first response confirms the watch (``created``); then responses carry events in revision
    order. ``request_progress`` asks for a response with ``watch_id == -1`` whose header revision
    is current, sent only after every event up to that revision (etcd's progress request). A start
    revision older than the compacted one raises Compacted.
    """

    async def __aenter__(self) -> Watch: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def request_progress(self) -> None: ...

    def responses(self) -> AsyncIterator[WatchResponse]: ...


class ChangedWatch:
    """A watch whose responses with events come out as ``change`` makes them, in a copy (the backend's
    own messages are left as they are): the watch of a backend that wraps another one (encryption at
    rest decrypts the values, a conversion webhook converts them)."""

    def __init__(self, watch: Watch, change: Callable[[WatchResponse], Awaitable[None]]) -> None:
        self.watch = watch
        self.change = change

    async def __aenter__(self) -> ChangedWatch:
        await self.watch.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.watch.__aexit__(*exc)

    def request_progress(self) -> None:
        self.watch.request_progress()

    async def responses(self) -> AsyncIterator[WatchResponse]:
        async for response in self.watch.responses():
            if not response.events:
                yield response
                continue
            changed = WatchResponse()
            changed.CopyFrom(response)
            await self.change(changed)
            yield changed


class Backend(Protocol):
    # Whether progress notifications come after every event they cover (then a progress request
    # confirms the watch cache is current, and consistent reads are served from it).
    progress_notify: bool

    async def get(self, key: bytes, revision: int = 0) -> tuple[KeyValue | None, int]:
        """The key's value (None when absent) and the revision it was read at."""

    async def list(self, start: bytes, end: bytes, revision: int = 0, limit: int = 0) -> ListResult:
        """Keys in [start, end) in key order, as of ``revision`` (0: the latest)."""

    async def current_revision(self) -> int: ...

    async def create(self, key: bytes, value: bytes) -> int:
        """Put ``key`` only if absent; returns the new revision (KeyExists otherwise)."""

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> int:
        """Put ``key`` only if unchanged since ``mod_revision`` (ModRevisionMismatch otherwise)."""

    async def delete(self, key: bytes, mod_revision: int) -> int:
        """Delete ``key`` only if unchanged since ``mod_revision``; returns the deletion revision."""

    def watch(self, start: bytes, end: bytes, start_revision: int) -> Watch:
        """Changes in [start, end) from ``start_revision`` on, with previous values."""

    def stale(self, key: bytes, mod_revision: int) -> bool:
        """Whether the value read at ``mod_revision`` must be rewritten even if unchanged (it is
        encrypted with a key that is no longer the first: upstream's stale read)."""

    async def close(self) -> None: ...


def prefix_end(prefix: bytes) -> bytes:
    """The range end that covers every key starting with ``prefix``."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\x00"
