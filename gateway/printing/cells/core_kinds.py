"""Cells of the core/v1 kinds served after core.py's: volumes and claims, pod templates,
replication controllers, resource quotas, component statuses.

Where upstream's printer reads a field its API defaulting always sets (a volume's reclaim policy
and mode, a controller's replicas), the cell applies that default: this server stores objects as
written.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import Row, cell, format_labels

UNSET = "<unset>"
# upstream's core.BetaStorageClassAnnotation, read before spec.storageClassName.
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes(modes: list[str]) -> str:
    """upstream's helper.GetAccessModesAsString: short names in a fixed order, duplicates once."""
    return ",".join(short for mode, short in _ACCESS_MODES if mode in modes)


def quantity_text(quantities: Message, name: str) -> str:
    """Quantity.String() of a resource list entry; a missing one is the zero quantity, "0"."""
    return (quantities[name].string or "0") if name in quantities else "0"


def _phase(obj: Message, default: str = "") -> str:
    """The phase, or Terminating once deletion started."""
    if obj.metadata.HasField("deletionTimestamp"):
        return "Terminating"
    return obj.status.phase or default


def _volume_mode(spec: Message) -> str:
    return spec.volumeMode if spec.HasField("volumeMode") else "Filesystem"


# ---- persistent volumes and claims ------------------------------------------------------------
@cell("pv_capacity")
def pv_capacity(row: Row) -> str:
    return quantity_text(row.obj.spec.capacity, "storage")


@cell("pv_access_modes")
def pv_access_modes(row: Row) -> str:
    return access_modes(list(row.obj.spec.accessModes))


@cell("pv_reclaim_policy")
def pv_reclaim_policy(row: Row) -> str:
    return row.obj.spec.persistentVolumeReclaimPolicy or "Retain"


@cell("pv_status")
def pv_status(row: Row) -> str:
    """Upstream's PersistentVolume strategy sets a new volume's phase to Pending."""
    return _phase(row.obj, "Pending")


@cell("pv_claim")
def pv_claim(row: Row) -> str:
    spec = row.obj.spec
    return f"{spec.claimRef.namespace}/{spec.claimRef.name}" if spec.HasField("claimRef") else ""


@cell("pv_storage_class")
def pv_storage_class(row: Row) -> str:
    return row.obj.metadata.annotations.get(BETA_STORAGE_CLASS, row.obj.spec.storageClassName)


@cell("volume_attributes_class")
def volume_attributes_class(row: Row) -> str:
    spec = row.obj.spec
    return spec.volumeAttributesClassName if spec.HasField("volumeAttributesClassName") else UNSET


@cell("volume_mode")
def volume_mode(row: Row) -> str:
    return _volume_mode(row.obj.spec)


@cell("pvc_status")
def pvc_status(row: Row) -> str:
    return _phase(row.obj)


@cell("pvc_capacity")
def pvc_capacity(row: Row) -> str:
    """The bound volume's capacity; empty until the claim names a volume."""
    if not row.obj.spec.volumeName:
        return ""
    return quantity_text(row.obj.status.capacity, "storage")


@cell("pvc_access_modes")
def pvc_access_modes(row: Row) -> str:
    if not row.obj.spec.volumeName:
        return ""
    return access_modes(list(row.obj.status.accessModes))


@cell("pvc_storage_class")
def pvc_storage_class(row: Row) -> str:
    annotations = row.obj.metadata.annotations
    if BETA_STORAGE_CLASS in annotations:
        return annotations[BETA_STORAGE_CLASS]
    spec = row.obj.spec
    return spec.storageClassName if spec.HasField("storageClassName") else ""


# ---- pod templates, replication controllers ---------------------------------------------------
@cell("podtemplate_containers")
def podtemplate_containers(row: Row) -> str:
    return ",".join(c.name for c in row.obj.template.spec.containers)


@cell("podtemplate_images")
def podtemplate_images(row: Row) -> str:
    return ",".join(c.image for c in row.obj.template.spec.containers)


@cell("podtemplate_labels")
def podtemplate_labels(row: Row) -> str:
    return format_labels(dict(row.obj.template.metadata.labels))


@cell("replicas_desired")
def replicas_desired(row: Row) -> int:
    """spec.replicas, defaulted to 1 (replication controllers and replica sets)."""
    spec = row.obj.spec
    return spec.replicas if spec.HasField("replicas") else 1


@cell("map_selector")
def map_selector(row: Row) -> str:
    """A map selector (a replication controller's) as labels.FormatLabels writes it."""
    return format_labels(dict(row.obj.spec.selector))


# ---- resource quotas ---------------------------------------------------------------------------
def _quota_columns(row: Row) -> tuple[str, str]:
    if "quota" in row.memo:
        return row.memo["quota"]
    status = row.obj.status
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(status.hard):
        column = limit if len(name.split(".")) > 1 and name.split(".")[0] == "limits" else request
        column.append(f"{name}: {quantity_text(status.used, name)}/{quantity_text(status.hard, name)}")
    row.memo["quota"] = (", ".join(request), ", ".join(limit))
    return row.memo["quota"]


@cell("quota_request")
def quota_request(row: Row) -> str:
    return _quota_columns(row)[0]


@cell("quota_limit")
def quota_limit(row: Row) -> str:
    return _quota_columns(row)[1]


# ---- component statuses -----------------------------------------------------------------------
def _healthy(row: Row) -> Message | None:
    return next((c for c in row.obj.conditions if c.type == "Healthy"), None)


@cell("componentstatus_status")
def componentstatus_status(row: Row) -> str:
    condition = _healthy(row)
    if condition is None:
        return "Unknown"
    return "Healthy" if condition.status == "True" else "Unhealthy"


@cell("componentstatus_message")
def componentstatus_message(row: Row) -> str:
    condition = _healthy(row)
    return condition.message if condition is not None else ""


@cell("componentstatus_error")
def componentstatus_error(row: Row) -> str:
    condition = _healthy(row)
    return condition.error if condition is not None else ""
