"""The watch cache of one resource (upstream's Cacher): current objects plus recent changes.

One storage watch per resource feeds it. It keeps every current object (by storage key, in key
order) and a window of recent events; all HTTP watches of the resource are served from it, as are
lists and gets that allow it (resourceVersion "0", NotOlderThan, and consistent "most recent"
lists once the cache has caught up with storage — see ``wait_fresh``).

Revisions: ``revision`` is the storage revision the cache is known to be synced to. It advances
with each event and with each progress notification; ``window_start`` is the revision after
which every event is still in the window (older watch starts get 410 Gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Iterator
from typing import Final

from sortedcontainers import SortedDict

from protokube.gateway import lanes
from protokube.gateway.deadlines import Deadlines
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.selectors import Filter
from protokube.gateway.storage.backend import Compacted, Event, KeyValue, StorageError, Watch, prefix_end
from protokube.gateway.storage.corrupt import CorruptObject
from protokube.gateway.storage.objectstore import ObjectStore
from protokube.gateway.watchcache.entries import CacheEvent, Entry, Selectable, entry_fields, make_entry
from protokube.gateway.watchcache.fanout import FanOut
from protokube.gateway.watchcache.watcher import CacheWatcher

log = logging.getLogger("protokube.watchcache")

# How long a "not older than" or consistent read waits for the cache to catch up (upstream: 3 s).
BLOCK_TIMEOUT: Final = 3.0
INITIAL_LIST_PAGE: Final = 10_000
# Seconds between attempts to re-establish the storage watch (doubling up to the maximum).
RETRY_MIN: Final = 0.2
RETRY_MAX: Final = 2.0
# Seconds a consistent read waits for the answer to its progress request before asking again, and
# checking storage's current revision (upstream's progressRequester asks every 100 ms). etcd 3.6
# drops a progress request while its watcher is catching up, or when nothing was written since the
# watch started: such a request is never answered.
PROGRESS_RETRY: Final = 0.1
# This gateway's writes whose events have not come yet, remembered at most of each kind (a watch broken
# meanwhile leaves some whose events never come: they are forgotten all at once past this, and on
# every relist).
MAX_WRITTEN: Final = 1024


def is_progress(response: object) -> bool:
    """A response that says the watch has seen everything up to its header revision.

    An answer to a progress request (watch_id -1) or a progress notification (no events). Not
    the "created" response: events between the start revision and now may still follow it.
    """
    if response.watch_id == -1:  # type: ignore[attr-defined]
        return True
    return not response.events and not response.created and not response.canceled  # type: ignore[attr-defined]


class TooLargeResourceVersion(Exception):
    def __init__(self, requested: int, current: int) -> None:
        super().__init__(f"Too large resource version: {requested}, current: {current}")
        self.requested = requested
        self.current = current


class WatchCache:
    def __init__(
        self, store: ObjectStore, selectable: Selectable, *, window: int = 10_000, window_seconds: float = 150.0
    ) -> None:
        self.objects = store
        self.backend = store.backend
        self.resource = store.resource
        self.selectable = selectable
        self.prefix = store.prefix
        self.store: SortedDict[str, Entry] = SortedDict()
        self.corrupt: dict[str, CorruptObject] = {}  # keys whose values cannot be decoded, by store key
        self.events: deque[tuple[float, CacheEvent]] = deque()
        self.window = window
        self.window_seconds = window_seconds
        self.revision = 0
        self.window_start = 0
        self.last_change = 0  # the revision of the latest change to this resource the cache knows
        self.watchers: set[CacheWatcher] = set()
        self.fanout = FanOut()
        self._watch_scopes: Counter[tuple[str, str]] = Counter()  # watchers by (namespace, name) watched
        self.ready = asyncio.Event()
        self._advanced = asyncio.Event()
        self._watch: Watch | None = None
        # Consistent reads: readers gathered for the next progress request; those asked for and not
        # yet confirmed; per progress request sent on this watch, in order, the readers it was sent
        # for (an answer comes after storage received its request or a later one, so the oldest
        # request's readers are confirmed by each answer, whatever requests storage dropped).
        self._gathering: list[asyncio.Future[None]] | None = None
        self._urgent = False  # a foreground reader is among the gathered (gateway/lanes.py)
        self._pending: list[asyncio.Future[None]] = []
        self._requests: deque[list[asyncio.Future[None]]] = deque()
        self._retry: asyncio.TimerHandle | None = None
        self._checking: asyncio.Task[None] | None = None  # a confirmation by storage's revision
        self._deadlines = Deadlines()  # the consistent reads' waits
        # This gateway's writes whose events have not come, by storage key: those in flight (the
        # bytes and the object written), and those that ended (the bytes and the entry made).
        self._writing: dict[bytes, tuple[bytes, Obj]] = {}
        self._written: dict[bytes, tuple[bytes, Entry]] = {}
        store.observer = self

    # ---- feeding ---------------------------------------------------------------------------
    def writing(self, key: bytes, value: bytes, obj: Obj) -> None:
        """This gateway writes ``obj``, encoded as ``value``, at ``key``: the write's event takes
        its entry from ``obj`` instead of decoding ``value`` again (the same object: ``obj`` was
        encoded into those bytes, and the writer leaves it as it is until ``written``)."""
        if len(self._writing) >= MAX_WRITTEN:
            self._writing.clear()
        self._writing[key] = (value, obj)

    def written(self, key: bytes, value: bytes, revision: int) -> None:
        """The write of ``value`` at ``key`` ended (``revision`` 0: it failed). Its entry is made
        now if its event has not come yet, before the writer goes on with the object."""
        pending = self._writing.get(key)
        if pending is None or pending[0] is not value:  # its event came, or another write took the key
            return
        del self._writing[key]
        if revision > self.revision:
            if len(self._written) >= MAX_WRITTEN:
                self._written.clear()
            self._written[key] = (value, self._entry_of(key, value, pending[1], revision))

    def _entry_of(self, key: bytes, value: bytes, obj: Obj, revision: int) -> Entry:
        """The entry of ``obj``, stored as ``value``, at ``revision`` (``obj`` is left as it was)."""
        meta = obj.metadata
        kept = meta.resourceVersion
        meta.resourceVersion = str(revision)
        try:
            view = ObjectView(self.objects.codec, revision, value=value, keep_object=False)
            return make_entry(key[len(self.prefix) :].decode(), view, self.selectable, obj)
        finally:
            meta.resourceVersion = kept

    def _own_write(self, kv: KeyValue) -> Entry | None:
        """The entry of an event of this gateway's write, made from the object written; None for
        any other event."""
        written = self._written.pop(kv.key, None)
        if written is not None:
            value, entry = written
            return entry if entry.resource_version == kv.mod_revision and value == kv.value else None
        pending = self._writing.get(kv.key)
        if pending is None or pending[0] != kv.value:
            return None
        del self._writing[kv.key]
        return self._entry_of(kv.key, kv.value, pending[1], kv.mod_revision)

    def _entry(self, kv: KeyValue) -> Entry | None:
        """The entry of a stored value; None for a value that cannot be decoded, which is kept
        aside as corrupt (lists report it) instead of stopping the cache."""
        key = kv.key[len(self.prefix) :].decode()
        if self._writing or self._written:
            own = self._own_write(kv)
            if own is not None:
                self.corrupt.pop(key, None)
                return own
        view = ObjectView(self.objects.codec, kv.mod_revision, value=kv.value, keep_object=False)
        try:
            entry = make_entry(key, view, self.selectable)
        except Exception as err:  # whatever the codec meets, the value is unreadable
            corrupt = CorruptObject(kv.key.decode(errors="replace"), kv.mod_revision, str(err))
            log.warning("watch cache of %s skips a corrupt object: %s", self.resource.plural, corrupt)
            self.corrupt[key] = corrupt
            return None
        self.corrupt.pop(key, None)
        return entry

    async def _load(self) -> int:
        """Fill the store from a consistent paginated list; returns its revision."""
        self.store.clear()
        self.corrupt.clear()
        self._writing.clear()
        self._written.clear()
        end = prefix_end(self.prefix)
        start, revision = self.prefix, 0
        while True:
            page = await self.backend.list(start, end, revision=revision, limit=INITIAL_LIST_PAGE)
            revision = page.revision
            for kv in page.kvs:
                entry = self._entry(kv)
                if entry is not None:
                    self.store[entry.key] = entry
            if not page.more:
                return revision
            start = page.kvs[-1].key + b"\x00"

    async def run(self) -> None:
        """Keep the cache in sync with storage. After a break in the storage watch it resumes from
        the last revision it has, so its own watchers see no gap and no duplicate; only when storage
        no longer keeps that history (compacted) does it relist, and its watchers end (their clients
        get 410 Gone when they resume, and relist too)."""
        loaded, delay = False, RETRY_MIN
        while True:
            try:
                if not loaded:
                    self._reset_window(await self._load())
                    self.ready.set()
                    loaded = True
                async with self.backend.watch(self.prefix, prefix_end(self.prefix), self.revision + 1) as watch:
                    self._watch = watch
                    self._send_gathered()  # with those asked for on the broken watch
                    async for response in watch.responses():
                        for event in response.events:
                            self._apply(event)
                        if is_progress(response):
                            self._advance(response.header.revision)
                        if response.watch_id == -1 and self._requests:  # answers our oldest request
                            self._confirm(self._requests.popleft())
                        delay = RETRY_MIN  # connected and receiving again
            except asyncio.CancelledError:
                raise
            except Compacted as err:
                log.warning("watch cache of %s relists: %s", self.resource.plural, err)
                loaded = False
                self.close_watchers()
            except StorageError as failure:  # a name of its own: compiled, a name has one type
                log.warning(
                    "watch cache of %s resumes from revision %d: %s", self.resource.plural, self.revision, failure
                )
            finally:
                self._watch = None
                self._requests.clear()  # their readers are asked for again once the watch resumes
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    def _reset_window(self, revision: int) -> None:
        self.events.clear()
        self.revision = self.window_start = self.last_change = revision
        self._signal()

    def _apply(self, event: Event) -> None:
        revision = event.kv.mod_revision
        key = event.kv.key[len(self.prefix) :].decode()
        prev = self.store.get(key)
        if event.type == Event.DELETE:
            self.corrupt.pop(key, None)
            if prev is None:
                return
            del self.store[key]
            last = Entry(
                prev.key,
                prev.namespace,
                prev.labels,
                prev.field_values,
                prev.field_names,
                prev.view.at_revision(revision),
            )
            cache_event = CacheEvent("DELETED", revision, last, prev)
        else:
            entry = self._entry(event.kv)
            if entry is None:  # unreadable now: out of the cache (watchers hear of it no more)
                self.store.pop(key, None)
                self.last_change = revision
                self._advance(revision)
                return
            self.store[key] = entry
            cache_event = CacheEvent("ADDED" if prev is None else "MODIFIED", revision, entry, prev)
        self.last_change = revision
        now = time.monotonic()
        self.events.append((now, cache_event))
        self._evict(now)
        self._dispatch(cache_event)
        self._advance(revision)

    def _evict(self, now: float) -> None:
        while self.events and (len(self.events) > self.window or now - self.events[0][0] > self.window_seconds):
            _, old = self.events.popleft()
            self.window_start = old.revision

    def _advance(self, revision: int) -> None:
        if revision > self.revision:
            self.revision = revision
            self._signal()

    def _signal(self) -> None:
        self._advanced.set()
        self._advanced = asyncio.Event()

    def _dispatch(self, event: CacheEvent) -> None:
        for watcher in self.fanout.offer(event):
            self.remove_watcher(watcher)

    def close_watchers(self) -> None:
        """End every watch of this cache (its clients re-watch from their last resourceVersion)."""
        for watcher in list(self.watchers):
            watcher.close()
        self.watchers.clear()
        self.fanout.clear()
        self._watch_scopes.clear()

    # ---- freshness ---------------------------------------------------------------------------
    async def wait_ready(self) -> None:
        await self.ready.wait()

    async def wait_for(self, revision: int, timeout: float = BLOCK_TIMEOUT) -> None:
        """Wait until the cache has seen ``revision``; TooLargeResourceVersion after ``timeout``."""
        await self.wait_ready()
        deadline = time.monotonic() + timeout
        while self.revision < revision:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TooLargeResourceVersion(revision, self.revision)
            try:
                await self.sync(remaining)
            except TooLargeResourceVersion:  # storage did not confirm in time: report what was asked
                raise TooLargeResourceVersion(revision, self.revision) from None
            if self.revision < revision:  # storage has not got there yet either: wait for it a little
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._advanced.wait(), min(deadline - time.monotonic(), 0.25))

    async def sync(self, timeout: float = BLOCK_TIMEOUT) -> None:
        """A consistent read: return once the cache holds every write storage acknowledged before
        this call (upstream's RequestWatchProgress). Storage answers a progress request on the
        cache's watch stream only after sending it every event up to its current revision; all
        the readers who arrive while one request is in flight share the next one.
        """
        await self.wait_ready()
        urgent = not lanes.in_background()
        gathering = self._gathering
        if gathering is None or (urgent and not self._urgent):  # the first reader, or foreground one
            if gathering is None:
                gathering = self._gathering = []
            self._urgent = urgent
            if not self._pending:
                self._schedule_send()
        waiting: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        gathering.append(waiting)
        try:
            with self._deadlines.watch(timeout):  # (no extra task, unlike wait_for; no timer per read)
                await waiting  # the reader's own: its timeout cancels it, and no other reader's
        except TimeoutError:
            raise TooLargeResourceVersion(self.revision + 1, self.revision) from None

    def _schedule_send(self) -> None:
        """Send the gathered readers' progress request when the loop's work ready now has run, so
        that the readers that work brings here share it: the foreground's work when a foreground
        reader waits, else the background's too (gateway/lanes.py). A progress request
        costs the gateway more CPU than the rest of a read from the cache; sent at once, on a busy
        CPU that parses one reader at a time, each reader would pay for one."""
        lanes.call_when_resting(self._send_gathered, after_background=not self._urgent)

    def _send_gathered(self) -> None:
        """A progress request for every reader not yet confirmed (none while disconnected), and a
        retry if its answer does not come soon."""
        if self._gathering is not None:
            self._pending += self._gathering
            self._gathering = None
        if not self._pending or self._watch is None:
            return
        self._requests.append(list(self._pending))
        self._watch.request_progress()
        if self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(PROGRESS_RETRY, self._ask_again)

    def _confirm(self, readers: list[asyncio.Future[None]]) -> None:
        """These readers' reads may be served: the cache holds what storage had when they came."""
        for waiting in readers:
            if not waiting.done():
                waiting.set_result(None)
        self._prune_pending()
        if not self._pending and self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._gathering is not None and not self._pending:
            self._schedule_send()  # for the readers who came meanwhile

    def _prune_pending(self) -> None:
        """Forget the readers confirmed (or gone) since they were asked for."""
        self._pending = [waiting for waiting in self._pending if not waiting.done()]

    def _ask_again(self) -> None:
        """No answer yet: ask again, and confirm by storage's current revision meanwhile (a request
        storage dropped is never answered)."""
        self._retry = None
        self._prune_pending()
        if self._pending and (self._checking is None or self._checking.done()):
            self._checking = asyncio.get_running_loop().create_task(self._confirm_by_revision(list(self._pending)))
            self._checking.add_done_callback(_log_failure)
        self._send_gathered()

    async def _confirm_by_revision(self, readers: list[asyncio.Future[None]]) -> None:
        """Confirm ``readers`` once the cache reaches the revision storage has now (upstream's
        consistent read: the current revision, then waiting until fresh), within BLOCK_TIMEOUT."""
        current = await self.backend.current_revision()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(BLOCK_TIMEOUT):
                while self.revision < current and not all(waiting.done() for waiting in readers):
                    await self._advanced.wait()
        if self.revision >= current:
            self._confirm(readers)

    # ---- reading ---------------------------------------------------------------------------
    def entries(self, namespace: str = "", start_key: str = "") -> Iterator[Entry]:
        """Entries in key order, of one namespace when given, from ``start_key`` on."""
        low = f"{namespace}/" if namespace and self.resource.namespaced else ""
        if start_key > low:
            low = start_key
        high = f"{namespace}0" if namespace and self.resource.namespaced else None  # "0" follows "/"
        return map(self.store.__getitem__, self.store.irange(low, high, inclusive=(True, False)))

    def get(self, namespace: str, name: str) -> Entry | None:
        """An object's entry (None: there is none); CorruptObject when its value cannot be read."""
        key = f"{namespace}/{name}" if self.resource.namespaced else name
        corrupt = self.corrupt.get(key)
        if corrupt is not None:
            raise corrupt
        return self.store.get(key)

    def corrupt_in(self, namespace: str = "", start_key: str = "") -> list[CorruptObject]:
        """The corrupt objects of one namespace (all, when empty) from ``start_key`` on, in key order."""
        low = f"{namespace}/" if namespace and self.resource.namespaced else ""
        return [corrupt for key, corrupt in sorted(self.corrupt.items()) if key.startswith(low) and key >= start_key]

    def get_key(self, key: str) -> Entry | None:
        """The entry of a storage key below the resource's prefix."""
        return self.store.get(key)

    def unchanged_since(self, revision: int) -> bool:
        """Whether the cache's state is exactly the state at ``revision`` (no change after it)."""
        return self.ready.is_set() and self.last_change <= revision <= self.revision

    def select(self, flt: Filter, start_key: str = "") -> Iterator[Entry]:
        """The entries ``flt`` selects, in key order, from ``start_key`` on. The key range already
        holds a namespaced resource's namespace: without selectors no entry is looked at."""
        entries = self.entries(flt.namespace, start_key)
        if not flt.has_selectors and (self.resource.namespaced or not flt.namespace):
            return entries
        return _matching(flt, entries)

    def events_after(self, revision: int) -> list[CacheEvent]:
        """The window's events after ``revision`` (the caller checked it is not too old)."""
        return [event for _, event in self.events if event.revision > revision]

    def add_watcher(self, watcher: CacheWatcher) -> None:
        self.watchers.add(watcher)
        self.fanout.add(watcher)
        self._watch_scopes[_scope(watcher)] += 1

    def remove_watcher(self, watcher: CacheWatcher) -> None:
        if watcher in self.watchers:
            self.watchers.discard(watcher)
            self.fanout.remove(watcher)
            scope = _scope(watcher)
            self._watch_scopes[scope] -= 1
            if not self._watch_scopes[scope]:
                del self._watch_scopes[scope]

    def interested_watchers(self, namespace: str, name: str) -> int:
        """The watches that a write of ``namespace/name`` may concern, counted as upstream's watch
        tracker counts them for APF: those of the whole resource, of the object's namespace, and of
        the object by name (a fieldSelector metadata.name=...); their selectors are not evaluated."""
        scopes = self._watch_scopes
        count = scopes.get(("", ""), 0)
        if namespace:
            count += scopes.get((namespace, ""), 0)
        if name:
            count += scopes.get((namespace, name), 0)
        return count


def _matching(flt: Filter, entries: Iterator[Entry]) -> Iterator[Entry]:
    """The ``entries`` that ``flt`` matches; an entry's fields built only for a field selector that
    its labels pass."""
    labels, fields = flt.labels, flt.fields
    for entry in entries:
        if flt.namespace and entry.namespace != flt.namespace:
            continue
        if not labels.empty and not labels.matches(entry.labels):
            continue
        if fields.empty or fields.matches(entry_fields(entry)):
            yield entry


def _scope(watcher: CacheWatcher) -> tuple[str, str]:
    """What a watch asks for, as upstream's watch tracker keys it: its namespace ("" for all) and
    the one object it names ("" for all)."""
    return watcher.filter.namespace, watcher.filter.fields.exact_name() or ""


def _log_failure(task: asyncio.Task[None]) -> None:
    """A revision check that failed (storage unreachable): its readers wait for the next answer."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("consistent read check failed: %s", task.exception())
