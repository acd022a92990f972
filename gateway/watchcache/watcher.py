"""One watch served from the watch cache (upstream's cacheWatcher).

The cache offers it every event; it decides what the event is *for this watcher* (an object that
stops matching the selectors is DELETED, one that starts matching is ADDED), queues it with that
type and wakes the stream, which hands out what is queued in batches, and bookmarks when due.

A watch that starts at a past resourceVersion first gets the cache's events since then (its
backlog, as large as the cache's window). Live events go to a bounded queue: a watcher whose client
stops reading falls behind, and once MAX_QUEUED live events wait it is closed and its queues
dropped, as upstream closes unresponsive watchers (apiserver_terminated_watchers_total); its client
re-watches from the last resourceVersion it saw.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass

from gateway.selectors import Filter
from gateway.watchcache.entries import CacheEvent, Entry, entry_fields

# Seconds between periodic bookmarks (upstream: about a minute), and before the deadline.
BOOKMARK_INTERVAL = 60.0
FINAL_BOOKMARK_LEAD = 2.0
MAX_QUEUED = 10_000
# Events per batch, so per frame: a client that reads slowly holds at most one frame's bytes here.
MAX_BATCH = 500


@dataclass(frozen=True, slots=True)
class Bookmark:
    revision: int


# A change as this watcher sees it (the event and its type for this watcher), or a bookmark.
Item = tuple[CacheEvent, str] | Bookmark


class CacheWatcher:
    def __init__(
        self,
        flt: Filter,
        deadline: float,
        start_revision: int,
        *,
        bookmarks: bool = False,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        on_unresponsive: Callable[[], None] = lambda: None,
    ) -> None:
        self.filter = flt
        self.bookmarks = bookmarks
        self.deadline = deadline
        self.revision = start_revision  # events up to here are not for this watcher
        self.synced = start_revision  # everything up to here has been queued
        self.bookmark_interval = bookmark_interval
        self.backlog: deque[Item] = deque()  # the events since start_revision, when it is in the past
        self.queue: deque[Item] = deque()  # live events (at most MAX_QUEUED)
        self.on_unresponsive = on_unresponsive
        self.wakeup = asyncio.Event()
        self.closed = False

    def _matches(self, entry: Entry) -> bool:
        return self.filter.matches(entry.namespace, entry.labels, lambda: entry_fields(entry))

    def event_type(self, event: CacheEvent) -> str | None:
        """What the change is for this watcher's selection, or None when it does not concern it."""
        was = event.prev is not None and self._matches(event.prev)
        if event.type == "DELETED":
            return "DELETED" if was else None
        now = self._matches(event.entry)
        if now:
            return "MODIFIED" if was else "ADDED"
        return "DELETED" if was else None

    def catch_up(self, events: Iterable[CacheEvent]) -> None:
        """Queue the events since the start revision (before any live one)."""
        for event in events:
            self._queue(event, self.backlog)

    def offer(self, event: CacheEvent) -> bool:
        """Queue a live event; False when the watcher is closed (or closes now, too far behind)."""
        if self.closed:
            return False
        if self._queue(event, self.queue) and len(self.queue) > MAX_QUEUED:
            self.backlog.clear()  # unresponsive: what it has not taken goes with it, as upstream drops it
            self.queue.clear()
            self.close()
            self.on_unresponsive()
            return False
        return True

    def _queue(self, event: CacheEvent, queue: deque[Item]) -> bool:
        """Queue the event with its type for this watcher if it concerns it; True if queued."""
        if event.revision <= self.revision:
            return False
        event_type = self.event_type(event)
        self.synced = event.revision
        if event_type is None:
            return False
        queue.append((event, event_type))
        self.wakeup.set()
        return True

    def synced_to(self, revision: int) -> None:
        self.synced = max(self.synced, revision)

    def close(self) -> None:
        self.closed = True
        self.wakeup.set()

    async def batches(self) -> AsyncIterator[list[Item]]:
        """Queued changes as they come (batched), bookmarks when due, until the deadline."""
        next_bookmark = time.monotonic() + self.bookmark_interval
        final_bookmark_sent = False
        while True:
            if self.backlog or self.queue:
                queue = self.backlog or self.queue
                yield [queue.popleft() for _ in range(min(len(queue), MAX_BATCH))]
                continue
            if self.closed:
                return
            now = time.monotonic()
            if now >= self.deadline:
                return
            if self.bookmarks:
                if not final_bookmark_sent and now >= self.deadline - FINAL_BOOKMARK_LEAD:
                    final_bookmark_sent = True
                    yield [Bookmark(self.synced)]
                    continue
                if now >= next_bookmark:
                    next_bookmark = now + self.bookmark_interval
                    yield [Bookmark(self.synced)]
                    continue
                wake_at = min(
                    next_bookmark, self.deadline - FINAL_BOOKMARK_LEAD if not final_bookmark_sent else self.deadline
                )
            else:
                wake_at = self.deadline
            self.wakeup.clear()
            # A timer wakes us for the next bookmark or the deadline; cheaper than asyncio.wait_for,
            # which costs a task per wait (and a watcher waits once per event it delivers).
            timer = asyncio.get_running_loop().call_later(max(wake_at - now, 0.001), self.wakeup.set)
            try:
                await self.wakeup.wait()
            finally:
                timer.cancel()
