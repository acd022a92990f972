"""The loop of controllers that keep one named object in every namespace (kube-controller-manager's
serviceaccount and root-ca-cert-publisher controllers).

Two informers feed a queue of namespaces: the namespaces' (a namespace is queued when it comes or
changes) and the kept kind's (a namespace is queued when its kept object changes or goes). Each
queued namespace is synced once however often it was queued meanwhile (upstream's workqueue); a
sync that fails is queued again later, after a delay that doubles with each failure in a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.pernamespace")
RETRY_DELAY, MAX_RETRY_DELAY = 0.5, 60.0
ACTIVE = "Active"
OPTIONS = WriteOptions(field_manager="kube-controller-manager")  # whose writes they are (upstream's)
# Create answers meaning there is nothing to do: the object exists, or its namespace is gone or going.
SETTLED = (403, 404, 409)

Sync = Callable[[str], Awaitable[None]]


class NamespaceQueue:
    """Namespaces waiting for their sync, each at most once."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: set[str] = set()

    def add(self, namespace: str) -> None:
        if namespace not in self.queued:
            self.queued.add(namespace)
            self.queue.put_nowait(namespace)

    async def get(self) -> str:
        namespace = await self.queue.get()
        self.queued.discard(namespace)
        return namespace


class _Namespaces:
    """Informer sink: every namespace that comes or changes is queued; the names are kept."""

    def __init__(self, queue: NamespaceQueue) -> None:
        self.queue = queue
        self.names: set[str] = set()

    def replace(self, views: Iterable[ObjectView]) -> None:
        self.names = {view.obj.metadata.name for view in views}
        for name in self.names:
            self.queue.add(name)

    def changed(self, event_type: str, view: ObjectView) -> None:
        name = view.obj.metadata.name
        if event_type == "DELETED":
            self.names.discard(name)
        else:
            self.names.add(name)
            self.queue.add(name)


class _Kept:
    """Informer sink of the kept objects (its informer selects them by name): a namespace whose kept
    object changes or goes is queued; after a new list (deletions may have been missed), every
    namespace is."""

    def __init__(self, queue: NamespaceQueue, namespaces: _Namespaces) -> None:
        self.queue = queue
        self.namespaces = namespaces

    def replace(self, views: Iterable[ObjectView]) -> None:
        for namespace in self.namespaces.names:
            self.queue.add(namespace)

    def changed(self, event_type: str, view: ObjectView) -> None:
        self.queue.add(view.obj.metadata.namespace)


async def run_per_namespace(namespaces: Store, kept: Store, name: str, sync: Sync) -> None:
    """Call ``sync`` for every namespace queued by the namespaces and the objects ``name`` of
    ``kept``, until cancelled."""
    queue = NamespaceQueue()
    namespace_sink = _Namespaces(queue)
    informers = [
        Informer(namespaces, namespace_sink),
        Informer(kept, _Kept(queue, namespace_sink), field_selector=f"metadata.name={name}"),
    ]
    tasks = [asyncio.create_task(informer.run()) for informer in informers]
    loop = asyncio.get_running_loop()
    failures: dict[str, int] = {}  # failed syncs in a row, by namespace
    try:
        while True:
            namespace = await queue.get()
            try:
                await sync(namespace)
            except (StorageError, StatusError) as err:
                log.warning("%s in namespace %s: %s", kept.resource.group_resource, namespace, err)
                failures[namespace] = failed = failures.get(namespace, 0) + 1
                loop.call_later(min(RETRY_DELAY * 2 ** (failed - 1), MAX_RETRY_DELAY), queue.add, namespace)
            else:
                failures.pop(namespace, None)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def is_active(namespaces: Store, name: str) -> bool:
    """Whether the namespace exists, as storage holds it now, and is not being deleted: the only
    ones a controller makes objects in."""
    view = await namespaces.storage.get_latest("", name)
    if view is None:
        return False
    namespace = view.obj
    return not namespace.metadata.HasField("deletionTimestamp") and namespace.status.phase == ACTIVE


async def create(namespaces: Store, store: Store, namespace: str, data: dict[str, Any]) -> None:
    """Create the kept object from ``data`` in an active namespace; nothing to do when it exists
    meanwhile or the namespace is gone or going. When the namespace started going while the object
    was written, the object is taken back: the namespace controller may have emptied the namespace
    before the write landed, and the object would outlive it."""
    if not await is_active(namespaces, namespace):
        return
    try:
        view = await store.create(namespace, store.codec.from_dict(data).obj, OPTIONS)
    except StatusError as err:
        if err.code not in SETTLED:
            raise
        return
    if not await is_active(namespaces, namespace):
        meta = view.obj.metadata
        with contextlib.suppress(StatusError):  # gone already: the namespace controller had it
            await store.delete(namespace, meta.name, DeleteOptions(precondition_uid=meta.uid))
