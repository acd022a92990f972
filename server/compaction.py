"""Compaction: logical (durable, immediate) and physical (history rows removed afterwards),
plus etcd-style periodic auto-compaction that keeps a retention window of history.

A compaction to revision C is first committed like any write (reads below C fail from then
on); the rows it makes unreachable are then deleted in steps on the writer thread, so a large
compaction never holds up commits for long. Progress is persisted (meta 'compact_done'), so a
restart resumes an unfinished physical compaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import apply
from protokube.server.errors import StorageError
from protokube.server.groupcommit import GroupCommitter
from protokube.server.mvcc import MvccStore

log = logging.getLogger(__name__)

STEP_REVS = 2000  # revisions removed per physical-compaction transaction


class Compactor:
    def __init__(self, store: MvccStore, committer: GroupCommitter, *, retention: float, done: int) -> None:
        self.store = store
        self.committer = committer
        self.retention = retention  # seconds of history to keep; 0 disables auto-compaction
        self.done = done  # physically compacted up to this revision
        self._kick = asyncio.Event()
        self._progress = asyncio.Condition()
        self._tasks: list[asyncio.Task] = []

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._physical_loop(), name="compaction-physical"))
        if self.retention > 0:
            self._tasks.append(loop.create_task(self._periodic_loop(), name="compaction-periodic"))
        if self.done < self.store.compacted:
            self._kick.set()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def compact(self, revision: int, *, physical: bool = False) -> rpc_pb2.CompactionResponse:
        """Compact to `revision`; with physical=True return once the history is removed."""
        request = rpc_pb2.CompactionRequest(revision=revision)
        response = await self.committer.submit(apply.evaluate_compact, request)
        self._kick.set()
        if physical:
            async with self._progress:
                await self._progress.wait_for(lambda: self.done >= revision)
        return response

    async def _physical_loop(self) -> None:
        backend = self.store.backend
        while True:
            await self._kick.wait()
            self._kick.clear()
            while self.done < self.store.compacted:
                target = min(self.store.compacted, self.done + STEP_REVS)
                try:
                    await backend.writer.run(backend.compact_step, self.done, target)
                except Exception:
                    log.exception("physical compaction to %d failed; retrying", target)
                    await asyncio.sleep(1.0)
                    continue
                self.done = target
                async with self._progress:
                    self._progress.notify_all()

    async def _periodic_loop(self) -> None:
        """Every tenth of the retention, compact to the newest revision older than the window
        (etcd's periodic compactor samples revisions the same way)."""
        interval = max(self.retention / 10, 0.05)
        samples: deque[tuple[float, int]] = deque()
        while True:
            now = time.monotonic()
            samples.append((now, self.store.rev))
            target = 0
            while samples and samples[0][0] <= now - self.retention:
                target = samples.popleft()[1]
            if target > max(self.store.compacted, 0):
                try:
                    await self.compact(target)
                    log.info("auto-compacted to revision %d", target)
                except StorageError as exc:
                    log.warning("auto-compaction to %d failed: %s", target, exc.message)
            await asyncio.sleep(interval)
