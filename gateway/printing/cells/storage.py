"""Cells of storage.k8s.io/v1 StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities and
VolumeAttachments. The printers' own defaults are upstream's API defaults; a CSIDriver's
volumeLifecycleModes default to Persistent (SetDefaults_CSIDriver)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell

# storageutil.IsDefaultAnnotation: the annotation, or its beta form, set to "true".
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


@cell("storageclass_name")
def storageclass_name(row: Row) -> str:
    annotations = row.obj.metadata.annotations
    default = any(annotations.get(key) == "true" for key in DEFAULT_CLASS_ANNOTATIONS)
    return row.obj.metadata.name + (" (default)" if default else "")


@cell("storageclass_reclaim_policy")
def storageclass_reclaim_policy(row: Row) -> str:
    return row.obj.reclaimPolicy if row.obj.HasField("reclaimPolicy") else "Delete"


@cell("storageclass_volume_binding_mode")
def storageclass_volume_binding_mode(row: Row) -> str:
    return row.obj.volumeBindingMode if row.obj.HasField("volumeBindingMode") else "Immediate"


@cell("storageclass_allow_volume_expansion")
def storageclass_allow_volume_expansion(row: Row) -> bool:
    return row.obj.HasField("allowVolumeExpansion") and row.obj.allowVolumeExpansion


def _flag(row: Row, name: str, default: bool) -> bool:
    spec = row.obj.spec
    return getattr(spec, name) if spec.HasField(name) else default


@cell("csidriver_attach_required")
def csidriver_attach_required(row: Row) -> bool:
    return _flag(row, "attachRequired", True)


@cell("csidriver_pod_info_on_mount")
def csidriver_pod_info_on_mount(row: Row) -> bool:
    return _flag(row, "podInfoOnMount", False)


@cell("csidriver_storage_capacity")
def csidriver_storage_capacity(row: Row) -> bool:
    return _flag(row, "storageCapacity", False)


@cell("csidriver_token_requests")
def csidriver_token_requests(row: Row) -> str:
    """The audiences of spec.tokenRequests; "<unset>" when the list is absent (nil in Go)."""
    requests = row.obj.spec.tokenRequests
    return ",".join(t.audience for t in requests) if requests else "<unset>"


@cell("csidriver_requires_republish")
def csidriver_requires_republish(row: Row) -> bool:
    return _flag(row, "requiresRepublish", False)


@cell("csidriver_modes")
def csidriver_modes(row: Row) -> str:
    return ",".join(row.obj.spec.volumeLifecycleModes) or "Persistent"


@cell("csinode_drivers")
def csinode_drivers(row: Row) -> int:
    return len(row.obj.spec.drivers)


@cell("csistoragecapacity_capacity")
def csistoragecapacity_capacity(row: Row) -> str:
    return (row.obj.capacity.string or "0") if row.obj.HasField("capacity") else "<unset>"


@cell("volumeattachment_attached")
def volumeattachment_attached(row: Row) -> bool:
    return row.obj.status.attached
