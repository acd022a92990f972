"""Group commit: one writer coroutine turns many concurrent write requests into one commit.

Write requests (put, delete, txn, compaction, lease grant/revoke) are queued. The writer
takes every request waiting, evaluates them in order against a WriteView (each sees the
effects of the earlier ones and gets its own revision), writes all their changes in ONE SQLite
transaction on the writer thread, and only after that commit is durable applies them to the
in-memory store, answers every request and publishes the events to the watch hub.

A commit costs the same however few requests it carries (an fsync, and the hand-overs between
the event loop and the writer thread), so under concurrency the writer gathers: while fewer
requests wait than the last commit carried plus those that arrived while it ran, it waits for
more, at most as long as that commit took (the answered clients' next requests are on their way,
and requests that arrived during a commit come from clients it did not carry, whose next ones
follow). A lone client never waits: its last commit carried one request and none came meanwhile;
nor do a few steady clients that all fit in one commit.

With batching off (--no-group-commit) every request gets a commit of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from protokube.server import errors
from protokube.server.backend import CommitBatch, SqliteBackend
from protokube.server.errors import StorageError
from protokube.server.lessor import Lessor
from protokube.server.mvcc import Batch, MvccStore, WriteView
from protokube.server.watchhub import WatchHub

log = logging.getLogger(__name__)

T = TypeVar("T")
Evaluate = Callable[[WriteView], object]

MAX_BATCH = 1024  # requests per commit


class GroupCommitter:
    def __init__(self, store: MvccStore, hub: WatchHub, *, batching: bool = True) -> None:
        self.store = store
        self.backend: SqliteBackend = store.backend
        self.lessor: Lessor = store.lessor
        self.hub = hub
        self.batching = batching
        self.writes = 0  # write requests committed
        self._waiting: deque[tuple[Evaluate, asyncio.Future]] = deque()
        self._wake: asyncio.Future | None = None  # the waiting writer's: resolved once `_wanted` requests wait
        self._wanted = 1
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name="group-commit")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while self._waiting:
            _, fut = self._waiting.popleft()
            if not fut.done():
                fut.set_exception(errors.stopped())

    def submit(self, evaluate: Callable[[WriteView], T]) -> asyncio.Future[T]:
        """Queue a write; the returned future settles with its response once its commit is durable.

        A plain function, not a coroutine: callers await the future itself (one coroutine less per write)."""
        if self._task is None or self._task.done():
            raise errors.stopped()
        fut = self._loop.create_future()
        self._waiting.append((evaluate, fut))
        if self._wake is not None and len(self._waiting) >= self._wanted:
            _resolve(self._wake)
        return fut

    async def _run(self) -> None:
        waiting, loop = self._waiting, self._loop
        aim, took = 0, 0.0  # requests the next commit waits for; the last commit's seconds
        while True:
            if not waiting:
                await self._until(1, None)
            if self.batching and len(waiting) < aim:
                await self._until(aim, took)
            count = min(len(waiting), MAX_BATCH) if self.batching else 1
            started = loop.time()
            await self._commit([waiting.popleft() for _ in range(count)])
            took = loop.time() - started
            # Its clients' next requests are on their way, and those that came while it ran are from
            # other clients, whose next ones will follow them.
            aim = min(count + len(waiting), MAX_BATCH)

    async def _until(self, wanted: int, timeout: float | None) -> None:
        """Until `wanted` requests wait, or `timeout` seconds have passed."""
        self._wake, self._wanted = self._loop.create_future(), wanted
        timer = None if timeout is None else self._loop.call_later(timeout, _resolve, self._wake)
        try:
            await self._wake
        finally:
            self._wake = None
            if timer is not None:
                timer.cancel()

    async def _commit(self, items: list[tuple[Evaluate, asyncio.Future]]) -> None:
        batch = Batch(self.store)
        answered: list[tuple[asyncio.Future, object]] = []
        for evaluate, fut in items:
            if fut.done():  # the client went away before we got to it
                continue
            view = WriteView(batch)
            try:
                response = evaluate(view)
            except StorageError as exc:
                fut.set_exception(exc)
                continue
            except Exception:
                log.exception("write request failed")
                fut.set_exception(StorageError(errors.StatusCode.INTERNAL, "etcdserver: internal error"))
                continue
            view.commit_to_batch()
            answered.append((fut, response))
        if batch.has_writes():
            record = CommitBatch(
                rows=batch.rows,
                leases_granted=list(batch.leases_granted.items()),
                leases_revoked=list(batch.leases_revoked),
                meta=batch.meta,
            )
            try:
                await self.backend.writer.run(self.backend.commit, record)
            except Exception as exc:  # nothing was applied: memory still matches the disk
                log.warning("commit failed: %s", exc)
                for fut, _ in answered:
                    if not fut.done():
                        fut.set_exception(errors.commit_failed(exc))
                return
            self._apply(batch)
        self.writes += len(answered)
        for fut, response in answered:
            if not fut.done():
                fut.set_result(response)
        if batch.events:
            self.hub.publish(batch.events)
        for hook in batch.after_commit:
            hook()

    def _apply(self, batch: Batch) -> None:
        """Make a durable batch visible: store state, leases, compacted revision."""
        self.store.apply(batch.overlay, batch.rev)
        lessor = self.lessor
        for lease_id, ttl in batch.leases_granted.items():
            lessor.grant(lease_id, ttl)
        for _, events in batch.events:
            for ev in events:
                old = ev.prev.lease if ev.prev is not None else 0
                new = ev.entry.lease if ev.entry is not None else 0
                if old != new:
                    lessor.attach(ev.key, old, new)
        for lease_id in batch.leases_revoked:
            lessor.revoke(lease_id)
        if "compacted" in batch.meta:
            self.store.compacted = batch.meta["compacted"]


def _resolve(wake: asyncio.Future) -> None:
    if not wake.done():
        wake.set_result(None)
