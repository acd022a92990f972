"""kube-controller-manager's pvc-protection and pv-protection controllers
(pkg/controller/volume/pvcprotection, pvprotection): a claim or a volume being deleted keeps the
finalizer StorageObjectInUseProtection gave it while it is in use, and loses it when it is not —
a claim is in use while a pod scheduled to a node names it (as a persistentVolumeClaim volume, or
as the ephemeral volume it was made for), a volume while it is bound. Until then it stays,
terminating, and the namespace it is in with it. One that lacks the finalizer while not being
deleted (made while the admission plugin was off) gets it.

Each watches its resource; what is still in use is looked at again every second (the pods that
use claims come and go unwatched).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.admission.inuseprotection import PV_PROTECTION, PVC_PROTECTION
from protokube.gateway.controllers import selection
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.controllers.pernamespace import OPTIONS
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.storageprotection")
CLAIMS = ("", "v1", "persistentvolumeclaims")
VOLUMES = ("", "v1", "persistentvolumes")
PODS = ("", "v1", "pods")
RECHECK = 1.0  # seconds between looks at objects still in use
Key = tuple[str, str]


class ProtectionController:
    """What both share: a terminating object that has ``finalizer`` loses it once ``in_use`` says
    it is not used; one that is not terminating and lacks it gets it (one made while the admission
    plugin was off)."""

    finalizer = ""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pending: dict[Key, Message] = {}  # the objects whose finalizer is to be added or taken away
        self.dirty = asyncio.Event()

    async def in_use(self, obj: Message) -> bool:
        raise NotImplementedError

    # ---- the informer's sink ----
    def replace(self, views: Iterable[ObjectView]) -> None:
        self.pending = {}
        for view in views:
            self.changed("ADDED", view)

    def changed(self, event_type: str, view: ObjectView) -> None:
        meta = view.obj.metadata
        key = (meta.namespace, meta.name)
        deleting, protected = meta.HasField("deletionTimestamp"), self.finalizer in meta.finalizers
        if event_type != "DELETED" and deleting == protected:
            self.pending[key] = view.obj
            self.dirty.set()
        else:
            self.pending.pop(key, None)

    # ---- the controller ----
    async def run(self) -> None:
        informer = asyncio.create_task(Informer(self.store, self).run())
        try:
            while True:
                if self.pending:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.dirty.wait(), RECHECK)
                else:
                    await self.dirty.wait()
                self.dirty.clear()
                await self.sync()
        finally:
            informer.cancel()
            await asyncio.gather(informer, return_exceptions=True)

    async def sync(self) -> None:
        for key, obj in list(self.pending.items()):
            try:
                if not obj.metadata.HasField("deletionTimestamp"):
                    await self._set_finalizer(*key, protect=True)
                elif not await self.in_use(obj):
                    await self._set_finalizer(*key, protect=False)
            except (StorageError, StatusError) as err:
                log.warning("%s %s/%s: %s", self.finalizer, *key, err)

    async def _set_finalizer(self, namespace: str, name: str, *, protect: bool) -> None:
        store = self.store

        def changed(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found(store.resource, name)
            obj = store.codec.copy(current)
            finalizers = obj.metadata.finalizers
            if protect and self.finalizer not in finalizers and not obj.metadata.HasField("deletionTimestamp"):
                finalizers.append(self.finalizer)
            elif not protect:
                kept = [f for f in finalizers if f != self.finalizer]
                del finalizers[:]
                finalizers.extend(kept)
            return obj

        try:
            await store.update(namespace, name, changed, OPTIONS)
        except StatusError as err:
            if err.code != 404:
                raise
        self.pending.pop((namespace, name), None)


class ClaimProtection(ProtectionController):
    finalizer = PVC_PROTECTION

    def __init__(self, claims: Store, pods: Store) -> None:
        super().__init__(claims)
        self.pods = pods

    async def in_use(self, obj: Message) -> bool:
        """Whether a pod scheduled to a node uses the claim (the pods as storage has them now)."""
        listed = await self.pods.list(obj.metadata.namespace, ListOptions())
        return any(_uses(view.obj, obj) for view in listed.items)


def _uses(pod: Message, claim: Message) -> bool:
    if not pod.spec.nodeName:  # the kubelet never sees unscheduled pods; they cannot start on a going claim
        return False
    name = claim.metadata.name
    for volume in pod.spec.volumes:
        source = volume.volumeSource
        if source.HasField("persistentVolumeClaim") and source.persistentVolumeClaim.claimName == name:
            return True
        ephemeral = source.HasField("ephemeral") and f"{pod.metadata.name}-{volume.name}" == name
        if ephemeral and _owned_by(claim, pod) and not _shut_down(pod):
            return True
    return False


def _shut_down(pod: Message) -> bool:
    """The kubelet is done with the pod, or it was force-deleted: deleted with no grace left."""
    meta = pod.metadata
    deleted = meta.HasField("deletionTimestamp") and meta.HasField("deletionGracePeriodSeconds")
    return deleted and meta.deletionGracePeriodSeconds == 0


def _owned_by(claim: Message, pod: Message) -> bool:
    return any(ref.controller and ref.uid == pod.metadata.uid for ref in claim.metadata.ownerReferences)


class VolumeProtection(ProtectionController):
    finalizer = PV_PROTECTION

    async def in_use(self, obj: Message) -> bool:
        return obj.status.phase == "Bound"


def storage_protection(
    stores: Mapping[tuple[str, str, str], Store], enabled: Callable[[str], bool]
) -> list[Callable[[], Coroutine[Any, Any, None]]]:
    """The runs of the two controllers that are enabled and whose resources are served."""
    claims, volumes, pods = stores.get(CLAIMS), stores.get(VOLUMES), stores.get(PODS)
    runs: list[Callable[[], Coroutine[Any, Any, None]]] = []
    if claims is not None and pods is not None and enabled(selection.PVC_PROTECTION):
        runs.append(ClaimProtection(claims, pods).run)
    if volumes is not None and enabled(selection.PV_PROTECTION):
        runs.append(VolumeProtection(volumes).run)
    return runs
