"""PersistentVolumeClaim specs (core's ValidatePersistentVolumeClaimSpec), shared by claims,
generic ephemeral volumes and StatefulSet claim templates."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.common import (
    annotations_errors,
    check,
    enum,
    is_set,
    label_selector_errors,
    labels_errors,
    positive_quantity,
)
from protokube.gateway.registry.validation.resources import quantity_value_errors
from protokube.gateway.syntax import dns1123_label_problems, dns1123_subdomain_problems

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
# ObjectMeta's fields in Go's order, as validateFieldAllowList names them (first letter lowered).
_TEMPLATE_META_FIELDS = (
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)


def access_modes_errors(modes: list[str], field: str) -> list[FieldError]:
    """Each mode supported; ReadWriteOncePod alone."""
    found = []
    once_pod = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            found.append(FieldError.not_supported(field, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        found.append(FieldError.forbidden(field, "may not use ReadWriteOncePod with other access modes"))
    return found


def _data_source(source: Message, field: str, with_namespace: bool) -> list[FieldError]:
    found = []
    if not source.name:
        found.append(FieldError.required(f"{field}.name"))
    if not source.kind:
        found.append(FieldError.required(f"{field}.kind"))
    if not source.apiGroup and source.kind != "PersistentVolumeClaim":
        detail = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
        found.append(FieldError.invalid(field, source.kind, detail))
    if source.apiGroup:
        found += check(f"{field}.apiGroup", source.apiGroup, dns1123_subdomain_problems)
    if with_namespace and source.namespace:
        found += check(f"{field}.namespace", source.namespace, dns1123_label_problems)
    return found


def claim_spec_errors(spec: Message, field: str) -> list[FieldError]:
    """ValidatePersistentVolumeClaimSpec."""
    found = []
    if not spec.accessModes:
        found.append(FieldError.required(f"{field}.accessModes", "at least 1 access mode is required"))
    if spec.HasField("selector"):
        found += label_selector_errors(spec.selector, f"{field}.selector")
    found += access_modes_errors(list(spec.accessModes), f"{field}.accessModes")
    storage_field = f"{field}.resources[storage]"
    if "storage" not in spec.resources.requests:
        found.append(FieldError.required(storage_field))
    else:
        text = spec.resources.requests["storage"].string
        found += positive_quantity(storage_field, text) or quantity_value_errors("storage", text, storage_field)
    if spec.storageClassName:
        found += check(f"{field}.storageClassName", spec.storageClassName, dns1123_subdomain_problems)
    if spec.HasField("volumeMode"):
        found += enum(f"{field}.volumeMode", spec.volumeMode, VOLUME_MODES, required=True)
    if spec.HasField("dataSource"):
        found += _data_source(spec.dataSource, f"{field}.dataSource", False)
    if spec.HasField("dataSourceRef"):
        found += _data_source(spec.dataSourceRef, f"{field}.dataSourceRef", True)
    if spec.HasField("dataSourceRef") and spec.dataSourceRef.namespace:
        if spec.HasField("dataSource"):
            detail = "may not be specified when dataSourceRef.namespace is specified"
            found.append(FieldError.invalid(field, f"{field}.dataSource", detail))
    elif spec.HasField("dataSource") and spec.HasField("dataSourceRef"):
        source, ref = spec.dataSource, spec.dataSourceRef
        if (source.apiGroup, source.kind, source.name) != (ref.apiGroup, ref.kind, ref.name):
            found.append(FieldError.invalid(field, f"{field}.dataSource", "must match dataSourceRef"))
    return found


def template_meta_errors(metadata: Message, field: str) -> list[FieldError]:
    """ValidateTemplateObjectMeta: labels and annotations only."""
    found = annotations_errors(dict(metadata.annotations), f"{field}.annotations")
    found += labels_errors(dict(metadata.labels), f"{field}.labels")
    for name, shown in _TEMPLATE_META_FIELDS:
        if is_set(metadata, name):
            found.append(FieldError.forbidden(f"{field}.{shown}", "cannot be set"))
    return found


def claim_template_errors(template: Message, field: str) -> list[FieldError]:
    """ValidatePersistentVolumeClaimTemplate (a generic ephemeral volume's claim)."""
    return template_meta_errors(template.metadata, f"{field}.metadata") + claim_spec_errors(
        template.spec, f"{field}.spec"
    )
