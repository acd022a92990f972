"""Watch hub: fan-out of committed events to watchers, a ring of recent events, catch-up.

Every commit batch's events are published here (after the commit is durable) in revision
order. A *synced* watcher gets, per publish, one response with all of its matching events.
A watcher that is not synced is *caught up* from its next revision (`next_rev`), page by page:

- from the in-memory ring of recent events while the ring still holds that revision;
- otherwise from the SQLite history, in a task.

It is synced again once its next revision is past the newest one published; the check and the
switch happen with no await between them, so no event is lost or repeated (events published
meanwhile are read from the ring or the history, which hold everything published).

A watcher starts unsynced when it starts at a past revision, and *becomes* unsynced when its
stream's client does not keep up: each stream counts the bytes of responses queued and not yet
written; above the stream's buffer size, publishing skips the stream's watchers (they remember the
first revision they missed) and they are caught up once the queue has drained to half of it. So a
client that stops reading pins at most about one buffer, and the others go on at full speed — as
etcd moves a watcher whose channel is full to its "victims" and catches it up from the backend.

Responses never split a revision; a stream's responses go through one FIFO queue, so a
progress response queued after a watcher's events is sent after them.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import logging
import time
from collections import deque
from typing import Final

from protokube.server.backend import Row, SqliteBackend
from protokube.server.mvcc import MvccStore, in_range
from protokube.server.records import DELETE, PUT, Entry, Event, watch_response
from protokube.server.watchranges import RangeWatchers

log = logging.getLogger(__name__)

PROGRESS_WATCH_ID: Final = -1  # etcd 3.5 answers a stream-wide progress request with watch_id -1
CATCH_UP_PAGE_REVS: Final = 1000  # revisions read from the history per query
MAX_EVENTS_PER_RESPONSE: Final = 1000  # a response may exceed it to keep a revision whole
MAX_RESPONSE_BYTES: Final = 1572864  # etcd's --max-request-bytes default: the largest response, fragments' size
RING_MAX_BYTES: Final = 256 * 1024 * 1024  # the ring also stops growing at this many value bytes
STREAM_BUFFER_BYTES: Final = 16 * 1024 * 1024  # responses queued on a stream before its watchers are paced


def _event_size(ev: Event) -> int:
    """Approximate memory an event pins: its key and the values it holds."""
    size = len(ev.key)
    if ev.entry is not None:
        size += len(ev.entry.value)
    if ev.prev is not None:
        size += len(ev.prev.value)
    return size


class Watcher:
    """One watch of one stream."""

    __slots__ = (
        "canceled",
        "end",
        "fragment",
        "id",
        "key",
        "last_sent",
        "next_rev",
        "no_delete",
        "no_put",
        "prev_kv",
        "progress_notify",
        "stream",
        "synced",
    )

    def __init__(
        self,
        stream: WatchStream,
        watch_id: int,
        key: bytes,
        end: bytes | None,
        *,
        prev_kv: bool = False,
        no_put: bool = False,
        no_delete: bool = False,
        progress_notify: bool = False,
        fragment: bool = False,
    ) -> None:
        self.stream = stream
        self.id = watch_id
        self.key = key
        self.end = end  # None: the single key; b"": every key >= key
        self.prev_kv = prev_kv
        self.no_put = no_put
        self.no_delete = no_delete
        self.progress_notify = progress_notify
        self.fragment = fragment  # large responses may be split (WatchCreateRequest.fragment)
        self.next_rev = 0  # events below this revision are not for this watcher (or already sent)
        self.synced = False  # False: publishing skips it; a catch-up brings it to the newest revision
        self.canceled = False
        self.last_sent = time.monotonic()

    def wants(self, ev: Event) -> bool:
        if ev.rev < self.next_rev:
            return False
        return not (self.no_put if ev.type == PUT else self.no_delete)


class WatchStream:
    """The outgoing side of one gRPC Watch stream: its watchers and its response queue, whose
    queued bytes it counts (`full` above buffer_bytes; room again at half of it).

    Responses that only carry events of one watch and wait next to each other in the queue go out as
    one (``next_response``): a client that reads slower than the events come (flow control then holds
    the writes back) gets them in fewer, larger responses, as etcd batches a slow watcher's events,
    instead of falling further behind at a response a turn. Concatenated, two WatchResponses are one:
    their events in order, the header (its revision) and watch_id of the later."""

    def __init__(self, buffer_bytes: int = STREAM_BUFFER_BYTES, response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        self.watchers: dict[int, Watcher] = {}
        # (response, the watch whose events it only carries or None, how many)
        self._outgoing: deque[tuple[bytes, int | None, int]] = deque()
        self._queued = asyncio.Event()
        self.next_id = 0
        self.progress_pending = False
        self.buffer_bytes = buffer_bytes
        self.response_bytes = response_bytes  # merged responses stay within it
        self.queued_bytes = 0
        self._room = asyncio.Event()
        self._room.set()

    def new_id(self) -> int:
        """etcd assigns IDs from 0 upwards, skipping IDs the client chose itself."""
        while self.next_id in self.watchers:
            self.next_id += 1
        self.next_id += 1
        return self.next_id - 1

    def send(self, response: bytes, events_of: int | None = None, events: int = 0) -> None:
        """Queue ``response``; ``events_of``: the watch whose ``events`` are all it carries (None for
        any other response: created, canceled, progress, fragment)."""
        self._outgoing.append((response, events_of, events))
        self._queued.set()
        self.queued_bytes += len(response)
        if self.full:
            self._room.clear()

    async def next_response(self) -> bytes:
        """The next response to write, with the event responses of the same watch queued right behind
        it merged in (at most response_bytes and MAX_EVENTS_PER_RESPONSE events, as one revision's)."""
        outgoing = self._outgoing
        while not outgoing:
            self._queued.clear()
            await self._queued.wait()
        response, watch_id, events = outgoing.popleft()
        if watch_id is None or not outgoing:
            return response
        parts, size = [response], len(response)
        while outgoing:
            following, following_id, following_events = outgoing[0]
            if (
                following_id != watch_id
                or size + len(following) > self.response_bytes
                or events + following_events > MAX_EVENTS_PER_RESPONSE
            ):
                break
            outgoing.popleft()
            parts.append(following)
            size += len(following)
            events += following_events
        return b"".join(parts) if len(parts) > 1 else response

    def written(self, response: bytes) -> None:
        """The sender wrote a queued response to the client."""
        self.queued_bytes -= len(response)
        if self.queued_bytes <= self.buffer_bytes // 2:
            self._room.set()

    @property
    def full(self) -> bool:
        return self.queued_bytes >= self.buffer_bytes

    async def room(self) -> None:
        """Until the queue has drained to half the buffer (or the stream ended)."""
        await self._room.wait()

    def ended(self) -> None:
        """The client went away: wake the catch-ups waiting for room (their watchers are canceled)."""
        self._room.set()


class WatchHub:
    def __init__(
        self,
        store: MvccStore,
        *,
        ring_size: int = 100_000,
        progress_interval: float = 600.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        stream_buffer_bytes: int = STREAM_BUFFER_BYTES,
    ) -> None:
        self.store = store
        self.backend: SqliteBackend = store.backend
        # Recent events, oldest first, whole revisions: flat, so that the ring keeps no container per
        # revision alive (the collector walks every object the ring keeps, two per event now).
        self.ring: deque[Event] = deque()
        self.ring_size = ring_size
        self.ring_events = 0
        self.ring_bytes = 0
        self.ring_first_rev = store.rev + 1  # the ring holds every event from this revision on
        self.rev = store.rev  # newest revision published
        self.progress_interval = progress_interval
        self.max_response_bytes = max_response_bytes  # fragment size for watches that allow it
        self.stream_buffer_bytes = stream_buffer_bytes
        self._streams: set[WatchStream] = set()
        self._by_key: dict[bytes, set[Watcher]] = {}
        self._ranges: RangeWatchers[Watcher] = RangeWatchers()
        self._notify: set[Watcher] = set()  # watchers with progress_notify
        self.catch_ups: set[asyncio.Task] = set()  # the watchers' catch-up tasks
        self._ticker: asyncio.Task | None = None

    def start(self) -> None:
        self._ticker = asyncio.get_running_loop().create_task(self._progress_loop(), name="watch-progress")

    async def stop(self) -> None:
        for task in [*self.catch_ups, *([self._ticker] if self._ticker else [])]:
            task.cancel()
        for task in [*self.catch_ups, *([self._ticker] if self._ticker else [])]:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # --- publishing ---------------------------------------------------------------------
    def publish(self, batches: list[tuple[int, list[Event]]]) -> None:
        """Take a durable batch's events (revision order): keep them in the ring, fan them out."""
        for _, events in batches:
            self.ring.extend(events)
            self.ring_events += len(events)
            self.ring_bytes += sum(_event_size(ev) for ev in events)
        ring = self.ring
        while (self.ring_events > self.ring_size or self.ring_bytes > RING_MAX_BYTES) and ring[0].rev != ring[-1].rev:
            self._drop_oldest_revision()
        self.rev = batches[-1][0]

        matched: dict[Watcher, list[Event]] = {}
        by_key, ranges = self._by_key, self._ranges
        for _, events in batches:
            for ev in events:
                for w in by_key.get(ev.key, ()):
                    if w.synced and w.wants(ev):
                        matched.setdefault(w, []).append(ev)
                for w in ranges.covering(ev.key):
                    if w.synced and w.wants(ev):
                        matched.setdefault(w, []).append(ev)
        if not matched:
            return
        header = self.store.header_bytes(self.rev)
        now = time.monotonic()
        for w, events in matched.items():
            if w.stream.full:  # its client is behind: catch it up from here once the stream drains
                w.synced = False
                w.next_rev = events[0].rev
                self._start_catch_up(w)
                continue
            self._send_events(w, header, [ev.encoded(w.prev_kv) for ev in events])
            w.last_sent = now

    # --- watchers -----------------------------------------------------------------------
    def watcher_count(self) -> int:
        return sum(len(ws) for ws in self._by_key.values()) + len(self._ranges)

    def slow_watcher_count(self) -> int:
        """Watchers not synced: catching up from a past revision, or paced behind a slow client
        (etcd's etcd_debugging_mvcc_slow_watcher_total counts its unsynced watchers and victims)."""
        watchers = [*self._ranges, *[w for ws in self._by_key.values() for w in ws]]
        return sum(not w.synced for w in watchers)

    def queued_bytes(self) -> int:
        """Bytes of watch responses queued on all streams and not yet written."""
        return sum(stream.queued_bytes for stream in self._streams)

    def add(self, w: Watcher, start_rev: int) -> None:
        """Register a watcher (its `created` response is already queued) and start its events."""
        stream = w.stream
        stream.watchers[w.id] = w
        if start_rev > 0 and start_rev < self.store.compacted:
            self._cancel_compacted(w)
            return
        if w.end is None:
            self._by_key.setdefault(w.key, set()).add(w)
        else:
            self._ranges.add(w)
        if w.progress_notify:
            self._notify.add(w)
        w.next_rev = start_rev if start_rev > 0 else self.rev + 1
        if not self._advance_in_ring(w):
            self._start_catch_up(w)

    def remove(self, w: Watcher) -> None:
        w.canceled = True
        w.stream.watchers.pop(w.id, None)
        if w.end is None:
            watchers = self._by_key.get(w.key)
            if watchers is not None:
                watchers.discard(w)
                if not watchers:
                    del self._by_key[w.key]
        else:
            self._ranges.discard(w)
        self._notify.discard(w)
        self._maybe_send_progress(w.stream)

    def open_stream(self) -> WatchStream:
        stream = WatchStream(self.stream_buffer_bytes, self.max_response_bytes)
        self._streams.add(stream)
        return stream

    def remove_stream(self, stream: WatchStream) -> None:
        self._streams.discard(stream)
        for w in list(stream.watchers.values()):
            self.remove(w)
        stream.ended()

    def request_progress(self, stream: WatchStream) -> None:
        """A progress response once every watcher of the stream has been sent everything
        up to the revision it reports."""
        stream.progress_pending = True
        self._maybe_send_progress(stream)

    # --- internals ----------------------------------------------------------------------
    @staticmethod
    def _matches(w: Watcher, ev: Event) -> bool:
        return in_range(ev.key, w.key, w.end) and w.wants(ev)

    def _maybe_send_progress(self, stream: WatchStream) -> None:
        if stream.progress_pending and all(w.synced for w in stream.watchers.values()):
            stream.progress_pending = False
            stream.send(watch_response(self.store.header_bytes(self.rev), PROGRESS_WATCH_ID))

    def _send_grouped(self, w: Watcher, events: list[Event]) -> None:
        """Send events in responses of whole revisions, each of at most MAX_EVENTS_PER_RESPONSE
        events and max_response_bytes (a revision larger than that alone stays whole)."""
        if not events:
            return
        header = self.store.header_bytes(self.rev)
        chunk: list[bytes] = []
        size = 0
        for _, group in itertools.groupby(events, key=lambda ev: ev.rev):
            encoded = [ev.encoded(w.prev_kv) for ev in group]
            group_size = sum(len(ev) for ev in encoded)
            if chunk and (
                len(chunk) + len(encoded) > MAX_EVENTS_PER_RESPONSE or size + group_size > self.max_response_bytes
            ):
                self._send_events(w, header, chunk)
                chunk, size = [], 0
            chunk += encoded
            size += group_size
        self._send_events(w, header, chunk)
        w.last_sent = time.monotonic()

    def _advance_in_ring(self, w: Watcher) -> bool:
        """Send an unsynced watcher what the ring holds from its next revision on, a page at a
        time while its stream has room; True once it is caught up, and then synced."""
        while True:
            if w.next_rev > self.rev:
                w.synced = True
                self._maybe_send_progress(w.stream)
                return True
            if w.next_rev < self.ring_first_rev or w.stream.full:
                return False
            events, last = self._ring_page(w.next_rev)
            self._send_grouped(w, [ev for ev in events if self._matches(w, ev)])
            w.next_rev = last + 1

    def _ring_page(self, first: int) -> tuple[list[Event], int]:
        """The ring's events from revision `first` (in the ring) on, and the last revision they
        cover: CATCH_UP_PAGE_REVS revisions, fewer once they hold a quarter of a stream buffer."""
        start = bisect.bisect_left(self.ring, first, key=lambda ev: ev.rev)
        events: list[Event] = []
        size, last, revisions = 0, first - 1, 0
        for ev in itertools.islice(self.ring, start, None):
            if ev.rev != last:  # a revision begins: the page may end before it
                if revisions == CATCH_UP_PAGE_REVS or size >= self.stream_buffer_bytes // 4:
                    break
                revisions += 1
                last = ev.rev
            events.append(ev)
            size += _event_size(ev)
        return events, last

    def _drop_oldest_revision(self) -> None:
        """Forget the ring's oldest revision, all its events (the ring holds a newer one)."""
        ring = self.ring
        rev = ring[0].rev
        while ring[0].rev == rev:
            ev = ring.popleft()
            self.ring_events -= 1
            self.ring_bytes -= _event_size(ev)
        self.ring_first_rev = rev + 1

    def _send_events(self, w: Watcher, header: bytes, events: list[bytes]) -> None:
        """One response, or, for a watch that allows fragments and a response larger than
        the request limit, several: each but the last marked `fragment` (as etcd)."""
        limit = self.max_response_bytes
        if not w.fragment or len(events) < 2 or sum(len(ev) for ev in events) <= limit:
            w.stream.send(watch_response(header, w.id, events), w.id, len(events))
            return
        chunks: list[list[bytes]] = [[]]
        size = 0
        for ev in events:
            if chunks[-1] and size + len(ev) > limit:
                chunks.append([])
                size = 0
            chunks[-1].append(ev)
            size += len(ev)
        for i, chunk in enumerate(chunks):
            w.stream.send(watch_response(header, w.id, chunk, fragment=i + 1 < len(chunks)))

    def _cancel_compacted(self, w: Watcher) -> None:
        """etcd: a response with compact_revision set and canceled=true ends the watch."""
        self.remove(w)
        header = self.store.header_bytes(0)  # etcd leaves the header's revision unset here
        w.stream.send(watch_response(header, w.id, canceled=True, compact_revision=self.store.compacted))

    def _start_catch_up(self, w: Watcher) -> None:
        task = asyncio.get_running_loop().create_task(self._catch_up(w))
        self.catch_ups.add(task)
        task.add_done_callback(self.catch_ups.discard)

    async def _catch_up(self, w: Watcher) -> None:
        """Bring an unsynced watcher to the newest revision: from the ring when it holds the
        revisions, else from SQLite a page at a time, waiting for room on its stream."""
        loop = asyncio.get_running_loop()
        try:
            while not w.canceled and not self._advance_in_ring(w):
                if w.stream.full:
                    await w.stream.room()
                    continue
                first = w.next_rev
                last = min(self.rev, first + CATCH_UP_PAGE_REVS - 1)
                events, last = await loop.run_in_executor(self.backend.read_executor, self._read_events, w, first, last)
                if w.canceled:
                    return
                if first < self.store.compacted:  # compacted before or while we read
                    self._cancel_compacted(w)
                    return
                self._send_grouped(w, [ev for ev in events if w.wants(ev)])
                w.next_rev = last + 1
        except Exception:
            log.exception("watch catch-up failed")
            self.remove(w)
            w.stream.send(
                watch_response(self.store.header_bytes(self.rev), w.id, canceled=True, cancel_reason="catch-up failed")
            )

    def _read_events(self, w: Watcher, first: int, last: int) -> tuple[list[Event], int]:
        """(reader thread) A page of history rows in the watcher's range turned into events, with
        prev_kv when it asked for them, and the last revision the page covers. Like a page of the
        ring, a page holds about a quarter of a stream buffer (rows of an eighth when each event
        also carries its previous value): a page never floods the stream it waited room on."""
        budget = self.stream_buffer_bytes // (8 if w.prev_kv else 4)
        rows, last = self.backend.events(w.key, w.end, first, last, budget)
        prevs: list[Row | None] = (
            self.backend.previous([(r[2], r[0]) for r in rows]) if w.prev_kv else [None] * len(rows)
        )
        events = []
        for row, prev_row in zip(rows, prevs, strict=True):
            rev, _sub, k, create, version, lease, deleted, value = row
            prev = None
            if prev_row is not None and not prev_row[6]:
                prev = Entry(k, prev_row[3], prev_row[0], prev_row[4], prev_row[7], prev_row[5])
            if deleted:
                events.append(Event(DELETE, k, rev, None, prev))
            else:
                events.append(Event(PUT, k, rev, Entry(k, create, rev, version, value, lease), prev))
        return events, last

    async def _progress_loop(self) -> None:
        """Periodic progress notifications for idle synced watchers that asked for them."""
        while True:
            await asyncio.sleep(self.progress_interval)
            now = time.monotonic()
            header = self.store.header_bytes(self.rev)
            for w in list(self._notify):
                if w.synced and now - w.last_sent >= self.progress_interval * 0.9:
                    w.stream.send(watch_response(header, w.id))
                    w.last_sent = now
