"""Object metadata validation, with upstream's exact field errors (apimachinery
pkg/api/validation/objectmeta.go and core's finalizer rule).

Names by the resource's name rule (DNS-1123 subdomain, DNS-1123 label, DNS-1035 label, path
segment), generateName prefixes, namespaces, generation, labels, annotations (256 KiB in total),
ownerReferences (apiVersion, kind, name and uid required; one controller at most), finalizers
(qualified names; compiled kinds also refuse unqualified non-standard ones), managedFields; on
update, no new finalizers once deletion started.
"""

from __future__ import annotations

from typing import Final

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError, GoText, go_quote
from protokube.gateway.registry.validation.common import (
    annotations_errors,
    check,
    invalid_each,
    labels_errors,
    nonnegative,
)
from protokube.gateway.syntax import (
    dns1035_label_problems,
    dns1123_label_problems,
    dns1123_subdomain_problems,
    qualified_name_problems,
)
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import Resource

STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
MAX_FIELD_MANAGER_LENGTH: Final = 128
MAX_SUBRESOURCE_NAME_LENGTH: Final = 256


def _path_segment(value: str, prefix: bool) -> list[str]:
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def _mask_trailing_dash(name: str) -> str:
    """upstream's maskTrailingDash for generateName prefixes (its last two characters become "a")."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_problems(rule: int, value: str, prefix: bool = False) -> list[str]:
    """What is wrong with a name (``prefix``: a generateName) under a resource's name rule."""
    if rule == opts.NAME_RULE_PATH_SEGMENT:
        return _path_segment(value, prefix)
    if prefix:
        value = _mask_trailing_dash(value)
    if rule == opts.NAME_RULE_DNS1123_LABEL:
        return dns1123_label_problems(value)
    if rule == opts.NAME_RULE_DNS1035_LABEL:
        return dns1035_label_problems(value)
    return dns1123_subdomain_problems(value)


def _owner_reference_go(ref: meta.OwnerReference) -> str:
    """An OwnerReference as Go's %#v prints it (pointers shown as set or nil)."""

    def pointer(name: str) -> str:
        return "(*bool)(0xc000000000)" if ref.HasField(name) else "(*bool)(nil)"

    return (
        f"v1.OwnerReference{{APIVersion:{go_quote(ref.apiVersion)}, Kind:{go_quote(ref.kind)}, "
        f'Name:{go_quote(ref.name)}, UID:"{ref.uid}", Controller:{pointer("controller")}, '
        f"BlockOwnerDeletion:{pointer('blockOwnerDeletion')}}}"
    )


def _owner_version(api_version: str) -> str:
    """The version of schema.ParseGroupVersion(apiVersion) ("" when it does not parse)."""
    parts = api_version.split("/")
    if len(parts) > 2:
        return ""
    return parts[-1]


def owner_references_errors(references: list[meta.OwnerReference], field: str) -> list[FieldError]:
    """ValidateOwnerReferences: each reference complete, at most one with controller: true."""
    found: list[FieldError] = []
    first_controller = ""
    for ref in references:
        if not _owner_version(ref.apiVersion):
            found.append(FieldError.invalid(f"{field}.apiVersion", ref.apiVersion, "version must not be empty"))
        if not ref.kind:
            found.append(FieldError.invalid(f"{field}.kind", ref.kind, "kind must not be empty"))
        if not ref.name:
            found.append(FieldError.invalid(f"{field}.name", ref.name, "name must not be empty"))
        if not ref.uid:
            found.append(FieldError.invalid(f"{field}.uid", ref.uid, "uid must not be empty"))
        if ref.apiVersion == "v1" and ref.kind == "Event":
            detail = "/v1, Kind=Event is disallowed from being an owner"
            found.append(FieldError.invalid(field, GoText(_owner_reference_go(ref)), detail))
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                shown = GoText("[]v1.OwnerReference{" + ", ".join(_owner_reference_go(r) for r in references) + "}")
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}"
                )
                found.append(FieldError.invalid(field, shown, detail))
            else:
                first_controller = current
    return found


def finalizers_errors(finalizers: list[str], field: str) -> list[FieldError]:
    """ValidateFinalizers: qualified names, and not both orphan and foregroundDeletion."""
    found: list[FieldError] = []
    for finalizer in finalizers:
        found += check(field, finalizer, qualified_name_problems)
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        detail = "finalizer orphan and foregroundDeletion cannot be both set"
        found.append(FieldError.invalid(field, list(finalizers), detail))
    return found


# Groups served by apiextensions-apiserver and kube-aggregator: their kinds' metadata is validated by
# apimachinery's generic ValidateObjectMeta (qualified finalizer names), not core's; custom resources too.
GENERIC_META_GROUPS: Final = frozenset({"apiextensions.k8s.io", "apiregistration.k8s.io"})


def kube_finalizer_errors(finalizers: list[str], field: str) -> list[FieldError]:
    """core's validateKubeFinalizerName: a name without a domain must be a standard finalizer."""
    return [
        FieldError.invalid(f"{field}[{i}]", name, "name is neither a standard finalizer name nor is it fully qualified")
        for i, name in enumerate(finalizers)
        if "/" not in name and name not in STANDARD_FINALIZERS
    ]


def field_manager_errors(manager: str, field: str) -> list[FieldError]:
    found = []
    if len(manager) > MAX_FIELD_MANAGER_LENGTH:
        found.append(FieldError.too_long(field, MAX_FIELD_MANAGER_LENGTH))
    position = 0
    for char in manager:
        if not char.isprintable():
            detail = f"invalid character U+{ord(char):04X} (at position {position})"
            found.append(FieldError.invalid(field, manager, detail))
        position += len(char.encode())
    return found


def managed_fields_errors(entries: list[meta.ManagedFieldsEntry], field: str) -> list[FieldError]:
    """ValidateManagedFields: operation Apply or Update, fieldsType FieldsV1, manager and subresource sizes."""
    found: list[FieldError] = []
    for i, entry in enumerate(entries):
        path = f"{field}[{i}]"
        if entry.operation not in ("Apply", "Update"):
            found.append(FieldError.invalid(f"{path}.operation", entry.operation, "must be `Apply` or `Update`"))
        if entry.fieldsType and entry.fieldsType != "FieldsV1":
            found.append(FieldError.invalid(f"{path}.fieldsType", entry.fieldsType, "must be `FieldsV1`"))
        found += field_manager_errors(entry.manager, f"{path}.manager")
        if len(entry.subresource) > MAX_SUBRESOURCE_NAME_LENGTH:
            found.append(FieldError.too_long(f"{path}.subresource", MAX_SUBRESOURCE_NAME_LENGTH))
    return found


def validate_object_meta(
    resource: Resource, metadata: meta.ObjectMeta, old: meta.ObjectMeta | None = None
) -> list[FieldError]:
    """upstream's ValidateObjectMeta (and, with ``old``, the update rules of ValidateObjectMetaUpdate)."""
    kube_finalizers = bool(resource.message) and resource.group not in GENERIC_META_GROUPS  # kube-apiserver's kinds
    return object_meta_errors(metadata, old, "metadata", resource.name_rule, resource.namespaced, kube_finalizers)


def object_meta_errors(
    metadata: meta.ObjectMeta,
    old: meta.ObjectMeta | None,
    path: str,
    name_rule: int,
    namespaced: bool | None,
    kube_finalizers: bool = False,
) -> list[FieldError]:
    """ValidateObjectMeta of the metadata at ``path``; ``namespaced`` None: a namespace is checked
    only when there is one (an embedded resource's)."""
    found: list[FieldError] = []
    if old is None and metadata.generateName:
        prefix = metadata.generateName
        found += invalid_each(f"{path}.generateName", prefix, name_problems(name_rule, prefix, prefix=True))
    if not metadata.name:
        if not metadata.generateName:
            found.append(FieldError.required(f"{path}.name", "name or generateName is required"))
    else:
        problems = name_problems(name_rule, metadata.name)
        if problems:
            found += invalid_each(f"{path}.name", metadata.name, problems)
    if namespaced or (namespaced is None and metadata.namespace):
        if not metadata.namespace:
            found.append(FieldError.required(f"{path}.namespace"))
        else:
            problems = dns1123_label_problems(metadata.namespace)
            if problems:
                found += invalid_each(f"{path}.namespace", metadata.namespace, problems)
    elif metadata.namespace:
        found.append(FieldError.forbidden(f"{path}.namespace", "not allowed on this type"))
    if old is not None and old.HasField("deletionTimestamp"):
        extra = sorted(set(metadata.finalizers) - set(old.finalizers))
        if extra:
            listed = "[]string{" + ", ".join(go_quote(name) for name in extra) + "}"
            detail = f"no new finalizers can be added if the object is being deleted, found new finalizers {listed}"
            found.append(FieldError.forbidden(f"{path}.finalizers", detail))
    # Each rule below finds nothing in an empty or zero field: most objects have few of them set.
    if metadata.generation < 0:
        found += nonnegative(f"{path}.generation", metadata.generation)
    if metadata.labels:
        found += labels_errors(dict(metadata.labels), f"{path}.labels")
    if metadata.annotations:
        found += annotations_errors(dict(metadata.annotations), f"{path}.annotations")
    if metadata.ownerReferences:
        # Lists by slicing, not list(): see jsonencode.to_dict.
        found += owner_references_errors(metadata.ownerReferences[:], f"{path}.ownerReferences")
    finalizers = metadata.finalizers[:] if metadata.finalizers else []
    if finalizers:
        found += finalizers_errors(finalizers, f"{path}.finalizers")
    if metadata.managedFields:
        found += managed_fields_errors(metadata.managedFields[:], f"{path}.managedFields")
    if finalizers and kube_finalizers:  # core's rule, after the generic ones
        found += kube_finalizer_errors(finalizers, f"{path}.finalizers")
    return found
