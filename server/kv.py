"""The KV service: Range, Put, DeleteRange, Txn, Compact."""

from __future__ import annotations

import asyncio

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import apply, errors
from protokube.server.compaction import Compactor
from protokube.server.groupcommit import GroupCommitter
from protokube.server.mvcc import Batch, MvccStore, WriteView
from protokube.server.quota import Quota, put_cost, txn_cost


class KVService:
    def __init__(
        self, store: MvccStore, committer: GroupCommitter, compactor: Compactor, max_request_bytes: int, quota: Quota
    ) -> None:
        self.store = store
        self.quota = quota
        self.committer = committer
        self.compactor = compactor
        self.max_request_bytes = max_request_bytes

    def _check_size(self, request) -> None:
        # etcd limits the size of requests that go through raft (writes), not of reads.
        if request.ByteSize() > self.max_request_bytes:
            raise errors.request_too_large()

    async def Range(self, request: rpc_pb2.RangeRequest, context) -> bytes:
        apply.check_range(request)
        return await self.store.range(request)

    def Put(self, request: rpc_pb2.PutRequest, context) -> asyncio.Future[bytes]:
        # Not a coroutine: the hottest write hands the committer's future straight to its handler.
        self._check_size(request)
        apply.check_put(request)
        self.quota.check(put_cost(request))
        return self.committer.submit(apply.evaluate_put, request)

    async def DeleteRange(self, request: rpc_pb2.DeleteRangeRequest, context) -> rpc_pb2.DeleteRangeResponse:
        self._check_size(request)
        apply.check_delete(request)
        return await self.committer.submit(apply.evaluate_delete, request)

    async def Txn(self, request: rpc_pb2.TxnRequest, context) -> rpc_pb2.TxnResponse:
        self._check_size(request)
        apply.check_txn(request)
        if apply.is_read_only(request):
            # Reads only: evaluated at once on the committed state, no commit needed.
            return apply.evaluate_txn(WriteView(Batch(self.store)), request)
        self.quota.check(txn_cost(request))
        return await self.committer.submit(apply.evaluate_txn, request)

    async def Compact(self, request: rpc_pb2.CompactionRequest, context) -> rpc_pb2.CompactionResponse:
        return await self.compactor.compact(request.revision, physical=request.physical)
