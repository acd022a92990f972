"""The backend quota and the NOSPACE alarm, as etcd keeps them (server/etcdserver/quota.go,
api/v3alarm): a write that would grow the backend past ``--quota-backend-bytes`` raises the NOSPACE
alarm and fails with ``etcdserver: mvcc: database space exceeded``; while the alarm is on, every
write that may grow the backend (Put, a Txn with puts, LeaseGrant) fails the same way, and reads,
deletes and compaction go on. Operators compact, defragment, then ``etcdctl alarm disarm``.

Here the alarms live in memory: a restarted storage service starts without them (and raises NOSPACE
again at the first write that does not fit).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

from etcdserverpb import rpc_pb2

from server import errors

DEFAULT_QUOTA = 2 * 1024**3  # etcd's default backend quota (--quota-backend-bytes 0)
KV_OVERHEAD = 256  # etcd's estimate of a stored key-value's bookkeeping (quota.go kvOverhead)
LEASE_COST = 64  # etcd's cost of a lease grant (quota.go: leaseOverhead)
NOSPACE = rpc_pb2.AlarmType.Value("NOSPACE")
NONE = rpc_pb2.AlarmType.Value("NONE")


class Quota:
    def __init__(self, db_path: str, quota_bytes: int, member_id: int) -> None:
        self.db_path = db_path
        self.limit = quota_bytes or DEFAULT_QUOTA
        self.member_id = member_id
        self.alarms: set[tuple[int, int]] = set()  # (member id, alarm type)

    def size(self) -> int:
        """The backend's size on disk (the database file and its write-ahead log)."""
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.path.getsize(f"{self.db_path}{suffix}")
        return total

    def check(self, cost: int) -> None:
        """Refuse a write of ``cost`` bytes when the alarm is on or it would not fit (raising it)."""
        if cost <= 0:
            return
        if (self.member_id, NOSPACE) in self.alarms:
            raise errors.no_space()
        if self.size() + cost >= self.limit:
            self.alarms.add((self.member_id, NOSPACE))
            raise errors.no_space()

    # ---- the Maintenance service's Alarm RPC ----
    def alarm(self, request: rpc_pb2.AlarmRequest) -> list[rpc_pb2.AlarmMember]:
        action = request.action
        if action == rpc_pb2.AlarmRequest.AlarmAction.Value("GET"):
            return _members(sorted(self.alarms))
        key = (request.memberID, request.alarm)
        if request.alarm == NONE:
            return []
        if action == rpc_pb2.AlarmRequest.AlarmAction.Value("ACTIVATE"):
            self.alarms.add(key)
            return _members([key])
        if key in self.alarms:  # DEACTIVATE
            self.alarms.discard(key)
            return _members([key])
        return []

    def errors(self) -> list[str]:
        """What StatusResponse.errors lists (etcd: one line per active alarm)."""
        return [f"memberID:{member} alarm:{rpc_pb2.AlarmType.Name(kind)} " for member, kind in sorted(self.alarms)]


def _members(keys: Iterable[tuple[int, int]]) -> list[rpc_pb2.AlarmMember]:
    return [rpc_pb2.AlarmMember(memberID=member, alarm=kind) for member, kind in keys]


def put_cost(request: rpc_pb2.PutRequest) -> int:
    return KV_OVERHEAD + len(request.key) + len(request.value)


def txn_cost(request: rpc_pb2.TxnRequest) -> int:
    """The largest cost of either branch (etcd's costTxn), counting only puts (deletes free space)."""

    def branch(ops: Iterable[rpc_pb2.RequestOp]) -> int:
        total = 0
        for op in ops:
            if op.HasField("request_put"):
                total += put_cost(op.request_put)
            elif op.HasField("request_txn"):
                total += txn_cost(op.request_txn)
        return total

    return max(branch(request.success), branch(request.failure))
