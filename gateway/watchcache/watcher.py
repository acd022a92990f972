"""One watch served from the watch cache (upstream's cacheWatcher).

The cache's fan-out (fanout.py) works out what a change is *for a watcher's selection* (an object
that stops matching the selectors is DELETED, one that starts matching is ADDED), queues it here
with that type and wakes the stream, which hands out everything queued in one batch (so one write),
and bookmarks when due. A stream that can write without waiting (``push``: its connection takes
bytes now) is not woken at all while it waits: the round hands the batch to ``push`` itself, which
spares each watcher's write a task switch and the stream's steps around it.

A watch that starts at a past resourceVersion first gets the cache's events since then (its
backlog, as large as the cache's window). Live events go to a bounded queue: a watcher whose client
stops reading falls behind, and once MAX_QUEUED live events wait it is closed and its queues
dropped, as upstream closes unresponsive watchers (apiserver_terminated_watchers_total); its client
re-watches from the last resourceVersion it saw.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass

from protokube.gateway.selectors import Filter
from protokube.gateway.watchcache.entries import CacheEvent, Entry, entry_fields

log = logging.getLogger("protokube.watchcache")

# Seconds between periodic bookmarks (upstream: about a minute), and before the deadline.
BOOKMARK_INTERVAL = 60.0
FINAL_BOOKMARK_LEAD = 2.0
MAX_QUEUED = 10_000
# Events per batch, so per write: a client that reads slowly holds at most one write's bytes here
# (bounded in events, and in the objects' bytes, which the encoded frames follow).
MAX_BATCH = 500
MAX_BATCH_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Bookmark:
    revision: int


# A change as a watcher sees it (the event and its type for the watcher's selection).
Change = tuple[CacheEvent, str]
# What a watcher hands out: changes, and bookmarks.
Item = Change | Bookmark
# Writes the batch ``take()`` hands out now, if its connection takes it without waiting; whether it did.
Push = Callable[[Callable[[], list[Item]]], bool]


def _matches(flt: Filter, entry: Entry) -> bool:
    return flt.matches(entry.namespace, entry.labels, lambda: entry_fields(entry))


def change_type(flt: Filter, event: CacheEvent) -> str | None:
    """What the change is for the selection ``flt``, or None when it does not concern it."""
    was = event.prev is not None and _matches(flt, event.prev)
    if event.type == "DELETED":
        return "DELETED" if was else None
    if _matches(flt, event.entry):
        return "MODIFIED" if was else "ADDED"
    return "DELETED" if was else None


class CacheWatcher:
    def __init__(
        self,
        flt: Filter,
        deadline: float,
        start_revision: int,
        *,
        bookmarks: bool = False,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        progress: Callable[[], int] = lambda: 0,
        on_unresponsive: Callable[[], None] = lambda: None,
    ) -> None:
        self.filter = flt
        self.bookmarks = bookmarks
        self.deadline = deadline
        self.revision = start_revision  # events up to here are not for this watcher
        # The revision it goes live at: its start, or its last event from before (upstream's
        # cacheWatcher.process); a bookmark not newer than that tells the client nothing and is not sent.
        self.live_from = start_revision
        self.progress = progress  # the revision up to which every change has been queued (the cache's)
        self.bookmark_interval = bookmark_interval
        self.backlog: deque[Change] = deque()  # the events since start_revision, when it is in the past
        self.queue: deque[Change] = deque()  # live events (at most MAX_QUEUED)
        self.on_unresponsive = on_unresponsive
        self.push: Push | None = None  # the stream's, once it writes live changes
        self.closed = False
        self._waiting: asyncio.Future[None] | None = None  # the stream's, while it waits
        self._timer: asyncio.TimerHandle | None = None  # wakes the stream at _timer_at (bookmark, deadline)
        self._timer_at = 0.0

    def catch_up(self, events: Iterable[CacheEvent]) -> None:
        """Queue the events since the start revision (before any live one)."""
        for event in events:
            if event.revision > self.revision:
                event_type = change_type(self.filter, event)
                if event_type is not None:
                    self.backlog.append((event, event_type))
                    self.live_from = event.revision

    def offer(self, change: Change) -> bool:
        """Queue a live change (the fan-out wakes the stream); False when the watcher is closed (or
        closes now, too far behind)."""
        if self.closed:
            return False
        if change[0].revision <= self.revision:
            return True
        queue = self.queue
        queue.append(change)
        if len(queue) > MAX_QUEUED:
            self.backlog.clear()  # unresponsive: what it has not taken goes with it, as upstream drops it
            queue.clear()
            self.close()
            self.on_unresponsive()
            return False
        return True

    def wake(self) -> bool:
        """Hand what is queued to the stream: written here by ``push`` while the stream waits and
        its connection takes it, else the stream woken to write it; whether anything was queued."""
        if not (self.backlog or self.queue):
            return False
        push, waiting = self.push, self._waiting
        if push is not None and waiting is not None and not waiting.done():
            try:
                while push(self._take):
                    if not (self.backlog or self.queue):
                        return True
            except Exception:  # this watch's failure, not the round's: it ends, as upstream's ends on an encoding error
                log.exception("a watch of %s ends: its events could not be written", self.filter)
                self.backlog.clear()
                self.queue.clear()
                self.close()
                return True
        self._notify()
        return True

    def close(self) -> None:
        self.closed = True
        self._notify()

    def _notify(self) -> None:
        """End the stream's wait, if it waits (it looks at the queues and the time before waiting)."""
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    def _take(self) -> list[Item]:
        """What is queued, the backlog first, up to MAX_BATCH changes or MAX_BATCH_BYTES of objects
        (at least one change)."""
        batch: list[Item] = []
        size = 0
        for queue in (self.backlog, self.queue):
            while queue and len(batch) < MAX_BATCH and size < MAX_BATCH_BYTES:
                change = queue.popleft()
                batch.append(change)
                size += change[0].entry.view.size
        return batch

    def _wake_at(self, when: float, now: float) -> None:
        """Have the timer wake the stream at ``when`` (kept across waits: most waits end with a change)."""
        if self._timer is not None:
            if self._timer_at == when:
                return
            self._timer.cancel()
        self._timer_at = when
        self._timer = asyncio.get_running_loop().call_later(max(when - now, 0.001), self._ring)

    def _ring(self) -> None:
        self._timer = None
        self._notify()

    async def batches(self) -> AsyncIterator[list[Item]]:
        """Queued changes as they come (all that wait, in one batch), bookmarks when due, until the deadline."""
        next_bookmark = time.monotonic() + self.bookmark_interval
        final_bookmark_sent = False
        try:
            while True:
                if self.backlog or self.queue:
                    yield self._take()
                    continue
                if self.closed:
                    return
                now = time.monotonic()
                if now >= self.deadline:
                    return
                if self.bookmarks:
                    if not final_bookmark_sent and now >= self.deadline - FINAL_BOOKMARK_LEAD:
                        final_bookmark_sent = True
                        if bookmark := self._bookmark():
                            yield [bookmark]
                        continue
                    if now >= next_bookmark:
                        next_bookmark = now + self.bookmark_interval
                        if bookmark := self._bookmark():
                            yield [bookmark]
                        continue
                    final = self.deadline - FINAL_BOOKMARK_LEAD if not final_bookmark_sent else self.deadline
                    wake_at = min(next_bookmark, final)
                else:
                    wake_at = self.deadline
                self._wake_at(wake_at, now)
                self._waiting = asyncio.get_running_loop().create_future()
                await self._waiting
                self._waiting = None
        finally:
            self._waiting = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _bookmark(self) -> Bookmark | None:
        """Nothing is queued: every change up to the cache's revision has been handed out. Sent
        only when that revision is newer than the one the watch went live at, as upstream."""
        revision = self.progress()
        return Bookmark(revision) if revision > self.live_from else None
