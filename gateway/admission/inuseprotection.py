"""StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection): new
PersistentVolumeClaims and PersistentVolumes get the finalizer that keeps them while they are in
use; the pvc-protection and pv-protection controllers remove it once they are not."""

from __future__ import annotations

from protokube.gateway.registry.admission import CREATE, Attributes
from protokube.schema.registry import Resource

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
FINALIZERS = {("", "persistentvolumeclaims"): PVC_PROTECTION, ("", "persistentvolumes"): PV_PROTECTION}


class StorageObjectInUseProtection:
    @staticmethod
    def handles(resource: Resource) -> bool:
        """Persistent volumes and their claims only."""
        return (resource.group, resource.plural) in FINALIZERS

    async def admit(self, attributes: Attributes) -> None:
        resource, obj = attributes.resource, attributes.obj
        finalizer = FINALIZERS.get((resource.group, resource.plural))
        if attributes.operation != CREATE or finalizer is None or attributes.subresource or obj is None:
            return
        if finalizer not in obj.metadata.finalizers:
            obj.metadata.finalizers.append(finalizer)
