"""A watcher's memory is bounded: a client that stops reading is dropped with its queue once it is
MAX_QUEUED events behind, and a slow one gets frames of at most MAX_BATCH events and about
MAX_BATCH_BYTES (found by the soak: slow readers held every event they had not read, in one ever
larger frame)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.watchcache.entries import CacheEvent, Entry
from protokube.gateway.watchcache.watcher import MAX_BATCH, MAX_BATCH_BYTES, MAX_QUEUED, CacheWatcher, Change


def _event(revision: int, size: int = 100) -> CacheEvent:
    view = SimpleNamespace(size=size)  # what a watcher reads of a cached object: its size
    entry = Entry(f"ns/o{revision}", "ns", {}, (), (), view)  # type: ignore[arg-type]
    return CacheEvent("ADDED", revision, entry, None)


def _change(revision: int, size: int = 100) -> Change:
    return _event(revision, size), "ADDED"


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
        assert watcher.offer(_change(revision))
    assert asyncio.run(_batches(watcher, 3)) == [MAX_BATCH, MAX_BATCH, 10]


def test_batches_of_large_objects_are_bounded_in_bytes() -> None:
    """A write holds about MAX_BATCH_BYTES of objects (at least one, however large)."""
    watcher = _watcher()
    third = MAX_BATCH_BYTES // 3 + 1
    for revision in range(1, 8):
        assert watcher.offer(_change(revision, third))
    assert watcher.offer(_change(8, 3 * MAX_BATCH_BYTES))
    assert watcher.offer(_change(9))
    assert asyncio.run(_batches(watcher, 4)) == [3, 3, 2, 1]


def test_an_unresponsive_watcher_is_dropped_with_its_queue() -> None:
    watcher = _watcher()
    results = [watcher.offer(_change(revision)) for revision in range(1, MAX_QUEUED + 2)]
    assert results[-1] is False and all(results[:-1])
    assert watcher.closed and not watcher.queue

    async def drained() -> list:
        return [batch async for batch in watcher.batches()]

    assert asyncio.run(drained()) == []  # the stream ends at once, nothing more is sent


def test_a_backlog_larger_than_the_live_bound_is_delivered() -> None:
    """A watch from an old resourceVersion of a large cache window gets its whole backlog: only live
    events count against MAX_QUEUED (before, such a watch closed at once, and its client re-watched
    from the same resourceVersion in a loop)."""
    watcher = _watcher()
    watcher.catch_up(_event(revision) for revision in range(1, MAX_QUEUED + 2))
    assert watcher.offer(_change(MAX_QUEUED + 2)) and not watcher.closed

    async def all_revisions() -> list[int]:
        watcher.deadline = 0  # ends once everything queued is out
        return [item[0].revision async for batch in watcher.batches() for item in batch]

    assert asyncio.run(all_revisions()) == list(range(1, MAX_QUEUED + 3))
