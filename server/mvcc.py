"""The MVCC store: revisions, the current state in memory, reads at any revision.

The current state (key -> Entry) lives in a SortedDict, so Range at the current revision and
Txn compares never touch SQLite; reads at past revisions go to the SQLite history. Writes are
evaluated against a WriteView (the committed state plus the not-yet-committed changes of the
same commit batch) and applied to the store only after their commit is durable
(see groupcommit.py).
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable, Iterator
from typing import Final, Protocol

from sortedcontainers import SortedDict

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import errors
from protokube.server.backend import Row, SqliteBackend
from protokube.server.lessor import Lessor
from protokube.server.records import DELETE, PUT, Entry, Event, field_int, range_response

RAFT_TERM: Final = 1

SortOrder = rpc_pb2.RangeRequest.SortOrder
SortTarget = rpc_pb2.RangeRequest.SortTarget
SORT_KEYS: Final[dict[int, Callable[[Entry], bytes | int]]] = {
    SortTarget.KEY: lambda e: e.key,
    SortTarget.VERSION: lambda e: e.version,
    SortTarget.CREATE: lambda e: e.create,
    SortTarget.MOD: lambda e: e.mod,
    SortTarget.VALUE: lambda e: e.value,
}


def range_end(end: bytes) -> bytes | None:
    """etcd's range_end convention: b"" -> single key (None); b"\\0" -> no upper bound (b"")."""
    if not end:
        return None
    if end == b"\x00":
        return b""
    return end


def in_range(key: bytes, first: bytes, end: bytes | None) -> bool:
    if end is None:
        return key == first
    return key >= first and (end == b"" or key < end)


def entry_from_row(row: Row) -> Entry:
    rev, _sub, key, create, version, lease, _deleted, value = row
    return Entry(key, create, rev, version, value, lease)


class MvccStore:
    """Committed state: the newest revision, the compacted revision, every live key."""

    def __init__(self, backend: SqliteBackend, lessor: Lessor, cluster_id: int, member_id: int) -> None:
        self.backend = backend
        self.lessor = lessor
        self.cluster_id = cluster_id
        self.member_id = member_id
        self.state: SortedDict = SortedDict()
        self.rev = 1  # an empty etcd store is at revision 1; its first write makes revision 2
        self.compacted = -1  # etcd's "never compacted": Compact(0) on a new store succeeds
        self._ids_encoded = field_int(0x08, cluster_id) + field_int(0x10, member_id)
        self._term_encoded = field_int(0x20, RAFT_TERM)

    # --- headers ------------------------------------------------------------------------
    def header(self, rev: int | None = None) -> rpc_pb2.ResponseHeader:
        return rpc_pb2.ResponseHeader(
            cluster_id=self.cluster_id,
            member_id=self.member_id,
            revision=self.rev if rev is None else rev,
            raft_term=RAFT_TERM,
        )

    def header_bytes(self, rev: int | None = None) -> bytes:
        """Serialized ResponseHeader (hand-encoded; hot paths use it)."""
        rev = self.rev if rev is None else rev
        return self._ids_encoded + field_int(0x18, rev) + self._term_encoded

    # --- the view interface (committed state) --------------------------------------------
    def get(self, key: bytes) -> Entry | None:
        return self.state.get(key)

    def entries(self, key: bytes, end: bytes | None) -> Iterator[Entry]:
        if end is None:
            entry = self.state.get(key)
            return iter((entry,) if entry is not None else ())
        state = self.state
        return map(state.__getitem__, state.irange(key, end or None, inclusive=(True, False)))

    def count(self, key: bytes, end: bytes | None) -> int:
        if end is None:
            return 1 if key in self.state else 0
        state = self.state
        hi = len(state) if end == b"" else state.bisect_left(end)
        return max(0, hi - state.bisect_left(key))

    # --- reads --------------------------------------------------------------------------
    def check_read_revision(self, rev: int, current: int) -> None:
        if rev > current:
            raise errors.future_rev()
        if rev < self.compacted:
            raise errors.compacted()

    async def range(self, req: rpc_pb2.RangeRequest) -> bytes:
        """Serve KV.Range: serialized RangeResponse at the current or a past revision."""
        end = range_end(req.range_end)
        rev = req.revision
        if rev <= 0 or rev == self.rev:
            return build_range(req, self, end, self.header_bytes())
        self.check_read_revision(rev, self.rev)
        header = self.header_bytes()
        entries = await self.entries_at(req.key, end, rev)
        return build_range(req, PastView(entries), end, header)

    async def entries_at(self, key: bytes, end: bytes | None, rev: int) -> list[Entry]:
        """Live keys in the range at a past revision, read from the SQLite history."""
        if end is not None and end != b"" and end <= key:
            return []
        loop = asyncio.get_running_loop()
        rows = await loop.run_in_executor(self.backend.read_executor, self.backend.range_at, key, end, rev)
        if rev < self.compacted:  # compacted while we read: rows may be missing
            raise errors.compacted()
        return [entry_from_row(r) for r in rows]

    # --- applied by the group committer after a durable commit ----------------------------
    def apply(self, overlay: dict[bytes, Entry | None], rev: int) -> None:
        state = self.state
        for key, entry in overlay.items():
            if entry is None:
                state.pop(key, None)
            else:
                state[key] = entry
        self.rev = rev


class RangeView(Protocol):
    """What a range reads: the store, a write's view of it, or keys loaded from history."""

    def entries(self, key: bytes, end: bytes | None) -> Iterator[Entry]:
        """The live keys in the range, in key order."""

    def count(self, key: bytes, end: bytes | None) -> int:
        """How many live keys the range has."""


class PastView:
    """A read-only view over keys loaded from history (entries in key order)."""

    def __init__(self, entries: list[Entry]) -> None:
        self._entries = entries

    def entries(self, key: bytes, end: bytes | None) -> Iterator[Entry]:
        return iter(self._entries)

    def count(self, key: bytes, end: bytes | None) -> int:
        return len(self._entries)


def build_range(req: rpc_pb2.RangeRequest, view: RangeView, end: bytes | None, header: bytes) -> bytes:
    """Evaluate a RangeRequest over a view; returns the serialized RangeResponse.

    As etcd: `count` is the number of keys in the range before the mod/create-revision
    filters and the limit; `more` tells the limit cut results off.
    """
    key = req.key
    if end is not None and end != b"" and end <= key:
        return range_response(header, [], False, 0)
    if req.count_only:
        return range_response(header, [], False, view.count(key, end))
    limit = req.limit if req.limit > 0 else 0
    order = req.sort_order
    if order == SortOrder.NONE and req.sort_target != SortTarget.KEY:
        order = SortOrder.ASCEND  # etcd sorts ascending when a non-key target is given
    filtered = req.min_mod_revision or req.max_mod_revision or req.min_create_revision or req.max_create_revision
    if limit and not filtered and order in (SortOrder.NONE, SortOrder.ASCEND) and req.sort_target == SortTarget.KEY:
        selected = []
        for entry in view.entries(key, end):
            selected.append(entry)
            if len(selected) > limit:
                break
        count = view.count(key, end)
    else:
        selected = list(view.entries(key, end))
        count = len(selected)
        if filtered:
            selected = [e for e in selected if _passes_filters(req, e)]
        if order != SortOrder.NONE:
            by = SORT_KEYS[req.sort_target]
            if order == SortOrder.DESCEND:
                selected.reverse()  # keeps key order descending among equal sort keys
            if req.sort_target != SortTarget.KEY:
                selected.sort(key=by, reverse=order == SortOrder.DESCEND)
    more = bool(limit) and len(selected) > limit
    if more:
        del selected[limit:]
    kvs = [e.encoded_key_only() for e in selected] if req.keys_only else [e.encoded() for e in selected]
    return range_response(header, kvs, more, count)


def _passes_filters(req: rpc_pb2.RangeRequest, e: Entry) -> bool:
    return not (
        (req.min_mod_revision and e.mod < req.min_mod_revision)
        or (req.max_mod_revision and e.mod > req.max_mod_revision)
        or (req.min_create_revision and e.create < req.min_create_revision)
        or (req.max_create_revision and e.create > req.max_create_revision)
    )


class Batch:
    """The write requests evaluated for one commit: their combined, uncommitted effects."""

    def __init__(self, store: MvccStore) -> None:
        self.store = store
        self.rev = store.rev  # the newest revision assigned in this batch
        self.overlay: dict[bytes, Entry | None] = {}  # key -> newest entry (None: deleted)
        self.rows: list[Row] = []
        self.events: list[tuple[int, list[Event]]] = []
        self.leases_granted: dict[int, int] = {}  # id -> ttl
        self.leases_revoked: set[int] = set()
        self.meta: dict[str, int] = {}

    def has_writes(self) -> bool:
        return bool(self.rows or self.leases_granted or self.leases_revoked or self.meta)


class WriteView:
    """What one write request sees and changes: the store, plus earlier requests of its batch."""

    __slots__ = (
        "batch",
        "changes",
        "events",
        "leases_granted",
        "leases_revoked",
        "meta",
        "rev",
        "store",
    )

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.store = batch.store
        self.rev = batch.rev + 1  # the revision this request gets if it changes any key
        self.changes: dict[bytes, Entry | None] = {}
        self.events: list[Event] = []
        self.leases_granted: dict[int, int] = {}
        self.leases_revoked: set[int] = set()
        self.meta: dict[str, int] = {}

    @property
    def current_rev(self) -> int:
        """The revision reads in this request see before it writes anything."""
        return self.batch.rev

    def get(self, key: bytes) -> Entry | None:
        if key in self.changes:
            return self.changes[key]
        if key in self.batch.overlay:
            return self.batch.overlay[key]
        return self.store.state.get(key)

    def _pending_keys(self, key: bytes, end: bytes | None) -> list[bytes]:
        pending = [k for k in self.batch.overlay if in_range(k, key, end)]
        pending += [k for k in self.changes if in_range(k, key, end)]
        return sorted(set(pending))

    def entries(self, key: bytes, end: bytes | None) -> Iterator[Entry]:
        if end is None:
            entry = self.get(key)
            return iter((entry,) if entry is not None else ())
        pending = self._pending_keys(key, end) if (self.batch.overlay or self.changes) else []
        if not pending:
            return self.store.entries(key, end)
        return self._merged(self.store.state.irange(key, end or None, inclusive=(True, False)), pending)

    def _merged(self, committed: Iterator[bytes], pending: list[bytes]) -> Iterator[Entry]:
        """The live entries of both sorted key lists, in key order, as this request sees them."""
        last: bytes | None = None
        for key in heapq.merge(committed, pending):
            if key == last:
                continue
            last = key
            entry = self.get(key)
            if entry is not None:
                yield entry

    def count(self, key: bytes, end: bytes | None) -> int:
        if not (self.batch.overlay or self.changes):
            return self.store.count(key, end)
        return sum(1 for _ in self.entries(key, end))

    def lease_exists(self, lease_id: int) -> bool:
        for granted, revoked in (
            (self.leases_granted, self.leases_revoked),
            (self.batch.leases_granted, self.batch.leases_revoked),
        ):
            if lease_id in granted:
                return True
            if lease_id in revoked:
                return False
        return lease_id in self.store.lessor.leases

    def lease_keys(self, lease_id: int) -> list[bytes]:
        """Keys attached to a lease as this request sees them."""
        lease = self.store.lessor.leases.get(lease_id)
        candidates = set(lease.keys) if lease is not None else set()
        candidates.update(self.batch.overlay)
        candidates.update(self.changes)
        return sorted(k for k in candidates if (e := self.get(k)) is not None and e.lease == lease_id)

    # --- changes ------------------------------------------------------------------------
    def put(self, key: bytes, entry: Entry, prev: Entry | None) -> None:
        self.changes[key] = entry
        self.events.append(Event(PUT, key, self.rev, entry, prev))

    def delete(self, key: bytes, prev: Entry) -> None:
        self.changes[key] = None
        self.events.append(Event(DELETE, key, self.rev, None, prev))

    def commit_to_batch(self) -> None:
        """Merge this request's changes into its batch (the request succeeded)."""
        batch = self.batch
        if self.events:
            batch.rev = self.rev
            batch.overlay.update(self.changes)
            rows = batch.rows
            for sub, ev in enumerate(self.events):
                e = ev.entry
                if e is None:
                    rows.append((ev.rev, sub, ev.key, 0, 0, 0, 1, b""))
                else:
                    rows.append((ev.rev, sub, ev.key, e.create, e.version, e.lease, 0, e.value))
            batch.events.append((self.rev, self.events))
        if self.leases_granted or self.leases_revoked or self.meta:
            self._commit_rest_to_batch()

    def _commit_rest_to_batch(self) -> None:
        """Lease grants and revokes, meta counters (most requests have none)."""
        batch = self.batch
        for lease_id, ttl in self.leases_granted.items():
            batch.leases_revoked.discard(lease_id)
            batch.leases_granted[lease_id] = ttl
        for lease_id in self.leases_revoked:
            batch.leases_granted.pop(lease_id, None)
            batch.leases_revoked.add(lease_id)
        batch.meta.update(self.meta)
