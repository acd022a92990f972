"""The Lease service, and the loop that revokes expired leases (deleting their keys)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import grpc

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import apply
from protokube.server.errors import StorageError
from protokube.server.groupcommit import GroupCommitter
from protokube.server.mvcc import MvccStore
from protokube.server.quota import LEASE_COST, Quota
from protokube.server.rpc import require_valid

log = logging.getLogger(__name__)


class LeaseService:
    def __init__(self, store: MvccStore, committer: GroupCommitter, quota: Quota, check_interval: float = 0.5) -> None:
        self.store = store
        self.quota = quota
        self.lessor = store.lessor
        self.committer = committer
        self.check_interval = check_interval
        self._task: asyncio.Task | None = None
        self._revokes: set[asyncio.Task] = set()

    async def LeaseGrant(self, request: rpc_pb2.LeaseGrantRequest, context) -> rpc_pb2.LeaseGrantResponse:
        self.quota.check(LEASE_COST)
        return await self.committer.submit(apply.evaluate_lease_grant, request)

    async def LeaseRevoke(self, request: rpc_pb2.LeaseRevokeRequest, context) -> rpc_pb2.LeaseRevokeResponse:
        return await self.committer.submit(apply.evaluate_lease_revoke, request.ID)

    async def LeaseKeepAlive(self, request_iterator, context: grpc.aio.ServicerContext) -> None:
        while True:
            request = await context.read()
            if request is grpc.aio.EOF:
                return
            require_valid(request)
            ttl = self.lessor.renew(request.ID)  # 0: no such lease (etcd answers, not errors)
            await context.write(rpc_pb2.LeaseKeepAliveResponse(header=self.store.header(), ID=request.ID, TTL=ttl))

    async def LeaseTimeToLive(
        self, request: rpc_pb2.LeaseTimeToLiveRequest, context
    ) -> rpc_pb2.LeaseTimeToLiveResponse:
        lease = self.lessor.leases.get(request.ID)
        if lease is None:  # etcd answers TTL -1 rather than an error
            return rpc_pb2.LeaseTimeToLiveResponse(header=self.store.header(), ID=request.ID, TTL=-1)
        response = rpc_pb2.LeaseTimeToLiveResponse(
            header=self.store.header(), ID=lease.id, TTL=lease.remaining(), grantedTTL=lease.ttl
        )
        if request.keys:
            response.keys.extend(sorted(lease.keys))
        return response

    async def LeaseLeases(self, request: rpc_pb2.LeaseLeasesRequest, context) -> rpc_pb2.LeaseLeasesResponse:
        return rpc_pb2.LeaseLeasesResponse(
            header=self.store.header(), leases=[rpc_pb2.LeaseStatus(ID=i) for i in self.lessor.leases]
        )

    # --- expiry -------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._expiry_loop(), name="lease-expiry")

    async def stop(self) -> None:
        for task in [self._task, *self._revokes]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _expiry_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.check_interval)
            for lease_id in self.lessor.expired():
                self.lessor.leases[lease_id].revoking = True
                task = loop.create_task(self._revoke_expired(lease_id))
                self._revokes.add(task)
                task.add_done_callback(self._revokes.discard)

    async def _revoke_expired(self, lease_id: int) -> None:
        try:
            await self.committer.submit(apply.evaluate_lease_revoke, lease_id)
        except StorageError as exc:
            lease = self.lessor.leases.get(lease_id)
            if lease is not None:  # still there: try again at the next check
                log.warning("revoking expired lease %x failed: %s", lease_id, exc.message)
                lease.revoking = False
