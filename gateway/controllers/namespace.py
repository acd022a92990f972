"""The namespace controller: empties a namespace being deleted, then lets it go.

Deleting a namespace marks it Terminating (its spec.finalizers hold "kubernetes"). This loop
deletes every namespaced object in it through the same stores clients use; once nothing is left,
it removes "kubernetes" from spec.finalizers through namespaces/NAME/finalize, as upstream's
controller does, and the namespace is removed once no finalizer holds it any more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable

from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.deletion import BACKGROUND
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import FinalizeStore
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.namespaces")
SWEEP_INTERVAL = 2.0
FINALIZER = "kubernetes"
# How the namespace's objects are deleted: at once, their dependents collected after them (upstream's).
EMPTYING = DeleteOptions(grace_period_seconds=0, propagation_policy=BACKGROUND)


class NamespaceController:
    def __init__(self, namespaces: Store, finalize: FinalizeStore, stores: Callable[[], Iterable[Store]]) -> None:
        self.namespaces = namespaces
        self.finalize_store = finalize
        self.stores = stores  # every resource's store, as the server serves them now
        self.wake = asyncio.Event()

    async def run(self) -> None:
        while True:
            try:
                await self.sweep()
            except (StorageError, StatusError) as err:
                log.warning("namespace sweep failed: %s", err)
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), SWEEP_INTERVAL)

    async def sweep(self) -> None:
        listed = await self.namespaces.list("", ListOptions())
        for view in listed.items:
            if view.obj.metadata.HasField("deletionTimestamp"):
                await self.finalize(view.obj.metadata.name)

    async def finalize(self, name: str) -> None:
        remaining = 0
        for store in list(self.stores()):
            if not store.resource.namespaced:
                continue
            for view in (await store.list(name, ListOptions())).items:
                try:
                    result = await store.delete(name, view.obj.metadata.name, EMPTYING)
                except StatusError as err:
                    if err.code != 404:
                        raise
                    continue
                remaining += not result.deleted
        if remaining:
            return  # objects with finalizers: try again on the next sweep

        def without_ours(current: Obj | None) -> Obj:
            assert current is not None  # the store answers 404 for a missing namespace itself
            namespace = self.namespaces.codec.copy(current)
            kept = [f for f in namespace.spec.finalizers if f != FINALIZER]
            del namespace.spec.finalizers[:]
            namespace.spec.finalizers.extend(kept)
            return namespace

        with contextlib.suppress(StatusError):  # 404: gone meanwhile
            await self.finalize_store.update("", name, without_ours, WriteOptions())
