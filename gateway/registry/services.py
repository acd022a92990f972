"""The Service store: the generic store plus cluster IPs and node ports (upstream's service REST
with its beginCreate, beginUpdate and afterDelete hooks).

Allocation runs where upstream's does, after defaulting and mutating admission and before the
strategy and validation: the generic store's begin-write hook. What a write took is given back if
the write fails (or is retried after a conflict); what an update frees, and all a deleted service
held, is released once the write succeeded. Dry runs take nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.admission import Admission
from protokube.gateway.registry.allocators.service import Allocation, ServiceAllocator
from protokube.gateway.registry.ownership import Ownership
from protokube.gateway.registry.rest import DeleteResult, UpdatedObject
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.strategy import Strategy
from protokube.gateway.watchcache.cacher import Cacher

SERVICE = "k8s.io.api.core.v1.Service"


class ServiceStore(Store):
    def __init__(
        self,
        storage: Cacher,
        strategy: Strategy,
        admission: Admission | None,
        ownership: Ownership | None,
        allocator: ServiceAllocator,
    ) -> None:
        super().__init__(storage, strategy, admission, ownership)
        self.allocator = allocator

    async def begin_write(self, obj: Obj, old: Obj | None, options: WriteOptions) -> Allocation | None:
        """Cluster IPs and node ports for the service (upstream's beginCreate and beginUpdate)."""
        return await self.allocator.allocate(obj, old, options.dry_run)

    async def guaranteed_update(
        self,
        namespace: str,
        name: str,
        updated: UpdatedObject,
        options: WriteOptions,
        prepare: Callable[[Obj, Obj], None],
        *,
        subresource: str = "",
        applied: bool = False,
    ) -> tuple[ObjectView, bool]:
        view, created = await super().guaranteed_update(
            namespace, name, updated, options, prepare, subresource=subresource, applied=applied
        )
        meta = view.obj.metadata
        if not options.dry_run and meta.HasField("deletionTimestamp") and not meta.finalizers:
            await self.allocator.release(view.obj)  # the update removed it (its last finalizer went)
        return view, created

    async def delete(self, namespace: str, name: str, options: DeleteOptions) -> DeleteResult:
        result = await super().delete(namespace, name, options)
        if result.deleted and not options.dry_run:
            await self.allocator.release(result.view.obj)
        return result

    async def repair(self) -> None:
        """Mark what the stored services hold (upstream's repair controllers, additive only)."""
        listed = await self.storage.list(self.filter("", ListOptions()), ListOptions())
        await self.allocator.repair([view.obj for view in listed.items])
