"""Group commit: many concurrent write requests turned into one commit.

Write requests (put, delete, txn, compaction, lease grant/revoke) are queued. The committer
takes every request waiting, evaluates them in order against a WriteView (each sees the
effects of the earlier ones and gets its own revision), writes all their changes in ONE SQLite
transaction on the writer thread, and only after that commit is durable applies them to the
in-memory store, answers every request and publishes the events to the watch hub.

A commit costs the same however few requests it carries (an fsync, and the hand-overs between
the event loop and the writer thread), so under concurrency the committer gathers: while fewer
requests wait than the last commit carried plus those that arrived while it ran, it waits for
more, at most as long as that commit took (the answered clients' next requests are on their way,
and requests that arrived during a commit come from clients it did not carry, whose next ones
follow). A lone client never waits: its last commit carried one request and none came meanwhile;
nor do a few steady clients that all fit in one commit.

The committer is a few callbacks on the event loop, not a task: a commit starts from a callback, and
the writer thread's outcome comes back as one callback that applies it and answers its requests
(no future, task step or turn of the loop between the durable commit and the answers).

With batching off (--no-group-commit) every request gets a commit of its own.

A durable commit that cannot then be applied in memory (or answered and published) leaves the memory
no longer matching the disk: as etcd panics when it cannot apply a committed entry, the process ends
at once (``exit_inconsistent``), before it serves anything more from that memory, and its supervisor
(the gateway's, for the embedded storage) starts it again from the disk.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections import deque
from collections.abc import Callable
from typing import Any, Final, NoReturn, TypeVar

from protokube.server import errors
from protokube.server.backend import CommitBatch, SqliteBackend
from protokube.server.errors import StorageError
from protokube.server.lessor import Lessor
from protokube.server.mvcc import Batch, MvccStore, WriteView
from protokube.server.watchhub import WatchHub

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")
Evaluate = Callable[[WriteView, Any], object]  # an apply.evaluate_* function: (view, request) -> response
Answered = list[tuple[asyncio.Future, object]]  # the requests a batch answers, with their responses

MAX_BATCH: Final = 1024  # requests per commit
EXIT_INCONSISTENT: Final = 70  # sysexits' EX_SOFTWARE: the process ended on an internal error


def exit_inconsistent(err: BaseException) -> NoReturn:
    """End the process now: a durable commit could not be applied in memory (see the module's doc)."""
    log.critical("a durable commit could not be applied in memory: exiting, to start again from the disk", exc_info=err)
    logging.shutdown()  # the message is written before the process ends
    os._exit(EXIT_INCONSISTENT)


class GroupCommitter:
    _loop: asyncio.AbstractEventLoop  # the running loop, from start() on

    def __init__(
        self,
        store: MvccStore,
        hub: WatchHub,
        *,
        batching: bool = True,
        on_inconsistent: Callable[[BaseException], object] = exit_inconsistent,
    ) -> None:
        self.store = store
        self.backend: SqliteBackend = store.backend
        self.lessor: Lessor = store.lessor
        self.hub = hub
        self.batching = batching
        self.on_inconsistent = on_inconsistent
        self.writes = 0  # write requests committed
        self._waiting: deque[tuple[Evaluate, object, asyncio.Future]] = deque()
        self._running = False
        self._committing = False  # a commit is with the writer thread (or being evaluated)
        self._scheduled = False  # a commit is due at the loop's next turn
        self._timer: asyncio.TimerHandle | None = None  # ends the wait for `_aim` requests
        self._aim = 0  # requests the next commit waits for
        self._took = 0.0  # the last commit's seconds: the longest the next one waits for them

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running = True

    async def stop(self) -> None:
        """Refuse new writes and fail those not yet taken. A commit with the writer thread ends as it
        would have: its requests are then failed too, and the process's state is not changed."""
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._waiting:
            _, _, fut = self._waiting.popleft()
            if not fut.done():
                fut.set_exception(errors.stopped())

    def submit(self, evaluate: Callable[[WriteView, R], T], request: R) -> asyncio.Future[T]:
        """Queue a write, ``evaluate(view, request)`` in its batch; the returned future settles with its
        response once its commit is durable.

        A plain function, not a coroutine: callers await the future itself (one coroutine less per write)."""
        if not self._running:
            raise errors.stopped()
        fut = self._loop.create_future()
        self._waiting.append((evaluate, request, fut))
        self._next()
        return fut

    # --- the commits: callbacks on the loop, no task -----------------------------------------
    def _next(self) -> None:
        """Start the next commit once the writer is free and enough requests wait: as many as the last
        commit carried plus those that came while it ran, or fewer once the last commit's duration has
        passed since the first of them waited. It starts at the loop's next turn, so that the requests
        that came in this turn go with it."""
        if self._committing or self._scheduled or not self._waiting:
            return
        if self.batching and len(self._waiting) < self._aim:
            if self._timer is None:
                self._timer = self._loop.call_later(self._took, self._commit)
            return
        self._scheduled = True
        self._loop.call_soon(self._commit)

    def _commit(self) -> None:
        self._scheduled = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._committing or not self._waiting or not self._running:
            return
        waiting = self._waiting
        count = min(len(waiting), MAX_BATCH) if self.batching else 1
        items = [waiting.popleft() for _ in range(count)]
        self._committing = True
        started = self._loop.time()
        batch, answered = self._evaluate(items)
        if batch.has_writes():
            record = CommitBatch(
                rows=batch.rows,
                leases_granted=list(batch.leases_granted.items()),
                leases_revoked=list(batch.leases_revoked),
                meta=batch.meta,
            )
            done = functools.partial(self._durable, batch, answered, count, started)
            self.backend.writer.call(self._loop, done, self.backend.commit, record)
            return
        try:
            self._answer(batch, answered)
        finally:
            self._committed(count, started)

    def _evaluate(self, items: list[tuple[Evaluate, object, asyncio.Future]]) -> tuple[Batch, Answered]:
        """Evaluate the requests in order against one batch; fail those that fail on their own."""
        batch = Batch(self.store)
        answered: Answered = []
        for evaluate, request, fut in items:
            if fut.done():  # the client went away before we got to it
                continue
            view = WriteView(batch)
            try:
                response = evaluate(view, request)
            except StorageError as exc:
                fut.set_exception(exc)
                continue
            except Exception:
                log.exception("write request failed")
                fut.set_exception(errors.internal())
                continue
            view.commit_to_batch()
            answered.append((fut, response))
        return batch, answered

    def _durable(
        self,
        batch: Batch,
        answered: Answered,
        count: int,
        started: float,
        _: object,
        exc: BaseException | None,
    ) -> None:
        """The writer thread's outcome of a commit, on the loop: apply it and answer its requests."""
        try:
            if not self._running:  # stopped meanwhile: the process's state is no longer kept
                _fail(answered, errors.stopped())
            elif exc is not None:  # nothing was applied: memory still matches the disk
                log.warning("commit failed: %s", exc)
                _fail(answered, errors.commit_failed(exc))
            else:
                self._apply_durable(batch, answered)
        finally:
            self._committed(count, started)

    def _apply_durable(self, batch: Batch, answered: Answered) -> None:
        try:
            self._apply(batch)
            self._answer(batch, answered)
        except Exception as err:  # the disk has the batch; the memory, its watchers and clients may not
            _fail(answered, errors.internal())
            self.on_inconsistent(err)

    def _answer(self, batch: Batch, answered: Answered) -> None:
        self.writes += len(answered)
        for fut, response in answered:
            if not fut.done():
                fut.set_result(response)
        if batch.events:
            self.hub.publish(batch.events)

    def _committed(self, count: int, started: float) -> None:
        """The writer is free: aim the next commit and start it when it is due."""
        self._took = self._loop.time() - started
        # Its clients' next requests are on their way, and those that came while it ran are from
        # other clients, whose next ones will follow them.
        self._aim = min(count + len(self._waiting), MAX_BATCH)
        self._committing = False
        self._next()

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


def _fail(answered: Answered, exc: BaseException) -> None:
    for fut, _ in answered:
        if not fut.done():
            fut.set_exception(exc)
