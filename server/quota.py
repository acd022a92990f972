"""The backend quota and the NOSPACE alarm, as etcd keeps them (server/etcdserver/quota.go,
api/v3alarm): a write that would grow the backend past ``--quota-backend-bytes`` raises the NOSPACE
alarm and fails with ``etcdserver: mvcc: database space exceeded``; while the alarm is on, every
write that may grow the backend (Put, a Txn with puts, LeaseGrant) fails the same way, and reads,
deletes and compaction go on. Operators compact, defragment, then ``etcdctl alarm disarm``.

Alarms outlive a restart, as etcd keeps them in its backend: each change is written to the meta
table (``alarm/<member>/<type>``: 1 raised, 0 disarmed) on the writer thread, after the change takes
effect in memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import errors
from protokube.server.backend import CommitBatch, SqliteBackend

log = logging.getLogger(__name__)

DEFAULT_QUOTA: Final = 2 * 1024**3  # etcd's default backend quota (--quota-backend-bytes 0)
KV_OVERHEAD: Final = 256  # etcd's estimate of a stored key-value's bookkeeping (quota.go kvOverhead)
LEASE_COST: Final = 64  # etcd's cost of a lease grant (quota.go: leaseOverhead)
NOSPACE: Final = rpc_pb2.AlarmType.Value("NOSPACE")
NONE: Final = rpc_pb2.AlarmType.Value("NONE")


ALARM_PREFIX: Final = "alarm/"


def stored_alarms(meta: Mapping[str, int]) -> set[tuple[int, int]]:
    """The alarms raised when the store was last written: (member id, alarm type)."""
    found = set()
    for name, raised in meta.items():
        if name.startswith(ALARM_PREFIX) and raised:
            member, kind = name.removeprefix(ALARM_PREFIX).split("/")
            found.add((int(member), int(kind)))
    return found


class Quota:
    def __init__(self, backend: SqliteBackend, quota_bytes: int, member_id: int, alarms: set[tuple[int, int]]) -> None:
        self.backend = backend
        self.limit = quota_bytes or DEFAULT_QUOTA
        self.member_id = member_id
        self.alarms = alarms  # (member id, alarm type)

    def _set(self, key: tuple[int, int], raised: bool) -> None:
        """Raise or disarm an alarm, then store that (a failure to store it is logged: the alarm
        is in force in memory all the same)."""
        if raised:
            self.alarms.add(key)
        else:
            self.alarms.discard(key)
        batch = CommitBatch(meta={f"{ALARM_PREFIX}{key[0]}/{key[1]}": int(raised)})
        stored = self.backend.writer.run(self.backend.commit, batch)
        stored.add_done_callback(_log_failure)

    def check(self, cost: int) -> None:
        """Refuse a write of ``cost`` bytes when the alarm is on or it would not fit (raising it)."""
        if cost <= 0:
            return
        if (self.member_id, NOSPACE) in self.alarms:
            raise errors.no_space()
        if self.backend.disk_bytes + cost >= self.limit:
            self._set((self.member_id, NOSPACE), True)
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
            self._set(key, True)
            return _members([key])
        if key in self.alarms:  # DEACTIVATE
            self._set(key, False)
            return _members([key])
        return []

    def errors(self) -> list[str]:
        """What StatusResponse.errors lists (etcd: one line per active alarm)."""
        return [f"memberID:{member} alarm:{rpc_pb2.AlarmType.Name(kind)} " for member, kind in sorted(self.alarms)]


def _log_failure(stored: asyncio.Future) -> None:
    if not stored.cancelled() and stored.exception() is not None:
        log.error("could not store an alarm change: %s", stored.exception())


def _members(keys: Iterable[tuple[int, int]]) -> list[rpc_pb2.AlarmMember]:
    # protobuf takes an enum field's number, which its stubs do not say
    return [rpc_pb2.AlarmMember(memberID=member, alarm=kind) for member, kind in keys]  # type: ignore[arg-type]


def put_cost(request: rpc_pb2.PutRequest) -> int:
    return KV_OVERHEAD + len(request.key) + len(request.value)


def txn_cost(request: rpc_pb2.TxnRequest) -> int:
    """The largest cost of either branch (etcd's costTxn), counting only puts (deletes free space)."""

    def branch(ops: Sequence[rpc_pb2.RequestOp]) -> int:
        total = 0
        for op in ops[:]:  # sliced: see apply.check_txn
            if op.HasField("request_put"):
                total += put_cost(op.request_put)
            elif op.HasField("request_txn"):
                total += txn_cost(op.request_txn)
        return total

    return max(branch(request.success), branch(request.failure))
