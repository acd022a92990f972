"""The generic store every resource shares (upstream's genericregistry.Store).

Create, update and delete run the same steps for every kind — system fields, per-kind hooks,
validation, optimistic concurrency against storage revisions, dry-run — and differ only through
the resource's options and its ``KindHooks``.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from gateway import errors
from gateway.errors import FieldError
from gateway.objects import ObjectView, storage_value
from gateway.params import DeleteOptions, WriteOptions
from gateway.registry import validation
from gateway.registry.kinds import hooks_for, now_seconds
from gateway.storage import keys
from gateway.storage.etcd import Etcd, KeyExists, KeyValue, ModRevisionMismatch
from protokube.schema import goshape
from protokube.schema.descriptors import message_class
from protokube.schema.registry import GroupVersionKind, Resource

# upstream's generateName: 5 characters from an alphabet without vowels and look-alikes.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_ATTEMPTS = 8
MAX_GENERATE_PREFIX = 58


def generate_name(prefix: str) -> str:
    return prefix[:MAX_GENERATE_PREFIX] + "".join(random.choice(NAME_ALPHABET) for _ in range(5))


@dataclass(frozen=True, slots=True)
class DeleteResult:
    view: ObjectView
    # False when the object still exists, marked for deletion (finalizers, graceful deletion).
    deleted: bool


# Checks a namespace before something is created in it; raises a StatusError when it may not be.
NamespaceCheck = Callable[[str], Awaitable[None]]
# The watch cache's view of an object (namespace, name), if it has one.
CacheLookup = Callable[[str, str], ObjectView | None]


@dataclass(slots=True)
class Current:
    """The object a write starts from: storage's copy, or the watch cache's as a first guess.

    A guess saves a storage read; the write's transaction compares mod revisions, so a stale
    guess costs one retry, never a lost update (upstream's GuaranteedUpdate does the same).
    """

    view: ObjectView
    confirmed: bool  # read from storage, not guessed from the cache
    value: bytes | None = None  # the stored bytes, when read from storage

    @property
    def mod_revision(self) -> int:
        return self.view.resource_version

    def stored_value(self, gvk: GroupVersionKind) -> bytes:
        return self.value if self.value is not None else storage_value(self.view.message, gvk)


class Store:
    def __init__(self, etcd: Etcd, resource: Resource, check_namespace: NamespaceCheck) -> None:
        self.etcd = etcd
        self.resource = resource
        self.gvk = resource.gvk
        self.cls = message_class(resource.message)
        self.hooks = hooks_for(resource)
        self.check_namespace = check_namespace
        self.cache_lookup: CacheLookup = lambda namespace, name: None

    # ---- reading -------------------------------------------------------------------------
    def view(self, kv: KeyValue) -> ObjectView:
        return ObjectView(self.gvk, self.resource.message, kv.mod_revision, value=kv.value)

    async def _read(self, key: bytes) -> Current | None:
        kv, _ = await self.etcd.get(key)
        return None if kv is None else self._confirmed(kv)

    def _confirmed(self, kv: KeyValue) -> Current:
        return Current(self.view(kv), confirmed=True, value=kv.value)

    async def _current(self, namespace: str, name: str, key: bytes) -> Current | None:
        """The watch cache's copy as a first guess, else storage's (None: storage has none)."""
        guess = self.cache_lookup(namespace, name)
        return Current(guess, confirmed=False) if guess is not None else await self._read(key)

    def key(self, namespace: str, name: str) -> bytes:
        return keys.object_key(self.resource, namespace, name)

    async def get(self, namespace: str, name: str) -> ObjectView:
        kv, _ = await self.etcd.get(self.key(namespace, name))
        if kv is None:
            raise errors.not_found(self.resource, name)
        return self.view(kv)

    # ---- shared steps ----------------------------------------------------------------------
    def _set_namespace(self, obj: Message, namespace: str) -> None:
        meta = obj.metadata
        if self.resource.namespaced:
            if meta.namespace and meta.namespace != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta.namespace = namespace
        else:
            meta.namespace = ""

    def _validate(self, obj: Message, *, creating: bool) -> None:
        found = validation.validate_object_meta(self.resource, obj.metadata, creating=creating)
        found += self.hooks.validate(obj)
        if found:
            raise errors.invalid(self.gvk.group, self.gvk.kind, obj.metadata.name, found)

    def _spec_bytes(self, obj: Message) -> bytes:
        return obj.spec.SerializeToString(deterministic=True) if self.hooks.has_spec else b""

    # ---- create --------------------------------------------------------------------------
    async def create(self, namespace: str, obj: Message, options: WriteOptions) -> ObjectView:
        self._set_namespace(obj, namespace)
        meta = obj.metadata
        meta.uid = str(uuid.uuid4())
        meta.creationTimestamp.Clear()
        meta.creationTimestamp.seconds = now_seconds()
        for system_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.ClearField(system_field)
        meta.resourceVersion = ""
        if self.hooks.has_spec:
            meta.generation = 1
        else:
            meta.ClearField("generation")
        self.hooks.prepare_for_create(obj)
        generated = bool(meta.generateName) and not meta.name
        if generated:
            meta.name = generate_name(meta.generateName)
        self._validate(obj, creating=True)
        goshape.normalize(obj)  # once, here: everything below relies on the Go shape
        if self.resource.namespaced:
            await self.check_namespace(namespace)
        for attempt in range(GENERATE_NAME_ATTEMPTS):
            key = self.key(namespace, meta.name)
            try:
                if options.dry_run:
                    if (await self.etcd.get(key))[0] is not None:
                        raise KeyExists(meta.name)
                    return ObjectView.from_message(self.gvk, obj, 0)
                revision = await self.etcd.create(key, storage_value(obj, self.gvk))
                return ObjectView.from_message(self.gvk, obj, revision)
            except KeyExists:
                if not generated:
                    raise errors.already_exists(self.resource, meta.name) from None
                if attempt == GENERATE_NAME_ATTEMPTS - 1:
                    raise errors.generate_name_conflict(self.resource, meta.name) from None
                meta.name = generate_name(meta.generateName)
        raise AssertionError("unreachable")

    # ---- update --------------------------------------------------------------------------
    async def update(self, namespace: str, name: str, obj: Message, options: WriteOptions) -> tuple[ObjectView, bool]:
        """Replace an object; returns the result and whether it was created (create-on-update)."""
        if obj.metadata.name != name:
            raise errors.bad_request(
                f"the name of the object ({obj.metadata.name}) does not match the name on the URL ({name})"
            )
        self._set_namespace(obj, namespace)
        wanted = obj.metadata.resourceVersion
        if wanted and not wanted.isdigit():
            raise errors.bad_request(f'invalid resource version: "{wanted}"')
        key = self.key(namespace, name)
        current = await self._current(namespace, name, key)
        while True:
            if current is not None and not current.confirmed and wanted and int(wanted) != current.mod_revision:
                current = await self._read(key)  # check what the cache said with storage before answering
            if current is None:
                if not self.resource.allow_create_on_update:
                    raise errors.not_found(self.resource, name)
                if wanted:
                    raise errors.conflict(self.resource, name, errors.OBJECT_MODIFIED)
                return await self.create(namespace, obj, options), True
            if wanted and int(wanted) != current.mod_revision:
                raise errors.conflict(self.resource, name, errors.OBJECT_MODIFIED)
            new = self._prepare_update(obj, current.view.message)
            value = storage_value(new, self.gvk)
            if value == current.stored_value(self.gvk):  # a no-op update is not written (GuaranteedUpdate)
                if not current.confirmed:
                    current = await self._read(key)
                    continue
                return current.view, False
            if options.dry_run:
                return ObjectView.from_message(self.gvk, new, current.mod_revision), False
            try:
                if self._finalized(new):  # the last finalizer is gone: the object is removed
                    await self.etcd.delete(key, current.mod_revision)
                    return ObjectView.from_message(self.gvk, new, current.mod_revision), False
                revision = await self.etcd.update(key, value, current.mod_revision)
            except ModRevisionMismatch as mismatch:
                if wanted:
                    raise errors.conflict(self.resource, name, errors.OBJECT_MODIFIED) from None
                current = mismatch.current and self._confirmed(mismatch.current)
                continue  # unconditional update: retry against the newer object
            return ObjectView.from_message(self.gvk, new, revision), False

    def _finalized(self, obj: Message) -> bool:
        meta = obj.metadata
        return (
            meta.HasField("deletionTimestamp")
            and not meta.finalizers
            and meta.deletionGracePeriodSeconds == 0
            and not self.hooks.blocks_deletion(obj)
        )

    def _prepare_update(self, obj: Message, old: Message) -> Message:
        new = type(obj)()
        new.CopyFrom(obj)
        goshape.normalize(new)
        meta, old_meta = new.metadata, old.metadata
        if meta.uid and meta.uid != old_meta.uid:
            raise errors.invalid(
                self.gvk.group,
                self.gvk.kind,
                meta.name,
                [FieldError.invalid("metadata.uid", meta.uid, "field is immutable")],
            )
        meta.uid = old_meta.uid
        meta.creationTimestamp.CopyFrom(old_meta.creationTimestamp)
        if old_meta.HasField("deletionTimestamp"):
            meta.deletionTimestamp.CopyFrom(old_meta.deletionTimestamp)
        else:
            meta.ClearField("deletionTimestamp")
        if old_meta.HasField("deletionGracePeriodSeconds"):
            meta.deletionGracePeriodSeconds = old_meta.deletionGracePeriodSeconds
        else:
            meta.ClearField("deletionGracePeriodSeconds")
        meta.ClearField("selfLink")
        self.hooks.prepare_for_update(new, old)
        if self.hooks.has_spec:
            changed = self._spec_bytes(new) != self._spec_bytes(old)
            meta.generation = old_meta.generation + 1 if changed else old_meta.generation
        else:
            meta.ClearField("generation")
        self._validate(new, creating=False)
        return new

    # ---- delete --------------------------------------------------------------------------
    async def delete(self, namespace: str, name: str, options: DeleteOptions) -> DeleteResult:
        key = self.key(namespace, name)
        current = await self._current(namespace, name, key)
        while True:
            if current is None:  # storage's answer: a guess is only ever an object
                raise errors.not_found(self.resource, name)
            meta = current.view.message.metadata
            try:
                self._check_preconditions(name, meta, options)
            except errors.StatusError:
                if current.confirmed:
                    raise
                current = await self._read(key)
                continue
            grace = self.hooks.grace_period_seconds(current.view.message, options.grace_period_seconds)
            try:
                if meta.finalizers or grace > 0 or self.hooks.blocks_deletion(current.view.message):
                    marked = await self._mark_deleting(key, current, grace, options)
                    return DeleteResult(marked, deleted=False)
                if options.dry_run:
                    return DeleteResult(current.view, deleted=True)
                await self.etcd.delete(key, current.mod_revision)
            except ModRevisionMismatch as mismatch:
                current = mismatch.current and self._confirmed(mismatch.current)
                if current is None:
                    raise errors.not_found(self.resource, name) from None
                continue
            return DeleteResult(current.view, deleted=True)

    def _check_preconditions(self, name: str, meta: Message, options: DeleteOptions) -> None:
        if options.precondition_uid is not None and options.precondition_uid != meta.uid:
            raise errors.conflict(
                self.resource,
                name,
                f"Precondition failed: UID in precondition: {options.precondition_uid}, UID in object meta: {meta.uid}",
            )
        wanted = options.precondition_resource_version
        if wanted is not None and wanted != meta.resourceVersion:
            raise errors.conflict(
                self.resource,
                name,
                f"Precondition failed: ResourceVersion in precondition: {wanted}, "
                f"ResourceVersion in object meta: {meta.resourceVersion}",
            )

    async def _mark_deleting(self, key: bytes, current: Current, grace: int, options: DeleteOptions) -> ObjectView:
        """Graceful deletion or finalizers: set deletionTimestamp instead of removing the object."""
        obj = current.view.copy()
        meta = obj.metadata
        now = now_seconds()
        if meta.HasField("deletionTimestamp") and meta.deletionGracePeriodSeconds <= grace:
            return current.view  # already marked, and the new request would not shorten the wait
        meta.deletionTimestamp.Clear()
        meta.deletionTimestamp.seconds = now + grace
        meta.deletionGracePeriodSeconds = grace
        self.hooks.mark_deleting(obj)
        if options.dry_run:
            return ObjectView.from_message(self.gvk, obj, current.mod_revision)
        revision = await self.etcd.update(key, storage_value(obj, self.gvk), current.mod_revision)
        return ObjectView.from_message(self.gvk, obj, revision)
