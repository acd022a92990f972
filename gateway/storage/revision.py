"""Storage's current revision for consistent reads, one request at a time for everyone.

A consistent read must see every write acknowledged before it began, so it needs a revision read
from storage after it arrived. Concurrent readers share one Range call: a reader joins the next
call to start (never one already in flight, which may have read storage before the reader came).
"""

from __future__ import annotations

import asyncio

from gateway.storage.etcd import Etcd


class FreshRevision:
    def __init__(self, etcd: Etcd) -> None:
        self.etcd = etcd
        self._next: asyncio.Future[int] | None = None
        self._running: asyncio.Task[None] | None = None

    async def get(self) -> int:
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
            self._running = asyncio.create_task(self._fetch(self._next, self._running))
        return await asyncio.shield(self._next)

    async def _fetch(self, result: asyncio.Future[int], previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        self._next = None  # readers arriving from now on wait for the next call
        try:
            result.set_result(await self.etcd.current_revision())
        except Exception as err:
            result.set_exception(err)
