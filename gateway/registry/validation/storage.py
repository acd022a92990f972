"""storage.k8s.io/v1 (k8s.io/kubernetes pkg/apis/storage/validation): StorageClasses (provisioner,
parameters, reclaim policy, binding mode; provisioner, parameters and policies never change),
CSIDrivers, CSINodes and VolumeAttachments."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    check,
    duplicates,
    enum,
    immutable,
    invalid_each,
    messages_equal,
    nonnegative,
)
from protokube.gateway.registry.validation.pods import csi_driver_name_errors
from protokube.gateway.syntax import dns1123_subdomain_problems, qualified_name_problems

_STORAGE = "k8s.io.api.storage.v1."
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
MAX_NODE_ID_LENGTH = 256


def _parameters(parameters: dict[str, str]) -> list[FieldError]:
    if len(parameters) > MAX_PARAMETERS:
        return [FieldError.too_long("parameters", MAX_PARAMETERS)]
    found = [FieldError.invalid("parameters", key, "field can not be empty.") for key in sorted(parameters) if not key]
    if sum(len(k) + len(v) for k, v in parameters.items()) > MAX_PARAMETERS_SIZE:
        found.append(FieldError.too_long("parameters", MAX_PARAMETERS_SIZE))
    return found


def _topology_terms(terms: list[Message]) -> list[FieldError]:
    found: list[FieldError] = []
    for i, term in enumerate(terms):
        keys: set[str] = set()
        for j, requirement in enumerate(term.matchLabelExpressions):
            where = f"allowedTopologies[{i}].matchLabelExpressions[{j}]"
            if not requirement.values:
                found.append(FieldError.required(f"{where}.values"))
            found += duplicates(f"{where}.values", requirement.values)
            found += check(f"{where}.key", requirement.key, qualified_name_problems)
            if requirement.key in keys:
                found.append(FieldError.duplicate(f"{where}.key", requirement.key))
            keys.add(requirement.key)
    return found


@validator(_STORAGE + "StorageClass")
def validate_storage_class(storage_class: Message, old: Message | None) -> list[FieldError]:
    if old is not None:
        found = []
        if dict(storage_class.parameters) != dict(old.parameters):
            found.append(FieldError.forbidden("parameters", "updates to parameters are forbidden."))
        if storage_class.provisioner != old.provisioner:
            found.append(FieldError.forbidden("provisioner", "updates to provisioner are forbidden."))
        if storage_class.reclaimPolicy != old.reclaimPolicy:
            found.append(FieldError.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        mode = storage_class.volumeBindingMode if storage_class.HasField("volumeBindingMode") else None
        old_mode = old.volumeBindingMode if old.HasField("volumeBindingMode") else None
        return found + immutable("volumeBindingMode", mode, old_mode)
    provisioner = storage_class.provisioner
    found = [] if provisioner else [FieldError.required("provisioner")]
    if provisioner:
        found += invalid_each("provisioner", provisioner.lower(), qualified_name_problems(provisioner.lower()))
    found += _parameters(dict(storage_class.parameters))
    if storage_class.reclaimPolicy:
        found += enum("reclaimPolicy", storage_class.reclaimPolicy, ("Delete", "Retain"))
    if storage_class.HasField("volumeBindingMode"):
        modes = ("Immediate", "WaitForFirstConsumer")
        found += enum("volumeBindingMode", storage_class.volumeBindingMode, modes, required=True)
    return found + _topology_terms(list(storage_class.allowedTopologies))


@validator(_STORAGE + "CSIDriver")
def validate_csi_driver(driver: Message, old: Message | None) -> list[FieldError]:
    spec = driver.spec
    found = csi_driver_name_errors(driver.metadata.name, "name")
    if spec.HasField("fsGroupPolicy"):
        policies = ("File", "None", "ReadWriteOnceWithFSType")
        found += enum("spec.fsGroupPolicy", spec.fsGroupPolicy, policies, required=True)
    for mode in spec.volumeLifecycleModes:
        if mode not in ("Persistent", "Ephemeral"):
            found.append(FieldError.not_supported("spec.volumeLifecycleModes", mode, ("Ephemeral", "Persistent")))
    audiences: set[str] = set()
    for i, request in enumerate(spec.tokenRequests):
        where = f"spec.tokenRequests[{i}]"
        if request.audience in audiences:
            found.append(FieldError.duplicate(f"{where}.audience", request.audience))
        audiences.add(request.audience)
        if request.HasField("expirationSeconds"):
            seconds = request.expirationSeconds
            if seconds < 600:
                detail = "may not specify a duration less than 10 minutes"
                found.append(FieldError.invalid(f"{where}.expirationSeconds", seconds, detail))
            if seconds > 1 << 32:
                detail = "may not specify a duration larger than 2^32 seconds"
                found.append(FieldError.invalid(f"{where}.expirationSeconds", seconds, detail))
    return found


@validator(_STORAGE + "CSINode")
def validate_csi_node(node: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    names: set[str] = set()
    for i, driver in enumerate(node.spec.drivers):
        where = f"spec.drivers[{i}]"
        found += csi_driver_name_errors(driver.name, f"{where}.name")
        if driver.name in names:
            found.append(FieldError.duplicate(f"{where}.name", driver.name))
        names.add(driver.name)
        if not driver.nodeID:
            found.append(FieldError.required(f"{where}.nodeID", "nodeID must be provided"))
        elif len(driver.nodeID) > MAX_NODE_ID_LENGTH:
            found.append(
                FieldError.invalid(f"{where}.nodeID", driver.nodeID, f"must be {MAX_NODE_ID_LENGTH} characters or less")
            )
        for key in driver.topologyKeys:
            found += check(f"{where}.topologyKeys", key, qualified_name_problems)
        if driver.allocatable.HasField("count"):
            found += nonnegative(f"{where}.allocatable.count", driver.allocatable.count)
    return found


@validator(_STORAGE + "VolumeAttachment")
def validate_volume_attachment(attachment: Message, old: Message | None) -> list[FieldError]:
    spec = attachment.spec
    found = csi_driver_name_errors(spec.attacher, "spec.attacher")
    source = spec.source
    has_name, has_inline = source.HasField("persistentVolumeName"), source.HasField("inlineVolumeSpec")
    if has_name == has_inline:
        detail = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
        found.append(FieldError.required("spec.source", detail))
    elif has_name and not source.persistentVolumeName:
        found.append(
            FieldError.required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName")
        )
    if not spec.nodeName:
        found.append(FieldError.required("spec.nodeName"))
    else:
        found += check("spec.nodeName", spec.nodeName, dns1123_subdomain_problems)
    if old is not None and not messages_equal(spec, old.spec):
        found.append(FieldError.invalid("spec", GoText("storage.VolumeAttachmentSpec{...}"), "field is immutable"))
    return found
