"""The objects of one resource in storage (upstream's etcd3 store): keys, values, optimistic concurrency.

Every write but a plain create goes through ``guaranteed_update``: read the current object, compute
the new one with a transform, write it guarded by the read's mod revision, and start again from a
fresh read when someone else wrote first. PUT, PATCH, apply, status and scale writes, graceful
deletion, finalizer removal and deletion itself are all transforms (upstream's GuaranteedUpdate).
Objects arrive in their canonical shape (``codec.normalize``: Go's, for protobuf kinds), so that
equal objects are equal bytes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.storage import keys
from protokube.gateway.storage.backend import (
    MAX_REVISION,
    Backend,
    FutureRevision,
    KeyExists,
    KeyValue,
    ListResult,
    ModRevisionMismatch,
    prefix_end,
)
from protokube.gateway.storage.corrupt import CorruptObject
from protokube.schema.registry import Resource


@dataclass(frozen=True, slots=True)
class Removal:
    """A transform's answer meaning "delete the object": answer with ``obj``, or the object as it was."""

    obj: Obj | None = None


# current object (None: there is none) -> the new object, or a Removal; may raise to refuse.
Transform = Callable[[ObjectView | None], Awaitable["Obj | Removal"]]


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class Updated:
    def __init__(self, view: ObjectView, created: bool = False, removed: bool = False) -> None:
        self.view = view  # the object as written (or as it was, when nothing changed or it was removed)
        self.created = created
        self.removed = removed


# A backend whose reads do not give back the bytes written (a conversion webhook's CRD version: storage
# holds another version) has read_back(key, value, revision): what a read of ``value``, just written
# under ``key`` at ``revision``, gives.
ReadBack = Callable[[bytes, bytes, int], Awaitable[bytes]]


class CallMetrics(Protocol):
    def observe(self, operation: str, seconds: float, failed: bool) -> None:
        """A storage call took ``seconds`` (etcd_request_duration_seconds and friends)."""


class Unmeasured:
    def observe(self, operation: str, seconds: float, failed: bool) -> None:
        return None


class _Measured:
    """A storage call's duration and outcome, observed when its ``with`` block ends (a class, not a
    generator context manager: one per storage call)."""

    __slots__ = ("metrics", "operation", "started")

    def __init__(self, metrics: CallMetrics, operation: str) -> None:
        self.metrics = metrics
        self.operation = operation
        self.started = time.monotonic()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.metrics.observe(self.operation, time.monotonic() - self.started, kind is not None)


class WriteObserver(Protocol):
    """Told of an object store's writes while they are in flight (the resource's watch cache)."""

    def writing(self, key: bytes, value: bytes, obj: Obj) -> None:
        """``obj``, encoded as ``value``, is being written at ``key``; it stays as it is until ``written``."""

    def written(self, key: bytes, value: bytes, revision: int) -> None:
        """The write of ``value`` at ``key`` ended, at ``revision`` (0: it failed)."""


class ObjectStore:
    def __init__(self, backend: Backend, resource: Resource, codec: Codec, metrics: CallMetrics | None = None) -> None:
        self.backend = backend
        self.resource = resource
        self.codec = codec
        self.prefix = keys.collection_prefix(resource)
        self.metrics = metrics or Unmeasured()
        self._read_back: ReadBack | None = getattr(backend, "read_back", None)
        self.observer: WriteObserver | None = None  # the resource's watch cache

    def _measured(self, operation: str) -> _Measured:
        return _Measured(self.metrics, operation)

    def key(self, namespace: str, name: str) -> bytes:
        return keys.object_key(self.resource, namespace, name)

    def view(self, kv: KeyValue) -> ObjectView:
        """The object of a stored value, decoded now: CorruptObject when it cannot be."""
        try:
            obj = self.codec.decode(kv.value)
        except Exception as err:  # whatever the codec meets, the value is unreadable
            raise CorruptObject(kv.key.decode(errors="replace"), kv.mod_revision, str(err)) from None
        obj.metadata.resourceVersion = str(kv.mod_revision)
        return ObjectView(self.codec, kv.mod_revision, value=kv.value, obj=obj)

    # ---- reading ---------------------------------------------------------------------------------
    async def get(self, namespace: str, name: str) -> ObjectView | None:
        """The object as storage holds it now (None when absent)."""
        with self._measured("get"):
            kv, _ = await self.backend.get(self.key(namespace, name))
        return None if kv is None else self.view(kv)

    async def page(self, namespace: str, start: str, revision: int, limit: int) -> ListResult:
        """Keys of one namespace (all, when empty) from ``start`` (below the prefix), at ``revision``."""
        if revision > MAX_REVISION:  # more than storage can ever reach
            raise FutureRevision(f"required revision {revision} is a future revision")
        prefix = keys.collection_prefix(self.resource, namespace)
        begin = self.prefix + start.encode() if start else prefix
        with self._measured("list"):
            return await self.backend.list(begin, prefix_end(prefix), revision=revision, limit=limit)

    def relative_key(self, kv: KeyValue) -> str:
        """The key below the resource's prefix: "namespace/name" or "name"."""
        return kv.key[len(self.prefix) :].decode()

    # ---- writing ---------------------------------------------------------------------------------
    async def create(self, namespace: str, obj: Obj, *, dry_run: bool = False) -> ObjectView:
        """Store a new object under its name; KeyExists when the name is taken."""
        key = self.key(namespace, obj.metadata.name)
        if dry_run:
            if (await self.backend.get(key))[0] is not None:
                raise KeyExists(key.decode())
            return ObjectView.of(self.codec, obj, 0)
        return await self._put(key, obj, self.codec.encode(obj), "create")

    async def guaranteed_update(
        self,
        namespace: str,
        name: str,
        transform: Transform,
        *,
        cached: ObjectView | None = None,
        dry_run: bool = False,
    ) -> Updated:
        """Apply ``transform`` to the current object until the write lands.

        ``cached`` (the watch cache's copy) is a first guess that saves a storage read: the write is
        guarded by its mod revision, so a stale guess costs a retry, never a lost update. A transform
        that refuses a guess, or a guess that would change nothing, is checked against storage first;
        a no-op on a guess that storage then shows current is not transformed again.
        """
        key = self.key(namespace, name)
        current, confirmed = cached, cached is None
        if current is None:
            current = await self.get(namespace, name)
        while True:
            try:
                result = await transform(current)
            except Exception:
                if confirmed:
                    raise
                current, confirmed = await self.get(namespace, name), True
                continue
            try:
                if isinstance(result, Removal):
                    if current is None:
                        raise ValueError(f"a transform removed {key.decode()}, which does not exist")
                    return await self._remove(key, current, result, dry_run)
                if current is None:
                    return await self._create(key, result, dry_run)
                updated = await self._update(key, current, result, confirmed, dry_run)
            except ModRevisionMismatch as mismatch:  # someone wrote first: start from what they wrote
                current = None if mismatch.current is None else self.view(mismatch.current)
                confirmed = True
                continue
            except KeyExists:
                current, confirmed = await self.get(namespace, name), True
                continue
            if updated is not None:
                return updated
            guess, current, confirmed = current, await self.get(namespace, name), True  # a no-op on a guess
            if current is not None and current.resource_version == guess.resource_version:
                return Updated(current)  # confirmed: the guess was current, so the transform's no-op stands

    async def remove_unreadable(self, namespace: str, name: str) -> bool:
        """Remove whatever value the object's key holds without reading it as an object (the
        unsafe deletion of a corrupt object); False when there is none."""
        key = self.key(namespace, name)
        while True:
            kv, _ = await self.backend.get(key)
            if kv is None:
                return False
            try:
                with self._measured("delete"):
                    await self.backend.delete(key, kv.mod_revision)
            except ModRevisionMismatch:
                continue  # written meanwhile: remove what is there now
            return True

    async def _create(self, key: bytes, obj: Obj, dry_run: bool) -> Updated:
        if dry_run:
            return Updated(ObjectView.of(self.codec, obj, 0), created=True)
        return Updated(await self._put(key, obj, self.codec.encode(obj), "create"), created=True)

    async def _remove(self, key: bytes, current: ObjectView, removal: Removal, dry_run: bool) -> Updated:
        if not dry_run:
            with self._measured("delete"):
                await self.backend.delete(key, current.resource_version)
        if removal.obj is None:
            return Updated(current, removed=True)
        return Updated(ObjectView.of(self.codec, removal.obj, current.resource_version), removed=True)

    async def _update(
        self, key: bytes, current: ObjectView, obj: Obj, confirmed: bool, dry_run: bool
    ) -> Updated | None:
        """Write ``obj`` over ``current``; None when it would change nothing but ``current`` is a guess."""
        value = self.codec.encode(obj)
        unchanged = current.stored_again(obj, value) and not self.backend.stale(key, current.resource_version)
        if unchanged:  # a no-op update is not written (as upstream)
            return Updated(current) if confirmed else None
        if dry_run:
            return Updated(ObjectView.of(self.codec, obj, current.resource_version))
        return Updated(await self._put(key, obj, value, "update", current.resource_version))

    async def _put(self, key: bytes, obj: Obj, value: bytes, operation: str, mod_revision: int = 0) -> ObjectView:
        """Write ``value``, ``obj`` encoded, at ``key``: a create, or an update guarded by
        ``mod_revision``; the answer. The observer is told while the write is in flight."""
        observer = self.observer
        if observer is not None:
            observer.writing(key, value, obj)
        revision = 0
        try:
            with self._measured(operation):
                if operation == "create":
                    revision = await self.backend.create(key, value)
                else:
                    revision = await self.backend.update(key, value, mod_revision)
        finally:
            if observer is not None:
                observer.written(key, value, revision)
        return await self._written(key, obj, revision, value)

    async def _written(self, key: bytes, obj: Obj, revision: int, value: bytes) -> ObjectView:
        """The answer of a write: ``obj``, or, where the backend's reads differ from what it is
        given, what a read gives (upstream's store decodes the bytes it wrote into the answer)."""
        if self._read_back is None:
            return ObjectView.of(self.codec, obj, revision, value=value)
        return self.view(KeyValue(key=key, value=await self._read_back(key, value, revision), mod_revision=revision))
