"""The CRD controllers upstream's apiextensions-apiserver runs, in the elected gateway: naming
(``NamesAccepted`` and ``acceptedNames``: no plural, singular, short name or kind taken by another
CRD or a built-in resource of the group), establishing (``Established``), stored versions, and the
``customresourcecleanup`` finalizer (``Terminating``: every custom object deleted, then the CRD).

Condition reasons and messages are upstream's (pkg/controller/status/naming_controller.go,
establish/establishing_controller.go, finalizer/crd_finalizer.go)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from protokube.gateway import errors
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.registry.kinds import CRD_CLEANUP_FINALIZER
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import StatusStore
from protokube.gateway.storage.backend import StorageError
from protokube.schema.registry import Registry

log = logging.getLogger("protokube.apiextensions")
RETRY_DELAY = 1.0
Key = tuple[str, str, str]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CustomResourceDefinitionController:
    def __init__(self, crds: Store, registry: Registry, stores: Callable[[], Mapping[Key, Store]]) -> None:
        self.crds = crds
        self.status = StatusStore(crds)
        self.registry = registry
        self.stores = stores
        self.known: dict[str, dict[str, Any]] = {}
        self.dirty = asyncio.Event()

    # ---- the informer's sink ----
    def replace(self, views: Iterable[ObjectView]) -> None:
        self.known = {view.obj.metadata.name: view.codec.to_dict(view.obj) for view in views}
        self.dirty.set()

    def changed(self, event_type: str, view: ObjectView) -> None:
        if event_type == "DELETED":
            self.known.pop(view.obj.metadata.name, None)
        else:
            self.known[view.obj.metadata.name] = view.codec.to_dict(view.obj)
        self.dirty.set()

    # ---- the controller ----
    async def run(self) -> None:
        informer = asyncio.create_task(Informer(self.crds, self).run())
        try:
            while True:
                await self.dirty.wait()
                self.dirty.clear()
                try:
                    again = await self.sync()
                except (StorageError, StatusError) as err:
                    log.warning("customresourcedefinitions: %s", err)
                    again = True
                if again:
                    await asyncio.sleep(RETRY_DELAY)
                    self.dirty.set()
        finally:
            informer.cancel()
            await asyncio.gather(informer, return_exceptions=True)

    async def sync(self) -> bool:
        """One pass over every CRD; True when something must be looked at again later."""
        again = False
        for name, crd in list(self.known.items()):
            if crd["metadata"].get("deletionTimestamp"):
                again |= not await self._finalize(name, crd)
                continue
            status = self._status(name, crd)
            if _without_times(status) != _without_times(crd.get("status") or {}):
                await self._write_status(name, crd["metadata"]["uid"], status)
        return again

    # ---- naming and establishing ----
    def _status(self, name: str, crd: dict[str, Any]) -> dict[str, Any]:
        spec, status = crd["spec"], dict(crd.get("status") or {})
        names = spec["names"]
        conflict = self._conflict(name, spec["group"], names)
        conditions = list(status.get("conditions") or [])
        if conflict is None:
            status["acceptedNames"] = {k: v for k, v in names.items() if v}
            _set(conditions, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
            _set(conditions, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
        else:
            reason, message = conflict
            _set(conditions, "NamesAccepted", "False", reason, message)
            if not _is_true(conditions, "Established"):
                _set(conditions, "Established", "False", "NotAccepted", "not all names are accepted")
        status["conditions"] = conditions
        storage = next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), None)
        stored = list(status.get("storedVersions") or [])
        if storage and storage not in stored:
            stored.append(storage)
        status["storedVersions"] = stored
        return status

    def _conflict(self, name: str, group: str, names: dict[str, Any]) -> tuple[str, str] | None:
        """upstream's naming checks: resource names against every plural, singular and short name
        of the group, kinds against every kind and list kind (other CRDs' accepted names, and the
        built-in resources of the group)."""
        resources: set[str] = set()
        kinds: set[str] = set()
        for other_name, other in self.known.items():
            accepted = (other.get("status") or {}).get("acceptedNames") or {}
            if other_name == name or other["spec"].get("group") != group:
                continue
            resources |= {accepted.get("plural", ""), accepted.get("singular", ""), *accepted.get("shortNames", [])}
            kinds |= {accepted.get("kind", ""), accepted.get("listKind", "")}
        for resource in self.registry.resources.values():
            if resource.group == group and resource.extension is None:
                resources |= {resource.plural, resource.singular, *resource.short_names}
                kinds |= {resource.kind, resource.list_kind}
        resources.discard("")
        kinds.discard("")
        checks = (
            ("PluralConflict", [names.get("plural")], resources),
            ("SingularConflict", [names.get("singular")], resources),
            ("ShortNamesConflict", names.get("shortNames") or [], resources),
            ("KindConflict", [names.get("kind")], kinds),
            ("ListKindConflict", [names.get("listKind")], kinds),
        )
        for reason, values, taken in checks:
            for value in values:
                if value and value in taken:
                    return reason, f'"{value}" is already in use'
        return None

    async def _write_status(self, name: str, uid: str, status: dict[str, Any]) -> None:
        """Write the status of the CRD ``uid``; nothing when it is gone (the informer's view was
        older than storage, e.g. a CRD deleted and made again under its name: its event follows)."""

        def updated(current: Obj | None) -> Obj:
            if current is None or current.metadata.uid != uid:
                raise errors.not_found(self.crds.resource, name)
            value = self.crds.codec.to_dict(current)
            value["status"] = status
            return self.crds.codec.from_dict(value).obj

        try:
            await self.status.update("", name, updated, WriteOptions())
        except StatusError as err:
            if err.code != 404:
                raise

    # ---- deletion ----
    async def _finalize(self, name: str, crd: dict[str, Any]) -> bool:
        """Delete every object of a terminating CRD, then let it go; False while objects remain."""
        uid = crd["metadata"]["uid"]
        if CRD_CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []) or not await self._stored(name, uid):
            return True  # done, or an older view than storage's: not the objects of a CRD made since
        status = dict(crd.get("status") or {})
        conditions = list(status.get("conditions") or [])
        if _set(
            conditions, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"
        ):
            status["conditions"] = conditions
            await self._write_status(name, uid, status)
        store = self._storage_version_store(crd)
        if store is not None:
            await store.delete_collection("", DeleteOptions(), ListOptions())
            if (await store.list("", ListOptions(limit=1))).items:
                return False  # objects with finalizers of their own: look again later
        await self._remove_finalizer(name, uid)
        return True

    async def _stored(self, name: str, uid: str) -> bool:
        """Whether storage holds the CRD ``uid`` (while it does, no other CRD can take its name)."""
        try:
            return (await self.crds.get("", name, None)).obj.metadata.uid == uid
        except StatusError as err:
            if err.code != 404:
                raise
            return False

    def _storage_version_store(self, crd: dict[str, Any]) -> Store | None:
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        storage = next((v["name"] for v in crd["spec"].get("versions") or [] if v.get("storage")), None)
        if not accepted.get("plural") or storage is None:
            return None
        stores = self.stores()
        key = (crd["spec"]["group"], storage, accepted["plural"])
        if key in stores:
            return stores[key]
        served = [k for k in stores if (k[0], k[2]) == (key[0], key[2])]
        return stores[served[0]] if served else None

    async def _remove_finalizer(self, name: str, uid: str) -> None:
        def updated(current: Obj | None) -> Obj:
            if current is None or current.metadata.uid != uid:
                raise errors.not_found(self.crds.resource, name)
            obj = self.crds.codec.copy(current)
            kept = [f for f in obj.metadata.finalizers if f != CRD_CLEANUP_FINALIZER]
            obj.metadata.ClearField("finalizers")
            obj.metadata.finalizers.extend(kept)
            return obj

        try:
            await self.crds.update("", name, updated, WriteOptions())
        except StatusError as err:
            if err.code != 404:
                raise


def _is_true(conditions: list[dict[str, Any]], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def _set(conditions: list[dict[str, Any]], kind: str, status: str, reason: str, message: str) -> bool:
    """Set a condition in place; True when it changed (its transition time moves only with status)."""
    for i, condition in enumerate(conditions):
        if condition.get("type") == kind:
            if (condition.get("status"), condition.get("reason"), condition.get("message")) == (
                status,
                reason,
                message,
            ):
                return False
            moved = condition.get("status") != status
            when = _now() if moved else condition.get("lastTransitionTime") or _now()
            conditions[i] = _condition(kind, status, reason, message, when)
            return True
    conditions.append(_condition(kind, status, reason, message, _now()))
    return True


def _condition(kind: str, status: str, reason: str, message: str, when: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastTransitionTime": when, "reason": reason, "message": message}


def _without_times(status: dict[str, Any]) -> dict[str, Any]:
    conditions = [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions") or []]
    return {**status, "conditions": conditions}
