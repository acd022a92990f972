"""Write requests: etcd's request checks, and their evaluation against a WriteView.

Each evaluate_* function runs inside the group committer's batch (see groupcommit.py):
it reads and changes the WriteView and returns the response to send once the batch is
durable. A StorageError raised here fails only that request.
"""

from __future__ import annotations

from typing import Final, TypeVar

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import errors
from protokube.server.lessor import MAX_LEASE_TTL
from protokube.server.mvcc import (
    PastView,
    RangeView,
    SortOrder,
    SortTarget,
    WriteView,
    build_range,
    entry_from_row,
    in_range,
    range_end,
)
from protokube.server.records import Entry, put_response

MAX_TXN_OPS: Final = 128  # etcd's --max-txn-ops default
Comparable = TypeVar("Comparable", bytes, int)  # what a Compare compares: a value, or a revision, version, lease

Compare = rpc_pb2.Compare
# The enums' known values, taken once: an enum wrapper's values() builds a new list at each call
# (it was 2/3 of a Txn's checks).
SORT_ORDERS: Final = frozenset(SortOrder.values())
SORT_TARGETS: Final = frozenset(SortTarget.values())
COMPARE_RESULTS: Final = frozenset(Compare.CompareResult.values())
COMPARE_TARGETS: Final = frozenset(Compare.CompareTarget.values())


# --- checks (etcd's v3rpc checks, before a request is applied) ---------------------------
def check_range(req: rpc_pb2.RangeRequest) -> None:
    if not req.key:
        raise errors.empty_key()
    if req.sort_order not in SORT_ORDERS or req.sort_target not in SORT_TARGETS:
        raise errors.invalid_sort_option()


def check_put(req: rpc_pb2.PutRequest) -> None:
    if not req.key:
        raise errors.empty_key()
    if req.ignore_value and req.value:
        raise errors.value_provided()
    if req.ignore_lease and req.lease:
        raise errors.lease_provided()


def check_delete(req: rpc_pb2.DeleteRangeRequest) -> None:
    if not req.key:
        raise errors.empty_key()


def check_txn(req: rpc_pb2.TxnRequest, max_ops: int = MAX_TXN_OPS) -> None:
    """Op counts, each op's own checks, and no key written twice (etcd's duplicate check)."""
    if len(req.compare) > max_ops or len(req.success) > max_ops or len(req.failure) > max_ops:
        raise errors.too_many_ops()
    # Repeated fields are sliced, not iterated: upb's containers have no iterator of their own, and a loop
    # over one ends with a formatted IndexError (protokube/schema/jsonencode.py says more).
    for cmp in req.compare[:]:
        if cmp.result not in COMPARE_RESULTS or cmp.target not in COMPARE_TARGETS:
            raise errors.invalid("invalid compare")
    for branch in (req.success, req.failure):
        for op in branch[:]:
            kind = op.WhichOneof("request")
            if kind is None:
                raise errors.invalid("request op is empty")
            if kind == "request_range":
                check_range(op.request_range)
            elif kind == "request_put":
                check_put(op.request_put)
            elif kind == "request_delete_range":
                check_delete(op.request_delete_range)
            else:
                check_txn(op.request_txn, max_ops)
        _writes_of(branch)


def _writes_of(ops) -> tuple[set[bytes], list[tuple[bytes, bytes | None]]]:
    """Keys put and ranges deleted by a branch; raises DUPLICATE_KEY on an overlap."""
    puts: set[bytes] = set()
    dels: list[tuple[bytes, bytes | None]] = []
    for op in ops[:]:
        kind = op.WhichOneof("request")
        if kind == "request_put":
            key = op.request_put.key
            if key in puts:
                raise errors.duplicate_key()
            puts.add(key)
        elif kind == "request_delete_range":
            dels.append((op.request_delete_range.key, range_end(op.request_delete_range.range_end)))
        elif kind == "request_txn":
            sub_puts: set[bytes] = set()
            for branch in (op.request_txn.success, op.request_txn.failure):
                branch_puts, branch_dels = _writes_of(branch)
                sub_puts |= branch_puts
                dels += branch_dels
            if puts & sub_puts:
                raise errors.duplicate_key()
            puts |= sub_puts
    for key in puts:
        if any(in_range(key, first, end) for first, end in dels):
            raise errors.duplicate_key()
    return puts, dels


def is_read_only(req: rpc_pb2.TxnRequest) -> bool:
    """True when neither branch (nor any nested txn) can write."""
    for branch in (req.success, req.failure):
        for op in branch[:]:
            kind = op.WhichOneof("request")
            if kind in ("request_put", "request_delete_range"):
                return False
            if kind == "request_txn" and not is_read_only(op.request_txn):
                return False
    return True


# --- evaluation ----------------------------------------------------------------------------
def evaluate_put(view: WriteView, req: rpc_pb2.PutRequest) -> bytes:
    """Returns the serialized PutResponse (the hottest write path: no message objects)."""
    prev = _put(view, req)
    return put_response(view.store.header_bytes(view.rev), prev.encoded() if req.prev_kv and prev else None)


def _put(view: WriteView, req: rpc_pb2.PutRequest) -> Entry | None:
    key = req.key
    prev = view.get(key)
    value, lease = req.value, req.lease
    if req.ignore_value or req.ignore_lease:
        if prev is None:
            raise errors.key_not_found()
        if req.ignore_value:
            value = prev.value
        if req.ignore_lease:
            lease = prev.lease
    if lease and not view.lease_exists(lease):
        raise errors.lease_not_found()
    rev = view.rev
    if prev is None:
        entry = Entry(key, rev, rev, 1, value, lease)
    else:
        entry = Entry(key, prev.create, rev, prev.version + 1, value, lease)
    view.put(key, entry, prev)
    return prev


def evaluate_delete(view: WriteView, req: rpc_pb2.DeleteRangeRequest) -> rpc_pb2.DeleteRangeResponse:
    deleted = _delete(view, req)
    rev = view.rev if deleted else view.current_rev
    resp = rpc_pb2.DeleteRangeResponse(header=view.store.header(rev), deleted=len(deleted))
    if req.prev_kv:
        resp.prev_kvs.extend([e.message() for e in deleted])
    return resp


def _delete(view: WriteView, req: rpc_pb2.DeleteRangeRequest) -> list[Entry]:
    entries = list(view.entries(req.key, range_end(req.range_end)))
    for entry in entries:
        view.delete(entry.key, entry)
    return entries


def evaluate_txn(view: WriteView, req: rpc_pb2.TxnRequest) -> rpc_pb2.TxnResponse:
    """Compares (of this and every nested txn) are decided first, on the state before the txn;
    then the chosen operations run in order, all at one revision."""
    path = _decide(view, req)
    resp = rpc_pb2.TxnResponse()
    _run_txn(view, req, path, resp)
    rev = view.rev if view.events else view.current_rev
    resp.header.CopyFrom(view.store.header(rev))
    _set_inner_revisions(resp, rev)
    return resp


def _decide(view: WriteView, req: rpc_pb2.TxnRequest) -> list[bool]:
    """Outcome of this txn's compares, then of each nested txn on the chosen branch, depth first."""
    ok = all(compare_holds(view, c) for c in req.compare[:])
    path = [ok]
    for op in (req.success if ok else req.failure)[:]:
        if op.WhichOneof("request") == "request_txn":
            path += _decide(view, op.request_txn)
    return path


def _run_txn(view: WriteView, req: rpc_pb2.TxnRequest, path: list[bool], resp: rpc_pb2.TxnResponse) -> None:
    ok = path.pop(0)
    resp.succeeded = ok
    for op in (req.success if ok else req.failure)[:]:
        out = resp.responses.add()
        kind = op.WhichOneof("request")
        if kind == "request_range":
            r = op.request_range
            end = range_end(r.range_end)
            source: RangeView = view
            if r.revision > 0 and r.revision != view.current_rev:
                source = _past_view(view, r, end)
            out.response_range.MergeFromString(build_range(r, source, end, b""))
        elif kind == "request_put":
            prev = _put(view, op.request_put)
            out.response_put.SetInParent()
            if op.request_put.prev_kv and prev is not None:
                out.response_put.prev_kv.CopyFrom(prev.message())
        elif kind == "request_delete_range":
            deleted = _delete(view, op.request_delete_range)
            out.response_delete_range.deleted = len(deleted)
            if op.request_delete_range.prev_kv:
                out.response_delete_range.prev_kvs.extend([e.message() for e in deleted])
        else:
            _run_txn(view, op.request_txn, path, out.response_txn)


def _past_view(view: WriteView, r: rpc_pb2.RangeRequest, end: bytes | None) -> PastView:
    """A txn's range at a past revision: a (rare, short) synchronous history read."""
    store = view.store
    store.check_read_revision(r.revision, view.current_rev)
    if end is not None and end != b"" and end <= r.key:
        return PastView([])
    rows = store.backend.range_at(r.key, end, r.revision)
    return PastView([entry_from_row(row) for row in rows])


def _set_inner_revisions(resp: rpc_pb2.TxnResponse, rev: int) -> None:
    """As etcd: inner responses carry a header with only the txn's revision; a nested txn's
    own header is present but empty."""
    for out in resp.responses[:]:
        kind = out.WhichOneof("response")
        if kind == "response_txn":
            out.response_txn.header.SetInParent()
            _set_inner_revisions(out.response_txn, rev)
        else:
            getattr(out, kind).header.revision = rev


def compare_holds(view: RangeView, cmp: rpc_pb2.Compare) -> bool:
    """etcd's compare: over a range every key must satisfy it; a missing key compares as
    zeros, except that a VALUE compare on a missing key always fails."""
    entries = list(view.entries(cmp.key, range_end(cmp.range_end)))
    if not entries:
        if cmp.target == Compare.VALUE:
            return False
        return _compare_one(cmp, None)
    return all(_compare_one(cmp, e) for e in entries)


def _compare_one(cmp: rpc_pb2.Compare, e: Entry | None) -> bool:
    target = cmp.target
    if target == Compare.VALUE:
        return _holds(cmp.result, e.value if e else b"", cmp.value)
    if target == Compare.VERSION:
        have, want = (e.version if e else 0), cmp.version
    elif target == Compare.CREATE:
        have, want = (e.create if e else 0), cmp.create_revision
    elif target == Compare.MOD:
        have, want = (e.mod if e else 0), cmp.mod_revision
    else:
        have, want = (e.lease if e else 0), cmp.lease
    return _holds(cmp.result, have, want)


def _holds(result: int, have: Comparable, want: Comparable) -> bool:
    if result == Compare.EQUAL:
        return have == want
    if result == Compare.NOT_EQUAL:
        return have != want
    if result == Compare.GREATER:
        return have > want
    return have < want


def evaluate_compact(view: WriteView, req: rpc_pb2.CompactionRequest) -> rpc_pb2.CompactionResponse:
    """Logical compaction: recorded durably with the batch; history is removed afterwards."""
    store = view.store
    compacted = max(store.compacted, view.batch.meta.get("compacted", -1))
    if req.revision <= compacted:
        raise errors.compacted()
    if req.revision > view.current_rev:
        raise errors.future_rev()
    view.meta["compacted"] = req.revision
    return rpc_pb2.CompactionResponse(header=store.header(view.current_rev))


def evaluate_lease_grant(view: WriteView, req: rpc_pb2.LeaseGrantRequest) -> rpc_pb2.LeaseGrantResponse:
    lessor = view.store.lessor
    if req.TTL > MAX_LEASE_TTL:
        raise errors.lease_ttl_too_large()
    lease_id = req.ID or lessor.new_id()
    if view.lease_exists(lease_id):
        raise errors.lease_exist()
    ttl = lessor.effective_ttl(req.TTL)
    view.leases_granted[lease_id] = ttl
    return rpc_pb2.LeaseGrantResponse(header=view.store.header(view.current_rev), ID=lease_id, TTL=ttl)


def evaluate_lease_revoke(view: WriteView, lease_id: int) -> rpc_pb2.LeaseRevokeResponse:
    """End a lease and delete its keys, all in one revision."""
    if not view.lease_exists(lease_id):
        raise errors.lease_not_found()
    for key in view.lease_keys(lease_id):
        prev = view.get(key)
        assert prev is not None
        view.delete(key, prev)
    view.leases_revoked.add(lease_id)
    rev = view.rev if view.events else view.current_rev
    return rpc_pb2.LeaseRevokeResponse(header=view.store.header(rev))
