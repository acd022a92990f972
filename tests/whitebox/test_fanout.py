"""Fan-out rounds (gateway/watchcache/fanout.py): a change after a quiet spell wakes its watchers at
once; the changes that follow within the pace the round set wait, and each watcher gets them in one
batch; a watcher whose selection a change does not concern is not woken."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.watchcache.entries import CacheEvent, Entry
from protokube.gateway.watchcache.fanout import FanOut
from protokube.gateway.watchcache.watcher import Bookmark, CacheWatcher, Item

WATCHERS = 500
# 2 ms a watcher: the round that wakes them makes the next wait 1 s, far longer than the test's steps
# take even on a loaded machine (with the server's 0.1 ms, 50 ms: a loaded CI run passed it).
PACE = 0.002


def _event(revision: int, namespace: str = "ns") -> CacheEvent:
    view = SimpleNamespace(size=1)  # what a watcher reads of a cached object: its size
    entry = Entry(f"{namespace}/o{revision}", namespace, {}, (), (), view)  # type: ignore[arg-type]
    return CacheEvent("ADDED", revision, entry, None)


async def _rounds() -> tuple[list[list[int]], list[list[int]]]:
    fanout = FanOut(PACE)
    watchers = [
        CacheWatcher(Filter("", EVERYTHING, NO_FIELDS), deadline=1e18, start_revision=0) for _ in range(WATCHERS)
    ]
    elsewhere = CacheWatcher(Filter("other", EVERYTHING, NO_FIELDS), deadline=1e18, start_revision=0)
    for watcher in [*watchers, elsewhere]:
        fanout.add(watcher)
    streams = [watcher.batches() for watcher in watchers]
    pending = [asyncio.ensure_future(anext(stream)) for stream in streams]
    other = asyncio.ensure_future(anext(elsewhere.batches()))
    await asyncio.sleep(0)  # every stream waits

    assert fanout.offer(_event(1)) == []
    await asyncio.sleep(0)
    assert all(task.done() for task in pending)  # at once: the resource was quiet
    first = [task.result() for task in pending]

    pending = [asyncio.ensure_future(anext(stream)) for stream in streams]
    await asyncio.sleep(0)
    fanout.offer(_event(2))
    fanout.offer(_event(3))
    await asyncio.sleep(0.005)
    assert not any(task.done() for task in pending)  # within the pace: they wait for the next round
    second = await asyncio.wait_for(asyncio.gather(*pending), WATCHERS * PACE + 5)
    assert not other.done()  # none of the changes concerned it
    other.cancel()
    return _revisions(first), _revisions(second)


def _revisions(batches: list[list[Item]]) -> list[list[int]]:
    return [[item.revision if isinstance(item, Bookmark) else item[0].revision for item in batch] for batch in batches]


def test_rounds_coalesce_what_arrives_within_the_pace() -> None:
    first, second = asyncio.run(_rounds())
    assert first == [[1]] * WATCHERS
    assert second == [[2, 3]] * WATCHERS
