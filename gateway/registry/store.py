"""The generic store every resource shares (upstream's genericregistry.Store).

It plays every role of rest.py. Create, update and delete run the same steps for every kind —
system fields, the kind's strategy, validation, admission, optimistic concurrency, dry-run — and
differ only through the resource's options and its strategy. Reads and writes go through the
resource's Cacher; every update and delete is a transform of the current object.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol

from mypy_extensions import mypyc_attr

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions, parse_resource_version
from protokube.gateway.registry.admission import CREATE, DELETE, UPDATE, Admission, Attributes
from protokube.gateway.registry.deletion import default_policy, deletion_finalizers
from protokube.gateway.registry.ownership import Ownership
from protokube.gateway.registry.rest import DeleteResult, UpdatedObject
from protokube.gateway.registry.strategy import Strategy
from protokube.gateway.registry.validation.meta import validate_object_meta
from protokube.gateway.selectors import FIELD_LABEL_CONVERSIONS, Filter, field_selector, label_selector
from protokube.gateway.storage.backend import KeyExists
from protokube.gateway.storage.objectstore import Removal
from protokube.gateway.uuids import random_uuid
from protokube.gateway.watchcache.cacher import Cacher, Listed, WatchStream
from protokube.schema.registry import GroupVersionKind

# upstream's generateName: 5 characters from an alphabet without vowels and look-alikes.
NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_ATTEMPTS: Final = 8
MAX_GENERATE_PREFIX: Final = 58
# Fields of metadata only the server sets.
SERVER_SET_ON_CREATE: Final = ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")


def generate_name(prefix: str) -> str:
    return prefix[:MAX_GENERATE_PREFIX] + "".join(random.choice(NAME_ALPHABET) for _ in range(5))


def now_seconds() -> int:
    return int(time.time())


def check_namespace(obj: Obj, namespace: str) -> None:
    """An object's namespace, when it names one, must be the request's (upstream's checkName)."""
    if obj.metadata.namespace and obj.metadata.namespace != namespace:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


# The field manager of writes the server makes itself (system namespaces, controllers).
SERVER_MANAGER: Final = "kube-apiserver"


class Begun(Protocol):
    """What a kind's begin-write hook took for one attempt of a write (upstream's FinishFunc)."""

    async def commit(self) -> None:
        """The write succeeded: keep what it took, free what it gave up."""

    async def revert(self) -> None:
        """The write failed, or this attempt is retried: give back what it took."""


class AdmissionView(Protocol):
    """How admission sees a subresource whose object is a kind of its own, made from its parent
    (upstream's scale storages: an autoscaling/v1 Scale, mutated before it is written back to the
    parent, validated as made from the updated parent by toScaleUpdateValidation)."""

    @property
    def kind(self) -> GroupVersionKind:
        """The subresource's kind."""

    def show(self, parent: Obj, *, mutating: bool) -> Obj:
        """The subresource's object made from ``parent``, for mutating or for validating admission."""

    def write_back(self, shown: Obj, parent: Obj) -> Obj:
        """``parent`` with what mutating admission changed in ``shown`` (``parent`` itself when
        nothing it keeps changed)."""


class _Attempts:
    """The begin-write hook's result of a write's latest attempt; an earlier attempt's is reverted.
    As a context: committed if the write succeeds, else reverted."""

    def __init__(self) -> None:
        self.begun: Begun | None = None

    async def replace(self, begun: Begun | None) -> None:
        if self.begun is not None:
            await self.begun.revert()
        self.begun = begun

    async def __aenter__(self) -> _Attempts:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        if kind is not None:
            await self.replace(None)
        elif self.begun is not None:
            await self.begun.commit()


@mypyc_attr(allow_interpreted_subclasses=True)  # the kinds' own stores (services.py, ...; tools/compile.py)
class Store:
    def __init__(
        self,
        storage: Cacher,
        strategy: Strategy,
        admission: Admission | None = None,
        ownership: Ownership | None = None,
    ) -> None:
        self.storage = storage
        self.resource = storage.resource
        self.codec = storage.codec
        self.strategy = strategy
        self.admission = (admission or Admission()).for_resource(self.resource)
        self.ownership = ownership  # managedFields; None for kinds without a type to track them by
        self.gc_policy = default_policy(self.resource.key)  # what a delete does to dependents by default
        self.generate_name: Callable[[str], str] = generate_name  # a name for metadata.generateName

    # ---- reading ---------------------------------------------------------------------------------
    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        view = await self.storage.get(namespace, name, parse_resource_version(resource_version))
        if view is None:
            raise errors.not_found(self.resource, name)
        return view

    @property
    def _own_field_conversion(self) -> bool:
        """Whether upstream checks this kind's field labels with a conversion function of its own."""
        gvk = self.resource.gvk
        return self.resource.extension is not None or (gvk.group, gvk.version, gvk.kind) in FIELD_LABEL_CONVERSIONS

    def filter(self, namespace: str, options: ListOptions) -> Filter:
        return Filter(
            namespace,
            label_selector(options.label_selector),
            field_selector(options.field_selector, self.resource.selectable_fields, self._own_field_conversion),
        )

    async def list(self, namespace: str, options: ListOptions) -> Listed:
        return await self.storage.list(self.filter(namespace, options), options)

    async def watch(self, namespace: str, options: ListOptions, deadline: float) -> WatchStream:
        return await self.storage.watch(self.filter(namespace, options), options, deadline)

    # ---- shared steps ----------------------------------------------------------------------------
    def _set_namespace(self, obj: Obj, namespace: str) -> None:
        meta = obj.metadata
        if self.resource.namespaced:
            check_namespace(obj, namespace)
            meta.namespace = namespace
        else:
            meta.namespace = ""

    async def _validate(self, obj: Obj, old: Obj | None) -> None:
        found = validate_object_meta(self.resource, obj.metadata, None if old is None else old.metadata)
        found += self.strategy.validate(obj, old)
        found += await self.strategy.validate_rules(obj, old, found)
        if found:
            raise errors.invalid(self.resource.group, self.resource.kind, obj.metadata.name, found)

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
        kind: GroupVersionKind | None = None,
    ) -> None:
        """Validating admission, or (``mutating``) the plugins that change the object first;
        ``kind``: the objects' when they are a subresource's own kind."""
        attributes = Attributes(operation, self.resource, subresource, namespace, name, obj, old, options, kind)
        await (self.admission.admit if mutating else self.admission.validate)(attributes)

    async def _admit_update(
        self,
        namespace: str,
        name: str,
        new: Obj,
        old: Obj,
        options: WriteOptions,
        subresource: str,
        view: AdmissionView | None,
        *,
        mutating: bool = False,
    ) -> Obj:
        """Admission of an update of ``old`` to ``new``, or (``view``) of the subresource's objects
        made from them; returns ``new`` with what mutating admission changed (a copy through a view)."""
        if view is None:
            await self._admit(UPDATE, namespace, name, new, old, options, subresource, mutating=mutating)
            return new
        shown, shown_old = view.show(new, mutating=mutating), view.show(old, mutating=mutating)
        await self._admit(
            UPDATE, namespace, name, shown, shown_old, options, subresource, mutating=mutating, kind=view.kind
        )
        return view.write_back(shown, new) if mutating else new

    async def admit_delete(self, namespace: str, name: str, old: Obj | None, options: DeleteOptions) -> None:
        """Admission of the removal of ``old`` (None: an object that cannot be read): the mutating
        plugins (there is no object for them to change: they may refuse), then the validating ones,
        as upstream's AdmissionToValidateObjectDeleteFunc."""
        await self._admit(DELETE, namespace, name, None, old, options, mutating=True)
        await self._admit(DELETE, namespace, name, None, old, options)

    async def begin_write(self, obj: Obj, old: Obj | None, options: WriteOptions) -> Begun | None:
        """Upstream's BeginCreate/BeginUpdate hooks: a kind's store takes what the write of ``obj``
        (``old``: the stored object on update) needs, after mutating admission and before the
        strategy and validation; the store commits or reverts it when the write ends. None here."""
        return None

    # ---- create ----------------------------------------------------------------------------------
    async def _prepare_create(self, namespace: str, obj: Obj) -> None:
        """System fields, the kind's create strategy and validation (upstream's BeforeCreate)."""
        self._set_namespace(obj, namespace)
        meta = obj.metadata
        meta.uid = random_uuid()
        meta.creationTimestamp.Clear()
        meta.creationTimestamp.seconds = now_seconds()
        for system_field in SERVER_SET_ON_CREATE:
            meta.ClearField(system_field)
        meta.resourceVersion = ""
        if self.strategy.uses_generation:
            meta.generation = 1
        else:
            meta.ClearField("generation")
        self.strategy.prepare_for_create(obj)
        if meta.generateName and not meta.name:
            meta.name = self.generate_name(meta.generateName)
        self.strategy.default(obj)  # again, as upstream's read-back from storage defaults
        await self._validate(obj, None)
        self.codec.normalize(obj)

    def _track(self, old: Obj | None, new: Obj, options: WriteOptions, subresource: str = "") -> None:
        """Record the write's field ownership (an Update entry) in ``new``'s managedFields."""
        if self.ownership is not None:
            self.ownership.update(old, new, options.field_manager or SERVER_MANAGER, subresource)

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> ObjectView:
        generated = bool(obj.metadata.generateName) and not obj.metadata.name
        # the request's namespace in the object (or 400 on a conflicting one) before admission: mutating
        # webhooks see it, as upstream's createHandler sets it (EnsureObjectNamespaceMatchesRequestNamespace)
        self._set_namespace(obj, namespace)
        self.strategy.default(obj)
        self._track(None, obj, options)
        async with _Attempts() as attempts:
            await self._admit(CREATE, namespace, obj.metadata.name, obj, None, options, mutating=True)
            await attempts.replace(await self.begin_write(obj, None, options))
            await self._prepare_create(namespace, obj)
            self.strategy.record_requester(obj, options.user)
            meta = obj.metadata
            await self._admit(CREATE, namespace, meta.name, obj, None, options)
            for attempt in range(GENERATE_NAME_ATTEMPTS):
                try:
                    return await self.storage.create(namespace, obj, dry_run=options.dry_run)
                except KeyExists:
                    if not generated:
                        raise errors.already_exists(self.resource, meta.name) from None
                    if attempt == GENERATE_NAME_ATTEMPTS - 1:
                        raise errors.generate_name_conflict(self.resource, meta.name) from None
                    meta.name = self.generate_name(meta.generateName)
        raise AssertionError("unreachable")

    # ---- update ----------------------------------------------------------------------------------
    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        """Replace an object by what ``updated`` makes of the current one; returns the result and
        whether it was created (create-on-update)."""
        return await self.guaranteed_update(namespace, name, updated, options, self.strategy.prepare_for_update)

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
        view: AdmissionView | None = None,
    ) -> tuple[ObjectView, bool]:
        """The update every writer shares: ``updated`` makes the new object from the current one,
        ``prepare`` keeps what this endpoint may not change; then field ownership (unless ``updated``
        is a server-side apply, which recorded it), system metadata, generation, validation and
        admission (through ``view`` for a subresource of a kind of its own), retried on conflicts by
        the storage's guaranteed update. Apply creates what is missing; other updates only where the
        kind allows create-on-update; a subresource never creates (upstream's subresource storages
        pass forceAllowCreate=false)."""
        may_create = not subresource and (applied or self.resource.allow_create_on_update)

        async def transform(current: ObjectView | None) -> Obj | Removal:
            if current is None and not may_create:
                raise errors.not_found(self.resource, name)
            old = current.obj if current is not None else None
            new = updated(old)
            self.strategy.default(new)
            if not applied:
                self._track(old, new, options, subresource)
            self._set_namespace(new, namespace)
            wanted = new.metadata.resourceVersion
            if wanted and not (wanted.isascii() and wanted.isdigit()):
                raise errors.bad_request(f'invalid resource version: "{wanted}"')
            if current is None:
                if wanted:
                    raise errors.conflict(self.resource, name, errors.OBJECT_MODIFIED)
                await self._admit(CREATE, namespace, name, new, None, options, mutating=True)
                await attempts.replace(await self.begin_write(new, None, options))
                await self._prepare_create(namespace, new)
                if options.authorize_create is not None:  # as upstream, before validating admission
                    options.authorize_create()
                await self._admit(CREATE, namespace, name, new, None, options)
                return new
            if wanted and int(wanted) != current.resource_version:
                raise errors.conflict(self.resource, name, errors.OBJECT_MODIFIED)
            assert old is not None
            self._keep_system_metadata(new, old)
            new = await self._admit_update(namespace, name, new, old, options, subresource, view, mutating=True)
            if not subresource:
                await attempts.replace(await self.begin_write(new, old, options))
            prepare(new, old)
            self.strategy.default(new)
            self.codec.normalize(new)  # in Go's shape, as the stored object is, before comparing them
            self._set_generation(new, old)
            await self._validate(new, old)
            await self._admit_update(namespace, name, new, old, options, subresource, view)
            return Removal(new) if self._finalized(new) else new

        async with _Attempts() as attempts:
            result = await self.storage.guaranteed_update(namespace, name, transform, dry_run=options.dry_run)
        return result.view, result.created

    async def apply(
        self,
        namespace: str,
        name: str,
        applied: dict[str, Any],
        options: WriteOptions,
        subresource: str = "",
        prepare: Callable[[Obj, Obj], None] | None = None,
    ) -> tuple[ObjectView, bool]:
        """Server-side apply of ``applied`` (the parsed apply configuration) by ``options.field_manager``:
        merged into the current object, or creating it; conflicts with other managers are 409 unless
        ``options.force``. An apply that changes nothing writes nothing."""
        if self.ownership is None:
            raise errors.unsupported_media_type(f"{self.resource.group_resource} does not support server-side apply")
        ownership = self.ownership
        ownership.fields.check_kind(applied)  # the field manager's version check comes before checkName
        require_applied_name(applied, name)

        def merged(current: Obj | None) -> Obj:
            result = ownership.apply(current, applied, options.field_manager, bool(options.force), subresource)
            if result is None:  # nothing changes: the current object, which storage then does not write
                assert current is not None
                return self.codec.copy(current)
            return result

        if prepare is None:
            status = subresource == "status"
            prepare = self.strategy.prepare_for_status_update if status else self.strategy.prepare_for_update
        return await self.guaranteed_update(
            namespace, name, merged, options, prepare, subresource=subresource, applied=True
        )

    def _keep_system_metadata(self, new: Obj, old: Obj) -> None:
        """uid, creationTimestamp and deletion fields stay as stored (upstream's BeforeUpdate)."""
        meta, old_meta = new.metadata, old.metadata
        changed = [
            FieldError.invalid(f"metadata.{field}", getattr(meta, field), "field is immutable")
            for field in ("name", "uid")
            if getattr(meta, field) and getattr(meta, field) != getattr(old_meta, field)
        ]
        if changed:
            raise errors.invalid(self.resource.group, self.resource.kind, old_meta.name, changed)
        meta.uid = old_meta.uid
        meta.creationTimestamp.CopyFrom(old_meta.creationTimestamp)
        meta.ClearField("deletionTimestamp")
        if old_meta.HasField("deletionTimestamp"):
            meta.deletionTimestamp.CopyFrom(old_meta.deletionTimestamp)
        meta.ClearField("deletionGracePeriodSeconds")
        if old_meta.HasField("deletionGracePeriodSeconds"):
            meta.deletionGracePeriodSeconds = old_meta.deletionGracePeriodSeconds
        meta.ClearField("selfLink")

    def _set_generation(self, new: Obj, old: Obj) -> None:
        if not self.strategy.uses_generation:
            new.metadata.generation = old.metadata.generation  # a request never sets it (BeforeUpdate)
            return
        changed = self.codec.spec_changed(new, old)
        new.metadata.generation = old.metadata.generation + 1 if changed else old.metadata.generation

    def _finalized(self, obj: Obj) -> bool:
        """Deletion was requested and nothing holds the object any more: it is removed now."""
        meta = obj.metadata
        return (
            meta.HasField("deletionTimestamp")
            and not meta.finalizers
            and meta.deletionGracePeriodSeconds == 0
            and not self.strategy.blocks_deletion(obj)
        )

    # ---- delete ----------------------------------------------------------------------------------
    async def delete(self, namespace: str, name: str, options: DeleteOptions) -> DeleteResult:
        """Remove the object, or mark it deleting while finalizers (those of garbage collection
        included, as the options ask), a grace period or the kind hold it (upstream's Store.Delete)."""

        marked_first = False  # a graceful kind's marks are written, and the object goes next

        async def transform(current: ObjectView | None) -> Obj | Removal:
            nonlocal marked_first
            if current is None:
                raise errors.not_found(self.resource, name)
            obj = current.obj
            await self.admit_delete(namespace, name, obj, options)  # as upstream, before graceful deletion
            self._check_preconditions(name, obj, options)
            meta = obj.metadata
            grace = self.strategy.grace_period_seconds(obj, options.grace_period_seconds)
            pending = meta.HasField("deletionTimestamp")
            if pending:
                if 0 < meta.deletionGracePeriodSeconds <= grace:
                    return current.copy()  # graceful deletion pending, and this request would not shorten it
                grace = min(grace, meta.deletionGracePeriodSeconds)  # a grace period may only get shorter
            finalizers = deletion_finalizers(list(meta.finalizers), options, self.gc_policy)
            if finalizers or grace > 0 or self.strategy.blocks_deletion(obj):
                return self._mark_deleting(current, grace, finalizers)
            # upstream's BeforeDelete marks a graceful kind's first (or shortened) deletion even with
            # no grace: one write with deletionTimestamp and a grace of 0, then the removal.
            marked_first = self.strategy.graceful_deletion and (not pending or meta.deletionGracePeriodSeconds > 0)
            return self._mark_deleting(current, 0, finalizers) if marked_first else Removal()

        result = await self.storage.guaranteed_update(namespace, name, transform, dry_run=options.dry_run)
        if marked_first and not options.dry_run:
            return await self._remove_marked(namespace, name, result.view)
        return DeleteResult(result.view, deleted=result.removed or marked_first)

    async def _remove_marked(self, namespace: str, name: str, marked: ObjectView) -> DeleteResult:
        """The second write of a delete without grace (upstream's Store.Delete after its update): the
        object goes; if someone removed it meanwhile, the marked object is what was deleted."""

        async def remove(current: ObjectView | None) -> Removal:
            if current is None or current.obj.metadata.uid != marked.obj.metadata.uid:
                raise errors.not_found(self.resource, name)
            return Removal()

        try:
            result = await self.storage.guaranteed_update(namespace, name, remove)
        except errors.StatusError as err:
            if err.code != 404:
                raise
            return DeleteResult(marked, deleted=True)
        return DeleteResult(result.view, deleted=True)

    def _check_preconditions(self, name: str, obj: Obj, options: DeleteOptions) -> None:
        """DeleteOptions' preconditions, as upstream's BeforeDelete checks them: a conflict on the
        kind (its GroupResource is the group and the kind, "ConfigMap", "Deployment.apps")."""
        meta, gvk = obj.metadata, self.resource.gvk
        kind = f"{gvk.kind}.{gvk.group}" if gvk.group else gvk.kind
        if options.precondition_uid is not None and options.precondition_uid != meta.uid:
            raise errors.conflict_on(
                kind,
                name,
                f"the UID in the precondition ({options.precondition_uid}) does not match the UID in record "
                f"({meta.uid}). The object might have been deleted and then recreated",
            )
        wanted = options.precondition_resource_version
        if wanted is not None and wanted != meta.resourceVersion:
            raise errors.conflict_on(
                kind,
                name,
                f"the ResourceVersion in the precondition ({wanted}) does not match the ResourceVersion in record "
                f"({meta.resourceVersion}). The object might have been modified",
            )

    def _mark_deleting(self, current: ObjectView, grace: int, finalizers: Sequence[str]) -> Obj:
        """Graceful deletion or finalizers: set deletionTimestamp instead of removing the object
        (upstream's BeforeDelete and markAsDeleting); generation moves when deletion starts."""
        obj = current.copy()
        meta = obj.metadata
        if list(meta.finalizers) != list(finalizers):
            del meta.finalizers[:]
            meta.finalizers.extend(finalizers)
        now = now_seconds()
        if not meta.HasField("deletionTimestamp"):
            if meta.generation > 0:
                meta.generation += 1
            self.strategy.mark_deleting(obj)
        elif grace == 0 and meta.deletionTimestamp.seconds <= now:
            return obj  # finalizers hold it already: the first deletion's time stays
        meta.deletionTimestamp.Clear()
        meta.deletionTimestamp.seconds = now + grace
        meta.deletionGracePeriodSeconds = grace
        return obj

    async def delete_collection(self, namespace: str, options: DeleteOptions, list_options: ListOptions) -> Listed:
        """Delete every object the list options select; returns what was deleted (or marked)."""
        listed = await self.storage.list(self.filter(namespace, list_options), list_options)
        removed = []
        for view in listed.items:
            meta = view.obj.metadata
            try:
                result = await self.delete(meta.namespace, meta.name, options)
            except errors.StatusError as err:
                if err.code == 404:
                    continue  # deleted meanwhile
                raise
            removed.append(result.view)
        return Listed(removed, listed.list_meta)


def require_applied_name(applied: dict[str, Any], name: str) -> None:
    """An apply names the object of its URL (400 otherwise, as upstream's applyPatcher)."""
    body_name = (applied.get("metadata") or {}).get("name") if isinstance(applied.get("metadata"), dict) else None
    if body_name != name:
        raise errors.bad_request(
            f"the name of the object ({body_name or ''}) does not match the name on the URL ({name})"
        )
