"""An in-memory ``Backend`` with etcd's semantics, for fast white-box tests of the layers above.

Revisions start at 1 and grow by one per write; every key keeps its versions since the last
compaction, so reads and watches at past revisions work as in etcd, and older ones are Compacted.
Every call yields to the event loop once, as a call over the network would, so that concurrent
callers interleave as they do against a real store. It is not a storage engine: no persistence, no
leases, one process.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncIterator

from protokube.gateway.storage.backend import (
    Compacted,
    Event,
    FutureRevision,
    KeyExists,
    KeyValue,
    ListResult,
    ModRevisionMismatch,
    WatchResponse,
)


class MemoryBackend:
    def __init__(self) -> None:
        self.revision = 1  # an empty etcd is at revision 1
        self.compacted = 0
        self._keys: list[bytes] = []  # every key with a version since compaction, sorted
        self._versions: dict[bytes, list[KeyValue | None]] = {}  # per key, oldest first; None: deleted
        self._deleted_at: dict[tuple[bytes, int], int] = {}  # (key, index of None) -> deletion revision
        self._history: list[Event] = []  # every event since compaction, in revision order
        self._watches: set[MemoryWatch] = set()
        self.writes = 0  # successful writes, for tests that count them
        self.conflicts = 0  # guarded writes refused because the key had changed

    # ---- reading -----------------------------------------------------------------------------
    def _check_revision(self, revision: int) -> int:
        if revision and revision < self.compacted:
            raise Compacted(self.compacted)
        if revision > self.revision:
            raise FutureRevision(f"required revision {revision} is a future revision")
        return revision or self.revision

    def _at(self, key: bytes, revision: int) -> KeyValue | None:
        found = None
        for index, version in enumerate(self._versions.get(key, ())):
            at = version.mod_revision if version is not None else self._deleted_at[(key, index)]
            if at > revision:
                break
            found = version
        return found

    async def get(self, key: bytes, revision: int = 0) -> tuple[KeyValue | None, int]:
        await asyncio.sleep(0)
        revision = self._check_revision(revision)
        return self._at(key, revision), revision

    async def list(self, start: bytes, end: bytes, revision: int = 0, limit: int = 0) -> ListResult:
        await asyncio.sleep(0)
        revision = self._check_revision(revision)
        low = bisect.bisect_left(self._keys, start)
        high = len(self._keys) if end == b"\x00" else bisect.bisect_left(self._keys, end)
        found = [kv for key in self._keys[low:high] if (kv := self._at(key, revision)) is not None]
        page = found[:limit] if limit else found
        return ListResult(page, revision, len(found) > len(page), len(found))

    async def current_revision(self) -> int:
        return self.revision

    # ---- writing -----------------------------------------------------------------------------
    def _current(self, key: bytes) -> KeyValue | None:
        versions = self._versions.get(key)
        return versions[-1] if versions else None

    def _write(self, key: bytes, value: bytes | None) -> int:
        prev = self._current(key)
        self.revision += 1
        self.writes += 1
        if key not in self._versions:
            bisect.insort(self._keys, key)
            self._versions[key] = []
        versions = self._versions[key]
        if value is None:
            assert prev is not None
            self._deleted_at[(key, len(versions))] = self.revision
            versions.append(None)
            event = Event(type=Event.DELETE, kv=KeyValue(key=key, mod_revision=self.revision), prev_kv=prev)
        else:
            kv = KeyValue(
                key=key,
                value=value,
                create_revision=prev.create_revision if prev else self.revision,
                mod_revision=self.revision,
                version=prev.version + 1 if prev else 1,
            )
            versions.append(kv)
            event = Event(type=Event.PUT, kv=kv, prev_kv=prev)
        self._history.append(event)
        for watch in list(self._watches):
            watch.offer(event, self.revision)
        return self.revision

    async def create(self, key: bytes, value: bytes) -> int:
        await asyncio.sleep(0)
        if self._current(key) is not None:
            raise KeyExists(key.decode())
        return self._write(key, value)

    def _check_unchanged(self, key: bytes, mod_revision: int) -> None:
        current = self._current(key)
        if (current.mod_revision if current is not None else 0) != mod_revision:
            self.conflicts += 1
            raise ModRevisionMismatch(current)

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> int:
        await asyncio.sleep(0)
        self._check_unchanged(key, mod_revision)
        return self._write(key, value)

    async def delete(self, key: bytes, mod_revision: int) -> int:
        await asyncio.sleep(0)
        self._check_unchanged(key, mod_revision)
        if self._current(key) is None:
            raise ModRevisionMismatch(None)
        return self._write(key, None)

    async def compact(self, revision: int) -> None:
        """Forget history before ``revision`` (reads and watches from before it are Compacted)."""
        self._check_revision(revision)
        self.compacted = revision
        self._history = [event for event in self._history if event.kv.mod_revision >= revision]

    # ---- watching ----------------------------------------------------------------------------
    def watch(self, start: bytes, end: bytes, start_revision: int) -> MemoryWatch:
        return MemoryWatch(self, start, end, start_revision)

    progress_notify = True

    def stale(self, key: bytes, mod_revision: int) -> bool:
        return False

    async def close(self) -> None:
        for watch in list(self._watches):
            watch.offer_end()


class MemoryWatch:
    def __init__(self, backend: MemoryBackend, start: bytes, end: bytes, start_revision: int) -> None:
        self.backend = backend
        self.start, self.end = start, end
        self.start_revision = start_revision
        self.queue: asyncio.Queue[WatchResponse | None] = asyncio.Queue()

    def _covers(self, key: bytes) -> bool:
        return key >= self.start and (self.end == b"\x00" or key < self.end)

    def offer(self, event: Event, revision: int) -> None:
        if self._covers(event.kv.key) and event.kv.mod_revision >= self.start_revision:
            response = WatchResponse(events=[event])
            response.header.revision = revision
            self.queue.put_nowait(response)

    def offer_end(self) -> None:
        self.queue.put_nowait(None)

    async def __aenter__(self) -> MemoryWatch:
        backend = self.backend
        if self.start_revision and self.start_revision < backend.compacted:
            raise Compacted(backend.compacted)
        created = WatchResponse(created=True)
        created.header.revision = backend.revision
        self.queue.put_nowait(created)
        for event in backend._history:  # the past first, then live events (nothing awaits in between)
            self.offer(event, event.kv.mod_revision)
        backend._watches.add(self)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.backend._watches.discard(self)

    def request_progress(self) -> None:
        response = WatchResponse(watch_id=-1)
        response.header.revision = self.backend.revision
        self.queue.put_nowait(response)

    async def responses(self) -> AsyncIterator[WatchResponse]:
        while (response := await self.queue.get()) is not None:
            yield response
