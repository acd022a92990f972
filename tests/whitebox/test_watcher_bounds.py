"""A watcher's memory is bounded: a client that stops reading is dropped with its queue once it is
MAX_QUEUED events behind, and a slow one gets frames of at most MAX_BATCH events (found by the soak:
slow readers held every event they had not read, in one ever larger frame)."""

from __future__ import annotations

import asyncio

from gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from gateway.watchcache.entries import CacheEvent, Entry
from gateway.watchcache.watcher import MAX_BATCH, MAX_QUEUED, CacheWatcher


def _event(revision: int) -> CacheEvent:
    entry = Entry(f"ns/o{revision}", "ns", {}, (), (), None)  # type: ignore[arg-type]
    return CacheEvent("ADDED", revision, entry, None)


def _watcher() -> CacheWatcher:
    return CacheWatcher(Filter("", EVERYTHING, NO_FIELDS), deadline=1e18, start_revision=0)


async def _batches(watcher: CacheWatcher, count: int) -> list[int]:
    sizes = []
    stream = watcher.batches()
    for _ in range(count):
        sizes.append(len(await asyncio.wait_for(anext(stream), 1)))
    return sizes


def test_batches_are_bounded() -> None:
    watcher = _watcher()
    for revision in range(1, 2 * MAX_BATCH + 11):
        assert watcher.offer(_event(revision))
    assert asyncio.run(_batches(watcher, 3)) == [MAX_BATCH, MAX_BATCH, 10]


def test_an_unresponsive_watcher_is_dropped_with_its_queue() -> None:
    watcher = _watcher()
    results = [watcher.offer(_event(revision)) for revision in range(1, MAX_QUEUED + 2)]
    assert results[-1] is False and all(results[:-1])
    assert watcher.closed and not watcher.queue

    async def drained() -> list:
        return [batch async for batch in watcher.batches()]

    assert asyncio.run(drained()) == []  # the stream ends at once, nothing more is sent
