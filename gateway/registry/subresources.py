"""Storages of subresources that show or write part of their parent object: status, finalize, scale,
ephemeralcontainers.

Each is a small storage playing the roles its subresource serves, over the parent's store: a
status write changes only status (and metadata as upstream allows); a finalize write changes only
a namespace's spec.finalizers; a scale write changes only the replicas. All are guaranteed updates
of the parent object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.fieldmanager import scale as scaleownership
from protokube.gateway.fieldmanager.manager import FieldManager, Unchanged
from protokube.gateway.fieldmanager.scale import SCALE_API_VERSION
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry import ownership
from protokube.gateway.registry.rest import UpdatedObject
from protokube.gateway.registry.store import Store, require_applied_name
from protokube.gateway.selectors import label_selector_text
from protokube.schema.registry import GroupVersionKind
from protokube.schema.typetree import proto_type

SCALE_MESSAGE = "k8s.io.api.autoscaling.v1.Scale"


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

    async def apply(
        self, namespace: str, name: str, applied: dict[str, Any], options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        return await self.store.apply(namespace, name, applied, options, subresource="status")


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


class EphemeralContainersStore:
    """pods/ephemeralcontainers: get, update and apply (upstream's EphemeralContainersREST). A write
    changes spec.ephemeralContainers only, which may gain containers but neither lose nor change one."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.codec = store.codec

    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        return await self.store.get(namespace, name, resource_version)

    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        return await self.store.guaranteed_update(
            namespace, name, updated, options, self._only_ephemeral_containers, subresource="ephemeralcontainers"
        )

    async def apply(
        self, namespace: str, name: str, applied: dict[str, Any], options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        subresource, prepare = "ephemeralcontainers", self._only_ephemeral_containers
        return await self.store.apply(namespace, name, applied, options, subresource=subresource, prepare=prepare)

    def _only_ephemeral_containers(self, new: Any, old: Any) -> None:
        """Keep the stored pod but for spec.ephemeralContainers (and the resourceVersion asked for)."""
        self.codec.normalize(new)  # in the stored shape, so that an unchanged container compares equal
        wanted = type(new.spec)()
        wanted.ephemeralContainers.extend(new.spec.ephemeralContainers)  # copies
        resource_version = new.metadata.resourceVersion
        managed_fields = list(new.metadata.managedFields)  # this write's field ownership is kept
        new.CopyFrom(old)
        new.metadata.resourceVersion = resource_version
        del new.metadata.managedFields[:]
        new.metadata.managedFields.extend(managed_fields)
        del new.spec.ephemeralContainers[:]
        new.spec.ephemeralContainers.extend(wanted.ephemeralContainers)
        problems = _ephemeral_container_changes(list(wanted.ephemeralContainers), list(old.spec.ephemeralContainers))
        if problems:
            raise errors.invalid("", "Pod", old.metadata.name, problems)


def _ephemeral_container_changes(new: list[Any], old: list[Any]) -> list[FieldError]:
    """An EphemeralContainer keeps its name in ephemeralContainerCommon (inlined in JSON)."""
    by_name = {c.ephemeralContainerCommon.name: c for c in new}
    problems = []
    for container in old:
        name = container.ephemeralContainerCommon.name
        if name not in by_name:
            detail = f"existing ephemeral containers {errors.go_quote(name)} may not be removed\n"
            problems.append(FieldError.forbidden("spec.ephemeralContainers", detail))
        elif by_name[name] != container:
            detail = f"existing ephemeral containers {errors.go_quote(name)} may not be changed\n"
            problems.append(FieldError.forbidden(f"spec.ephemeralContainers[{name}]", detail))
    return problems


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """Where the parent keeps what its Scale shows (upstream's built-in scalable kinds all use these;
    custom resources name their own: specReplicasPath, statusReplicasPath, labelSelectorPath)."""

    spec_replicas: str = "spec.replicas"
    status_replicas: str = "status.replicas"
    label_selector: str = "spec.selector"


class ScaleStore:
    """deployments/scale, replicasets/scale, …: the parent's replicas as an autoscaling/v1 Scale,
    read and written through the parent (upstream's ScaleREST), server-side apply included; the
    Scale's managedFields are the parent's owners of the replicas (gateway/fieldmanager/scale.py).
    Admission sees the Scale too: the store's AdmissionView of its writes is this."""

    def __init__(self, store: Store, scale_codec: Codec, paths: ScalePaths = ScalePaths()) -> None:
        self.store = store
        self.codec = scale_codec
        self.paths = paths
        self.replicas: tuple[str, ...] = tuple(paths.spec_replicas.split("."))
        self.fields = FieldManager(proto_type(SCALE_MESSAGE), SCALE_API_VERSION, "Scale")

    def _scale_dict(self, data: dict[str, Any], owners: bool = True) -> dict[str, Any]:
        """The Scale of a parent (as JSON); ``owners``: with its managedFields."""
        meta = data["metadata"]
        scale_meta = {
            k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
        }
        if owners and (managed := scaleownership.to_scale(meta.get("managedFields"), self.replicas)):
            scale_meta["managedFields"] = managed
        return {
            "apiVersion": SCALE_API_VERSION,
            "kind": "Scale",
            "metadata": scale_meta,
            "spec": {"replicas": self._replicas(data)},
            "status": {"replicas": _at(data, self.paths.status_replicas) or 0, "selector": self._selector(data)},
        }

    def _replicas(self, data: dict[str, Any]) -> Any:
        replicas = _at(data, self.paths.spec_replicas)
        return DEFAULT_REPLICAS if replicas is None else replicas

    def _scale(self, parent: ObjectView) -> ObjectView:
        """The Scale a read or a write answers with: without managedFields (upstream's scaleFrom*)."""
        scale = self._scale_dict(self.store.codec.to_dict(parent.obj), owners=False)
        return ObjectView.of(self.codec, self.codec.from_dict(scale).obj, parent.resource_version)

    def _selector(self, data: dict[str, Any]) -> str:
        if not self.paths.label_selector:  # a CRD's scale without labelSelectorPath
            return ""
        selector = _at(data, self.paths.label_selector)
        if isinstance(selector, str):  # already a selector string (custom resources keep one in status)
            return selector
        if isinstance(selector, dict) and not {"matchLabels", "matchExpressions"} & set(selector):
            selector = {"matchLabels": selector}  # a plain label map (ReplicationController's selector)
        return label_selector_text(selector)

    @property
    def kind(self) -> GroupVersionKind:
        return self.codec.gvk

    def show(self, parent: Obj, *, mutating: bool) -> Obj:
        """The Scale admission sees: for mutating admission with its managedFields (the Scale the
        request made), for validating admission without (upstream's scaleFrom* of the parent)."""
        return self.codec.from_dict(self._scale_dict(self.store.codec.to_dict(parent), owners=mutating)).obj

    def write_back(self, shown: Obj, parent: Obj) -> Obj:
        """The parent with the replicas mutating admission gave the Scale, checked as a request's."""
        self._check(shown.spec.replicas, shown.metadata.uid, parent, parent.metadata.name)
        data = self.store.codec.to_dict(parent)
        if shown.spec.replicas == self._replicas(data):
            return parent
        _set(data, self.paths.spec_replicas, shown.spec.replicas)
        return self.store.codec.from_dict(data).obj

    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        return self._scale(await self.store.get(namespace, name, resource_version))

    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        parent_codec = self.store.codec

        def rescaled(current: Obj | None) -> Obj:
            assert current is not None  # the store answers 404 for a missing parent itself
            data = parent_codec.to_dict(current)
            scale = updated(self.codec.from_dict(self._scale_dict(data)).obj)
            self._check(scale.spec.replicas, scale.metadata.uid, current, name)
            _set(data, self.paths.spec_replicas, scale.spec.replicas)
            data["metadata"]["resourceVersion"] = scale.metadata.resourceVersion
            return parent_codec.from_dict(data).obj

        prepare = self.store.strategy.prepare_for_update
        view, _ = await self.store.guaranteed_update(
            namespace, name, rescaled, options, prepare, subresource="scale", view=self
        )
        return self._scale(view), False

    async def apply(
        self, namespace: str, name: str, applied: dict[str, Any], options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        """Server-side apply of a Scale: merged into the parent's Scale with the Scale's field
        ownership, then the replicas and their owners written back to the parent."""
        require_applied_name(applied, name)
        parent_codec = self.store.codec
        api_version = self.store.resource.gvk.api_version

        def rescaled(current: Obj | None) -> Obj:
            assert current is not None  # a subresource never creates: the store answers 404
            data = parent_codec.to_dict(current)
            scale = self._scale_dict(data)
            merged = self.fields.apply(
                scale, applied, options.field_manager, bool(options.force), "scale", now=ownership.now()
            )
            if isinstance(merged, Unchanged):
                return parent_codec.copy(current)
            replicas = (merged.get("spec") or {}).get("replicas", DEFAULT_REPLICAS)
            uid = (merged.get("metadata") or {}).get("uid", "")
            self._check(replicas, uid, current, name)
            _set(data, self.paths.spec_replicas, replicas)
            scale_owners = (merged.get("metadata") or {}).get("managedFields")
            data["metadata"]["managedFields"] = scaleownership.to_parent(
                data["metadata"].get("managedFields"), scale_owners, self.replicas, api_version
            )
            return parent_codec.from_dict(data).obj

        prepare = self.store.strategy.prepare_for_update
        view, _ = await self.store.guaranteed_update(
            namespace, name, rescaled, options, prepare, subresource="scale", applied=True, view=self
        )
        return self._scale(view), False

    def _check(self, replicas: Any, uid: str, current: Obj, name: str) -> None:
        """What upstream's scale validation and UID precondition refuse."""
        if isinstance(replicas, bool) or not isinstance(replicas, int) or not 0 <= replicas < 2**31:
            error = FieldError.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
            raise errors.invalid("autoscaling", "Scale", name, [error])
        if uid and uid != current.metadata.uid:
            resource = self.store.resource
            raise errors.conflict_on(
                f"{resource.plural}/scale.{resource.group}" if resource.group else f"{resource.plural}/scale",
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {current.metadata.uid}",
            )


DEFAULT_REPLICAS = 1  # what upstream's defaulting gives a scalable kind without spec.replicas


def _at(data: dict[str, Any], path: str) -> Any:
    value: Any = data
    for step in path.split("."):
        value = value.get(step) if isinstance(value, dict) else None
    return value


def _set(data: dict[str, Any], path: str, value: object) -> None:
    *parents, last = path.split(".")
    for step in parents:
        data = data.setdefault(step, {})
    data[last] = value
