"""One resource's storage as the registry sees it (upstream's Cacher): reads from the watch cache
where Kubernetes API Concepts allow (kubernetes.io/docs/reference/using-api/api-concepts/), from
storage where it must; writes to storage, with the cache's copy of the object as the first guess of
what storage holds.

Reads follow the plan of readpath.py. Pages from storage or cache carry continue tokens at the
first page's revision, so every page of a list is one snapshot. Watches are served from the cache.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from protokube.gateway import errors
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.selectors import Filter
from protokube.gateway.storage import continuetoken, readpath
from protokube.gateway.storage.backend import Compacted, FutureRevision
from protokube.gateway.storage.continuetoken import ContinueTokenError
from protokube.gateway.storage.corrupt import CorruptObject, list_error
from protokube.gateway.storage.objectstore import ObjectStore, Transform, Updated
from protokube.gateway.storage.readpath import CACHE, CONSISTENT, NOT_OLDER_THAN, CacheState, ReadPlan
from protokube.gateway.watchcache.cache import TooLargeResourceVersion, WatchCache
from protokube.gateway.watchcache.entries import Entry, entry_fields, make_entry
from protokube.gateway.watchcache.watcher import BOOKMARK_INTERVAL, CacheWatcher, Item
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

LIST_TOO_OLD: Final = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD: Final = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)
# Storage pages read while filtering by selectors (upstream grows them as needed; a fixed size is enough).
SELECTOR_PAGE: Final = 500


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class Listed:
    def __init__(self, items: list[ObjectView], list_meta: meta.ListMeta) -> None:
        self.items = items
        self.list_meta = list_meta


def set_continue(list_meta: meta.ListMeta, token: str) -> None:
    setattr(list_meta, "continue", token)


def too_large(requested: int, current: int, retry_after: int) -> errors.StatusError:
    """504 Timeout: Too large resource version (upstream's storage.NewTooLargeResourceVersionError)."""
    error = errors.timeout(f"Too large resource version: {requested}, current: {current}", retry_after)
    error.status.details.causes.add(reason="ResourceVersionTooLarge", message="Too large resource version")
    return error


class WatchCounts(Protocol):
    """Counts a resource's open watches and the events they send (gateway/metrics.py)."""

    def opened(self) -> None: ...

    def closed(self) -> None: ...

    def sent(self, events: int, size: int) -> None: ...

    def terminated(self) -> None: ...


class Uncounted:
    def opened(self) -> None:
        return None

    def closed(self) -> None:
        return None

    def sent(self, events: int, size: int) -> None:
        return None

    def terminated(self) -> None:
        return None


@dataclass
class WatchStream:
    """A watch as the cache serves it: the initial state (sendInitialEvents), then changes."""

    initial: list[ObjectView] = field(default_factory=list)  # sent as ADDED events
    initial_end: int | None = None  # revision of the bookmark that ends the initial events (when asked)
    error: errors.StatusError | None = None  # sent as the only event (the HTTP status stays 200)
    watcher: CacheWatcher | None = None
    on_close: Callable[[], None] = lambda: None
    counts: WatchCounts = field(default_factory=lambda: Uncounted())

    def batches(self) -> AsyncIterator[list[Item]]:
        """The watcher's batches (a stream with an error has no watcher: the error is all it sends)."""
        assert self.watcher is not None
        return self.watcher.batches()

    def sent(self, events: int, size: int) -> None:
        """The handler sent ``events`` events in ``size`` bytes."""
        self.counts.sent(events, size)

    def close(self) -> None:
        self.on_close()


class Cacher:
    def __init__(
        self,
        store: ObjectStore,
        cache: WatchCache,
        *,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        watchers: WatchCounts | None = None,
    ) -> None:
        self.store = store
        self.cache = cache
        self.resource = store.resource
        self.codec = store.codec
        self.bookmark_interval = bookmark_interval
        self.watchers = watchers or Uncounted()

    async def run(self) -> None:
        await self.cache.run()

    def close_watchers(self) -> None:
        self.cache.close_watchers()

    # ---- the cache's view ----------------------------------------------------------------------
    def cached(self, namespace: str, name: str) -> ObjectView | None:
        """The cache's copy of an object, if the cache is ready and has one (a guess, not a read)."""
        entry = self.cached_entry(namespace, name)
        return entry.view if entry is not None else None

    def cached_entry(self, namespace: str, name: str) -> Entry | None:
        """The cache's entry of an object, as ``cached``: its labels and selectable fields can be read
        without decoding it."""
        try:
            return self.cache.get(namespace, name) if self.cache.ready.is_set() else None
        except CorruptObject:
            return None  # storage says so itself

    def _state(self) -> CacheState:
        cache = self.cache
        return CacheState(cache.ready.is_set(), cache.revision, cache.last_change)

    async def _catch_up(self, plan: ReadPlan) -> bool:
        """Bring the cache to the plan's freshness; False when a consistent read cannot be served
        from it in time (the caller reads storage instead); 504 Too large resource version when it
        does not reach a requested revision soon."""
        try:
            if plan.freshness == CONSISTENT:
                if not self.store.backend.progress_notify:  # an older etcd: a quorum read instead
                    return False
                await self.cache.sync()
            elif plan.freshness == NOT_OLDER_THAN:
                await self.cache.wait_for(plan.revision)
            else:
                await self.cache.wait_ready()
        except TooLargeResourceVersion as err:
            if plan.freshness == CONSISTENT:
                return False
            raise too_large(err.requested, err.current, 1) from None
        return True

    # ---- get -------------------------------------------------------------------------------------
    async def get(self, namespace: str, name: str, resource_version: int | None) -> ObjectView | None:
        """The object as the resourceVersion parameter asks (None: there is none)."""
        if not await self._catch_up(readpath.plan_get(resource_version)):
            return await self.store.get(namespace, name)
        entry = self.cache.get(namespace, name)
        return entry.view if entry is not None else None

    async def get_latest(self, namespace: str, name: str) -> ObjectView | None:
        """The object as storage holds it now."""
        return await self.store.get(namespace, name)

    # ---- list ------------------------------------------------------------------------------------
    async def list(self, flt: Filter, options: ListOptions) -> Listed:
        """A list as the (validated) options ask."""
        continue_at = self._decode_continue(flt, options.continue_token) if options.continue_token else None
        plan = readpath.plan_list(
            _revision(options.resource_version),
            options.resource_version_match,
            options.limit,
            continue_at,
            self._state(),
        )
        if plan.source == CACHE:
            if plan.freshness == readpath.AT_REVISION:
                return self._cache_list(flt, plan.limit, plan.start, plan.revision)
            if await self._catch_up(plan):
                return self._cache_list(flt, plan.limit)
            plan = ReadPlan(readpath.STORAGE, limit=plan.limit)  # the cache did not catch up in time
        try:
            return await self._storage_list(flt, plan.revision, plan.limit, plan.start)
        except errors.StatusError as err:
            if err.code == 410 and plan.continuing and plan.revision > 0:
                error = errors.expired(CONTINUE_TOO_OLD)
                set_continue(error.status.metadata, continuetoken.encode(-1, plan.start))
                raise error from None
            raise

    def _decode_continue(self, flt: Filter, token: str) -> tuple[int, str]:
        try:
            revision, start = continuetoken.decode(token)
        except ContinueTokenError as err:
            raise errors.bad_request(f"invalid continue token: {err}") from None
        namespace_prefix = f"{flt.namespace}/" if flt.namespace and self.resource.namespaced else ""
        if not start.startswith(namespace_prefix):
            raise errors.bad_request(f"invalid continue token: {continuetoken.INVALID}: {start}")
        return revision, start

    def _cache_list(self, flt: Filter, limit: int, start: str = "", revision: int = 0) -> Listed:
        """A list from the cache's current state (which is the state at ``revision``, when given)."""
        cache = self.cache
        corrupt = cache.corrupt_in(flt.namespace, start)
        if corrupt:
            raise list_error(self.resource, corrupt)
        revision = revision or cache.revision
        items: list[ObjectView] = []
        last_key, more = "", False
        for entry in cache.select(flt, start):
            if limit and len(items) == limit:
                more = True
                break
            items.append(entry.view)
            last_key = entry.key
        list_meta = meta.ListMeta(resourceVersion=str(revision))
        if more:
            set_continue(list_meta, continuetoken.encode(revision, last_key + "\x00"))
            if not flt.has_selectors:
                list_meta.remainingItemCount = sum(1 for _ in cache.entries(flt.namespace, last_key + "\x00"))
        return Listed(items, list_meta)

    async def _storage_list(self, flt: Filter, revision: int, limit: int, start: str) -> Listed:
        """A list as it was at ``revision`` (0: the latest), from the key ``start`` on, reusing the
        cache's encodings of objects that did not change."""
        store, cache = self.store, self.cache
        items: list[ObjectView] = []
        corrupt: list[CorruptObject] = []
        last_key, more, remaining = "", False, None
        page_limit = (max(limit, SELECTOR_PAGE) if flt.has_selectors else limit) if limit else 0
        namespace = flt.namespace if self.resource.namespaced else ""
        try:
            while True:
                page = await store.page(namespace, start, revision, page_limit)
                revision = revision or page.revision
                for index, kv in enumerate(page.kvs):
                    key = store.relative_key(kv)
                    last_key = key
                    cached = cache.get_key(key)  # unchanged since the cache saw it: reuse its encodings
                    if cached is not None and cached.resource_version == kv.mod_revision:
                        entry, view = cached, cached.view
                    else:
                        try:
                            entry, view = None, store.view(kv)
                        except CorruptObject as err:
                            corrupt.append(err)  # every one is reported, after the whole read
                            continue
                    if flt.has_selectors:
                        entry = entry or make_entry(key, view, cache.selectable)
                        if not flt.matches(entry.namespace, entry.labels, functools.partial(entry_fields, entry)):
                            continue
                    items.append(view)
                    if limit and len(items) == limit:
                        more = page.more or index < len(page.kvs) - 1
                        if not flt.has_selectors:
                            remaining = page.count - (index + 1)
                        break
                else:
                    if page.more and (not limit or len(items) < limit):
                        start = last_key + "\x00"
                        continue
                break
        except Compacted:
            raise errors.expired(LIST_TOO_OLD) from None
        except FutureRevision:
            raise too_large(revision, await store.backend.current_revision(), 0) from None
        if corrupt:
            raise list_error(self.resource, corrupt)
        list_meta = meta.ListMeta(resourceVersion=str(revision))
        if more:
            set_continue(list_meta, continuetoken.encode(revision, last_key + "\x00"))
            if remaining:
                list_meta.remainingItemCount = remaining
        return Listed(items, list_meta)

    # ---- watch -----------------------------------------------------------------------------------
    async def watch(self, flt: Filter, options: ListOptions, deadline: float) -> WatchStream:
        """A watch as the (validated) options ask, until ``deadline`` (time.monotonic())."""
        cache = self.cache
        revision = _revision(options.resource_version)
        try:
            if options.send_initial_events:
                if revision is None:
                    await cache.sync()
                else:
                    await cache.wait_for(revision, max(deadline - time.monotonic(), 0))
            else:
                await cache.wait_ready()
        except TooLargeResourceVersion as err:
            raise too_large(err.requested, err.current, 1) from None

        # From here to add_watcher nothing awaits: the snapshot and the watcher see the same revision.
        stream = WatchStream()
        if options.send_initial_events:
            start = cache.revision
            stream.initial = [entry.view for entry in cache.select(flt)]
            if options.allow_watch_bookmarks:
                stream.initial_end = start
        else:
            start = revision or 0
            if start < cache.window_start:
                stream.error = errors.expired(f"too old resource version: {start} ({cache.window_start})")
                return stream
        watcher = CacheWatcher(
            flt,
            deadline,
            start,
            bookmarks=options.allow_watch_bookmarks,
            bookmark_interval=self.bookmark_interval,
            progress=lambda: cache.revision,
            on_unresponsive=self.watchers.terminated,
        )
        if not options.send_initial_events:
            watcher.catch_up(cache.events_after(start))
        cache.add_watcher(watcher)
        self.watchers.opened()
        stream.watcher = watcher

        def close() -> None:
            cache.remove_watcher(watcher)
            self.watchers.closed()

        stream.on_close = close
        stream.counts = self.watchers
        return stream

    # ---- writes ----------------------------------------------------------------------------------
    async def create(self, namespace: str, obj: Obj, *, dry_run: bool = False) -> ObjectView:
        return await self.store.create(namespace, obj, dry_run=dry_run)

    async def guaranteed_update(
        self, namespace: str, name: str, transform: Transform, *, dry_run: bool = False
    ) -> Updated:
        cached = self.cached(namespace, name)
        return await self.store.guaranteed_update(namespace, name, transform, cached=cached, dry_run=dry_run)

    async def remove_unreadable(self, namespace: str, name: str) -> bool:
        return await self.store.remove_unreadable(namespace, name)

    async def wait_ready(self) -> None:
        await self.cache.wait_ready()


def _revision(value: str | None) -> int | None:
    """A validated resourceVersion parameter as a revision (None when unset or empty)."""
    return int(value) if value else None
