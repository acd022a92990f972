"""Storages of subresources that write part of their parent object: status and finalize.

Each is a small storage playing the roles its subresource serves, over the parent's store: a
status write changes only status (and metadata as upstream allows); a finalize write changes only
a namespace's spec.finalizers. Both are guaranteed updates of the parent object.
"""

from __future__ import annotations

from gateway.objects.view import ObjectView
from gateway.params import WriteOptions
from gateway.registry.rest import UpdatedObject
from gateway.registry.store import Store


class StatusStore:
    """pods/status, deployments/status, …: get and update (upstream's StatusREST)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.codec = store.codec

    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        return await self.store.get(namespace, name, resource_version)

    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        prepare = self.store.strategy.prepare_for_status_update
        return await self.store.guaranteed_update(namespace, name, updated, options, prepare, subresource="status")


class FinalizeStore:
    """namespaces/finalize: update only (upstream's FinalizeREST) — spec.finalizers change here."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.codec = store.codec

    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        def keep_status(new: object, old: object) -> None:
            new.status.CopyFrom(old.status)  # type: ignore[attr-defined]

        return await self.store.guaranteed_update(
            namespace, name, updated, options, keep_status, subresource="finalize"
        )
