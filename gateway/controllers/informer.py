"""An informer: one resource's objects kept in step with storage, for parts of the server that
decide by them (RBAC's authorizer, API Priority and Fairness, the ClusterRole aggregator).

As upstream's shared informers do, it lists and then watches — here one watch on the resource's
watch cache with ``sendInitialEvents``, whose initial events are the list. Its ``sink`` first gets
``replace`` with every object (again whenever the watch is re-established, so that deletions
missed meanwhile are not kept), then ``changed`` for every later event.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Protocol

from protokube.gateway.errors import StatusError
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError
from protokube.gateway.watchcache.watcher import Bookmark

log = logging.getLogger("protokube.informer")
WATCH_SECONDS = 3600.0  # a watch is re-established this often (upstream: 5-10 minutes, randomized)
RETRY_DELAY = 1.0


class Sink(Protocol):
    def replace(self, views: Iterable[ObjectView]) -> None: ...

    def changed(self, event_type: str, view: ObjectView) -> None: ...


class Informer:
    """``field_selector``: only the objects it selects (the watch cache filters the others out, so the
    sink is not even woken for them)."""

    def __init__(self, store: Store, sink: Sink, field_selector: str = "") -> None:
        self.store = store
        self.sink = sink
        self.field_selector = field_selector
        self.synced = asyncio.Event()  # set once the sink has had every object

    async def run(self) -> None:
        options = ListOptions(
            field_selector=self.field_selector, watch=True, send_initial_events=True, allow_watch_bookmarks=True
        )
        while True:
            try:
                await self._watch_once(options)
            except (StorageError, StatusError) as err:
                log.warning("%s informer: %s", self.store.resource.group_resource, err)
                await asyncio.sleep(RETRY_DELAY)

    async def _watch_once(self, options: ListOptions) -> None:
        stream = await self.store.watch("", options, time.monotonic() + WATCH_SECONDS)
        try:
            self.sink.replace(stream.initial)
            self.synced.set()
            async for batch in stream.batches():
                for item in batch:
                    if isinstance(item, Bookmark):
                        continue
                    event, event_type = item
                    self.sink.changed(event_type, event.entry.view)
        finally:
            stream.close()
