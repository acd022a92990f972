"""The namespace controller: empties a namespace being deleted, then lets it go.

Deleting a namespace marks it Terminating (its spec.finalizers hold "kubernetes"). This loop
deletes every namespaced object in it; once nothing is left, it clears spec.finalizers (what
upstream does through namespaces/NAME/finalize) and the namespace is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from gateway.errors import StatusError
from gateway.objects import storage_value
from gateway.params import DeleteOptions
from gateway.storage import keys
from gateway.storage.etcd import ModRevisionMismatch, StorageError, prefix_end

if TYPE_CHECKING:
    from gateway.app import Gateway

log = logging.getLogger("protokube.namespaces")
SWEEP_INTERVAL = 2.0


class NamespaceController:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
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
        store = self.gateway.namespaces
        prefix = keys.collection_prefix(store.resource)
        listed = await self.gateway.etcd.list(prefix, prefix_end(prefix))
        for kv in listed.kvs:
            namespace = store.view(kv).message
            if namespace.metadata.HasField("deletionTimestamp"):
                await self.finalize(namespace.metadata.name)

    async def finalize(self, name: str) -> None:
        remaining = 0
        for store in self.gateway.stores.values():
            if not store.resource.namespaced:
                continue
            prefix = keys.collection_prefix(store.resource, name)
            for kv in (await self.gateway.etcd.list(prefix, prefix_end(prefix))).kvs:
                view = store.view(kv)
                try:
                    result = await store.delete(name, view.message.metadata.name, DeleteOptions(grace_period_seconds=0))
                except StatusError as err:
                    if err.code != 404:
                        raise
                    continue
                remaining += not result.deleted
        if remaining:
            return  # objects with finalizers: try again on the next sweep
        namespaces = self.gateway.namespaces
        kv, _ = await self.gateway.etcd.get(namespaces.key("", name))
        if kv is None:
            return
        namespace = namespaces.view(kv).copy()
        key = namespaces.key("", name)
        try:
            if namespace.metadata.finalizers:  # others' finalizers still hold it: only ours is done
                del namespace.spec.finalizers[:]
                await self.gateway.etcd.update(key, storage_value(namespace, namespaces.gvk), kv.mod_revision)
            else:
                await self.gateway.etcd.delete(key, kv.mod_revision)
        except ModRevisionMismatch:
            self.wake.set()
