"""core/v1 PersistentVolumes and PersistentVolumeClaims (core validation's ValidatePersistentVolume,
ValidatePersistentVolumeClaim and their updates). 1.32's gates: VolumeAttributesClass off,
RecoverVolumeExpansionFailure on."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.claims import VOLUME_MODES, access_modes_errors, claim_spec_errors
from protokube.gateway.registry.validation.common import (
    check,
    enum,
    messages_equal,
    positive_quantity,
    quantity_text,
    quantity_value,
    spec_diff,
)
from protokube.gateway.registry.validation.pods import csi_driver_name_errors, node_selector_errors, volume_type_errors
from protokube.gateway.syntax import dns1123_label_problems, dns1123_subdomain_problems

_CORE = "k8s.io.api.core.v1."
_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
# PersistentVolumeSource fields in the order upstream checks them, with the child its errors use.
_PV_TYPES = (
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephfs"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
)
_SECOND_TYPE_PATH = {"cephfs": "cephFS"}
_CSI_SECRET_REFS = (
    "controllerPublishSecretRef",
    "controllerExpandSecretRef",
    "nodePublishSecretRef",
    "nodeExpandSecretRef",
)


def _secret_reference(reference: Message, field: str) -> list[FieldError]:
    found = []
    if not reference.name:
        found.append(FieldError.required(f"{field}.name"))
    else:
        found += check(f"{field}.name", reference.name, dns1123_subdomain_problems)
    if not reference.namespace:
        found.append(FieldError.required(f"{field}.namespace"))
    else:
        found += check(f"{field}.namespace", reference.namespace, dns1123_label_problems)
    return found


def _pv_source(source: Message, kind: str, field: str, node_affinity: bool) -> list[FieldError]:
    """The rules of one persistent volume type; the shared volume types use the pod volume rules."""
    if kind == "csi":
        found = csi_driver_name_errors(source.driver, f"{field}.driver")
        if not source.volumeHandle:
            found.append(FieldError.required(f"{field}.volumeHandle"))
        for name in _CSI_SECRET_REFS:
            if source.HasField(name):
                found += _secret_reference(getattr(source, name), f"{field}.{name}")
        return found
    if kind == "local":
        if not source.path:
            return [FieldError.required(f"{field}.path")]
        found = []
        if ".." in source.path.split("/"):
            found.append(FieldError.invalid(f"{field}.path", source.path, "must not contain '..'"))
        if not node_affinity:
            found.append(FieldError.required("spec.nodeAffinity", "Local volume requires node affinity"))
        return found
    return volume_type_errors(source, field, kind)


def _capacity_shown(capacity: dict[str, str]) -> GoText:
    if not capacity:
        return GoText("core.ResourceList(nil)")
    entries = ", ".join(f'"{name}":"{quantity_text(text)}"' for name, text in sorted(capacity.items()))
    return GoText(f"core.ResourceList{{{entries}}}")


def pv_spec_errors(spec: Message) -> list[FieldError]:
    """ValidatePersistentVolumeSpec for a PersistentVolume (not an inline volume)."""
    found: list[FieldError] = []
    if not spec.accessModes:
        found.append(FieldError.required("spec.accessModes"))
    found += access_modes_errors(list(spec.accessModes), "spec.accessModes")
    capacity = {name: spec.capacity[name].string for name in spec.capacity}
    if not capacity:
        found.append(FieldError.required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        found.append(FieldError.not_supported("spec.capacity", _capacity_shown(capacity), ("storage",)))
    for name in sorted(capacity):
        path = f"spec.capacity[{name}]"
        if quantity_value(capacity[name]) < 0:
            found.append(FieldError.invalid(path, quantity_text(capacity[name]), "must be a valid resource quantity"))
        found += positive_quantity(path, capacity[name])
    if spec.persistentVolumeReclaimPolicy:
        found += enum("spec.persistentVolumeReclaimPolicy", spec.persistentVolumeReclaimPolicy, _RECLAIM_POLICIES)
    affinity = spec.HasField("nodeAffinity")
    if affinity:
        if spec.nodeAffinity.HasField("required"):
            found += node_selector_errors(spec.nodeAffinity.required, "spec.nodeAffinity.required")
        else:
            found.append(FieldError.required("spec.nodeAffinity.required", "must specify required node constraints"))
    source = spec.persistentVolumeSource
    count = 0
    for kind, child in _PV_TYPES:
        if not source.HasField(kind):
            continue
        if count and kind != "flexVolume":
            detail = "may not specify more than 1 volume type"
            found.append(FieldError.forbidden(f"spec.{_SECOND_TYPE_PATH.get(kind, kind)}", detail))
            continue
        count += 1
        found += _pv_source(getattr(source, kind), kind, f"spec.{child}", affinity)
    if not count:
        found.append(FieldError.required("spec", "must specify a volume type"))
    host_path = source.hostPath.path if source.HasField("hostPath") else ""
    if host_path and host_path.rstrip("/") == "" and spec.persistentVolumeReclaimPolicy == "Recycle":
        detail = "may not be 'recycle' for a hostPath mount of '/'"
        found.append(FieldError.forbidden("spec.persistentVolumeReclaimPolicy", detail))
    if spec.storageClassName:
        found += check("spec.storageClassName", spec.storageClassName, dns1123_subdomain_problems)
    if spec.HasField("volumeMode"):
        found += enum("spec.volumeMode", spec.volumeMode, VOLUME_MODES, required=True)
    return found


@validator(_CORE + "PersistentVolume")
def validate_persistent_volume(volume: Message, old: Message | None) -> list[FieldError]:
    found = pv_spec_errors(volume.spec)
    if old is None:
        return found
    new_source, old_source = type(volume.spec.persistentVolumeSource)(), old.spec.persistentVolumeSource
    new_source.CopyFrom(volume.spec.persistentVolumeSource)
    if (
        old_source.HasField("csi")
        and new_source.HasField("csi")
        and not old_source.csi.HasField("controllerExpandSecretRef")
    ):
        new_source.csi.ClearField("controllerExpandSecretRef")
    if not messages_equal(new_source, old_source):
        detail = f"spec.persistentvolumesource is immutable after creation\n{spec_diff(old_source, new_source)}"
        found.append(FieldError.forbidden("spec.persistentvolumesource", detail))
    if volume.spec.volumeMode != old.spec.volumeMode or volume.spec.HasField("volumeMode") != old.spec.HasField(
        "volumeMode"
    ):
        shown = volume.spec.volumeMode if volume.spec.HasField("volumeMode") else None
        found.append(FieldError.invalid("volumeMode", shown, "field is immutable"))
    return found


def _claim_update(claim: Message, old: Message) -> list[FieldError]:
    """ValidatePersistentVolumeClaimUpdate: the spec is immutable but for a bound claim's storage
    request; volumeName may be set once, storageClassName set from nil."""
    found: list[FieldError] = []
    new_spec, old_spec = type(claim.spec)(), type(old.spec)()
    new_spec.CopyFrom(claim.spec)
    old_spec.CopyFrom(old.spec)
    if not old.spec.volumeName:
        old_spec.volumeName = new_spec.volumeName
    annotation = "volume.beta.kubernetes.io/storage-class"
    old_annotation = old.metadata.annotations.get(annotation)
    new_annotation = claim.metadata.annotations.get(annotation)
    if (
        old_annotation is not None
        and not old.spec.HasField("storageClassName")
        and claim.spec.HasField("storageClassName")
    ):
        if claim.spec.storageClassName == old_annotation and new_annotation in (None, old_annotation):
            new_spec.ClearField("storageClassName")
    else:
        if (new_annotation or "") != (old_annotation or ""):
            detail = "field is immutable"
            found.append(FieldError.invalid(f"metadata.annotations.{annotation}", new_annotation or "", detail))
        upgrade_from_nil = claim.spec.HasField("storageClassName") and not old.spec.HasField("storageClassName")
        if upgrade_from_nil and (old_annotation is None or claim.spec.storageClassName == old_annotation):
            new_spec.ClearField("storageClassName")
    bound = claim.status.phase == "Bound"
    if bound and "storage" in old.spec.resources.requests:
        new_spec.resources.requests["storage"].CopyFrom(old.spec.resources.requests["storage"])
    if not messages_equal(new_spec, old_spec):
        detail = (
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound "
            f"claims\n{spec_diff(old_spec, new_spec)}"
        )
        found.append(FieldError.forbidden("spec", detail))
    new_size = (
        quantity_value(claim.spec.resources.requests["storage"].string)
        if "storage" in claim.spec.resources.requests
        else 0
    )
    old_size = (
        quantity_value(old.spec.resources.requests["storage"].string) if "storage" in old.spec.resources.requests else 0
    )
    status_size = quantity_value(old.status.capacity["storage"].string) if "storage" in old.status.capacity else 0
    if new_size < old_size and new_size <= status_size:
        detail = "field can not be less than status.capacity"
        found.append(FieldError.forbidden("spec.resources.requests.storage", detail))
    if claim.spec.volumeMode != old.spec.volumeMode:
        shown = claim.spec.volumeMode if claim.spec.HasField("volumeMode") else None
        found.append(FieldError.invalid("volumeMode", shown, "field is immutable"))
    return found


@validator(_CORE + "PersistentVolumeClaim")
def validate_persistent_volume_claim(claim: Message, old: Message | None) -> list[FieldError]:
    found = claim_spec_errors(claim.spec, "spec")
    if old is not None:
        found += _claim_update(claim, old)
    return found
