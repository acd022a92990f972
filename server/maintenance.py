"""The Maintenance service: Status (for `etcdctl endpoint status`), Alarm, Defragment.

A single member is its own leader; the raft index is reported as the store revision.
"""

from __future__ import annotations

import asyncio

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server.mvcc import RAFT_TERM, MvccStore
from protokube.server.quota import Quota

API_VERSION = "3.5.17"  # the etcd API and guarantees served (progress notifications ordered)
STORAGE_VERSION = "3.5.0"


class MaintenanceService:
    def __init__(self, store: MvccStore, quota: Quota) -> None:
        self.store = store
        self.quota = quota

    async def Status(self, request: rpc_pb2.StatusRequest, context) -> rpc_pb2.StatusResponse:
        backend = self.store.backend
        loop = asyncio.get_running_loop()
        db_size, in_use = await loop.run_in_executor(backend.read_executor, backend.sizes)
        rev = self.store.rev
        return rpc_pb2.StatusResponse(
            header=self.store.header(),
            version=API_VERSION,
            dbSize=db_size,
            leader=self.store.member_id,
            raftIndex=rev,
            raftTerm=RAFT_TERM,
            raftAppliedIndex=rev,
            dbSizeInUse=in_use,
            storageVersion=STORAGE_VERSION,
            dbSizeQuota=self.quota.limit,
            errors=self.quota.errors(),
        )

    async def Alarm(self, request: rpc_pb2.AlarmRequest, context) -> rpc_pb2.AlarmResponse:
        return rpc_pb2.AlarmResponse(header=self.store.header(), alarms=self.quota.alarm(request))

    async def Defragment(self, request: rpc_pb2.DefragmentRequest, context) -> rpc_pb2.DefragmentResponse:
        backend = self.store.backend
        await backend.writer.run(backend.vacuum)
        return rpc_pb2.DefragmentResponse(header=self.store.header())
