"""The Service store: the generic store plus cluster IPs and node ports (upstream's service REST
with its beginCreate, beginUpdate and afterDelete hooks).

Allocation runs where upstream's does, after defaulting and mutating admission and before the
strategy and validation: the store's mutating-admission step of each create and update. What a
write took is given back if the write fails (or is retried after a conflict); what an update
frees, and all a deleted service held, is released once the write succeeded. Dry runs take nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass

from gateway.admission import Admission
from gateway.objects.codec import Obj
from gateway.objects.view import ObjectView
from gateway.params import DeleteOptions, ListOptions, WriteOptions
from gateway.registry.allocators.service import Allocation, ServiceAllocator
from gateway.registry.ownership import Ownership
from gateway.registry.rest import DeleteResult, UpdatedObject
from gateway.registry.store import Store
from gateway.registry.strategy import Strategy
from gateway.storage.cacher import Cacher

SERVICE = "k8s.io.api.core.v1.Service"


@dataclass
class _Write:
    """The allocation of the write in progress in this task."""

    dry_run: bool
    allocation: Allocation | None = None


_WRITE: ContextVar[_Write | None] = ContextVar("service_write", default=None)


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

    @contextlib.asynccontextmanager
    async def _allocating(self, dry_run: bool) -> AsyncIterator[None]:
        write = _Write(dry_run)
        token = _WRITE.set(write)
        try:
            yield
        except BaseException:
            if write.allocation is not None:
                await write.allocation.revert()
            raise
        else:
            if write.allocation is not None:
                await write.allocation.commit()
        finally:
            _WRITE.reset(token)

    async def _admit(
        self,
        operation: str,
        namespace: str,
        name: str,
        obj: Obj | None,
        old: Obj | None,
        options: WriteOptions | DeleteOptions,
        subresource: str = "",
        *,
        mutating: bool = False,
    ) -> None:
        await super()._admit(operation, namespace, name, obj, old, options, subresource, mutating=mutating)
        write = _WRITE.get()
        if not mutating or write is None or obj is None or subresource:
            return
        if write.allocation is not None:  # a retried update: what the earlier attempt took goes back
            await write.allocation.revert()
            write.allocation = None
        write.allocation = await self.allocator.allocate(obj, old, write.dry_run)

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> ObjectView:
        async with self._allocating(options.dry_run):
            return await super().create(namespace, obj, options)

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
        async with self._allocating(options.dry_run):
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
