"""A namespace's objects of one resource as admission plugins read them (upstream's lister with
its live lookup): the watch cache's copies; when it has none, what storage has, which is reused
for a while — an object made a moment ago that the cache has not seen yet is found, and a
namespace without any costs one storage read per interval, not one per request.
"""

from __future__ import annotations

import time

from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.watchcache.cacher import Cacher

LIVE_LOOKUP_TTL = 30.0  # seconds a live lookup is reused (upstream's liveTTL)
LIVE_LOOKUP_ENTRIES = 10000  # namespaces whose live lookup is kept (upstream's LRU size)


class NamespaceLookup:
    def __init__(self, cacher: Cacher) -> None:
        self.cacher = cacher
        self._live: dict[str, tuple[float, list[ObjectView]]] = {}  # namespace -> (expiry, what storage had)

    async def views(self, namespace: str) -> list[ObjectView]:
        cache = self.cacher.cache
        if cache.ready.is_set():
            views = [entry.view for entry in cache.entries(namespace)]
            if views:
                return views
        expiry, views = self._live.get(namespace, (0.0, []))
        if expiry < time.monotonic():
            listed = await self.cacher.list(Filter(namespace, EVERYTHING, NO_FIELDS), ListOptions())
            views = list(listed.items)
            self._live.pop(namespace, None)
            if len(self._live) >= LIVE_LOOKUP_ENTRIES:  # the oldest lookup goes
                del self._live[next(iter(self._live))]
            self._live[namespace] = (time.monotonic() + LIVE_LOOKUP_TTL, views)
        return views
