"""One HTTP watch: its initial events, then changes from storage, framed for the client.

resourceVersion unset or "0": the current state as synthetic ADDED events, then changes after
it; any other value: only changes after that revision. A revision storage no longer has ends the
stream with an ERROR event carrying a 410 Expired Status (the HTTP status stays 200).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from gateway import errors
from gateway.context import RequestContext
from gateway.negotiation.negotiate import Encoder
from gateway.objects import ObjectView
from gateway.params import ListOptions
from gateway.responses import STATUS_GVK
from gateway.storage import keys
from gateway.storage.etcd import Compacted, Event, StorageError, prefix_end

ETCD_TOO_OLD = "The resourceVersion for the provided watch is too old."


class WatchStream:
    def __init__(self, ctx: RequestContext, options: ListOptions, encoder: Encoder, timeout: float) -> None:
        self.ctx = ctx
        self.options = options
        self.encoder = encoder
        self.deadline = time.monotonic() + timeout
        self.initial: list[ObjectView] = []
        self.start_revision = 0

    async def start(self) -> None:
        """Validate the request and read the initial state before the 200 is sent."""
        rv = self.options.resource_version
        if rv in (None, "", "0"):
            listed = await self.ctx.gateway.list_objects(self.ctx, all_items=True)
            self.initial = listed.items
            self.start_revision = int(listed.list_meta.resourceVersion) + 1
        else:
            if not rv.isdigit():
                raise errors.bad_request(f'invalid resource version "{rv}"')
            self.start_revision = int(rv) + 1

    def _event(self, event_type: str, view: ObjectView) -> bytes:
        return self.encoder.watch_event(event_type, self.encoder.watch_object(view))

    def _error_event(self, error: errors.StatusError) -> bytes:
        return self.encoder.watch_event("ERROR", self.encoder.watch_message(error.status, STATUS_GVK))

    async def body(self) -> AsyncIterator[bytes]:
        gateway = self.ctx.gateway
        resource = self.ctx.resource
        store = self.ctx.store
        prefix = keys.collection_prefix(resource, self.ctx.namespace)
        gateway.metrics.watchers_opened(resource)
        try:
            for view in self.initial:
                yield self._event("ADDED", view)
            async with gateway.etcd.watch(prefix, prefix_end(prefix), self.start_revision) as responses:
                iterator = responses.__aiter__()
                while True:
                    remaining = self.deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    try:
                        response = await asyncio.wait_for(iterator.__anext__(), remaining)
                    except (TimeoutError, StopAsyncIteration):
                        return
                    chunk = b"".join(self._frame(store, event) for event in response.events)
                    if chunk:
                        yield chunk
        except Compacted:
            yield self._error_event(errors.expired(ETCD_TOO_OLD))
        except StorageError as err:
            yield self._error_event(errors.internal(str(err)))
        finally:
            gateway.metrics.watchers_closed(resource)

    def _frame(self, store, event: Event) -> bytes:
        if event.type == Event.DELETE:
            if not event.HasField("prev_kv"):
                return b""
            view = ObjectView(store.gvk, store.resource.message, event.prev_kv.value, event.kv.mod_revision)
            return self._event("DELETED", view)
        view = store.view(event.kv)
        return self._event("ADDED" if event.kv.create_revision == event.kv.mod_revision else "MODIFIED", view)
