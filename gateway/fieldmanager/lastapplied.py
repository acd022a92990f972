"""Interplay with client-side ``kubectl apply`` and its last-applied-configuration annotation
(k8s.io/apimachinery/pkg/util/managedfields/internal: lastappliedmanager.go, lastappliedupdater.go).

Only for the field manager ``kubectl``: a server-side apply that conflicts only on fields the
annotation shows kubectl applied client-side is forced (upgrade without conflicts), and a
successful one rewrites the annotation when the object has one (so a later client-side apply
still works).
"""

from __future__ import annotations

from typing import Any

import protokube.gateway.fieldmanager.typed as typed
from protokube.gateway.fieldmanager.fieldpath import Set
from protokube.gateway.fieldmanager.values import go_json
from protokube.schema import deep
from protokube.schema.typetree import Type

ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)  # apimachinery validation.TotalAnnotationSizeLimitB


def _annotation(obj: Any) -> str:
    annotations = (obj.get("metadata") or {}).get("annotations") if isinstance(obj, dict) else None
    value = annotations.get(ANNOTATION) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def allowed_conflicts(live: Any, t: Type, api_version: str) -> Set | None:
    """The fields kubectl applied client-side and that still hold the applied value: conflicts on
    them do not count (upstream: allowedConflictsFromLastApplied). None when there is no usable
    annotation."""
    text = _annotation(live)
    if not text:
        return None
    try:
        typed.validate(live, t)
        last = deep.loads(text)
    except (typed.TypedError, typed.ItemError, ValueError):
        return None
    if not isinstance(last, dict) or not last.get("kind") or last.get("apiVersion") != api_version:
        return None
    try:
        typed.validate(last, t)
        fields = typed.to_field_set(last, t)
        changed = typed.compare(last, live, t)
    except (typed.TypedError, typed.ItemError):
        return None
    return fields.difference(changed.modified).difference(changed.added).difference(changed.removed)


def build(applied: dict[str, Any]) -> str:
    """The annotation's value for an applied configuration: its JSON without the annotation, keys
    sorted, with Go's trailing newline (upstream: buildLastApplied)."""
    obj = dict(applied)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        annotations = {k: v for k, v in metadata["annotations"].items() if k != ANNOTATION}
        obj["metadata"] = {**metadata, "annotations": annotations}
    return go_json(obj) + "\n"


def update(obj: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the annotation of ``obj`` (when it has a non-empty one) from the applied configuration;
    drop it when the annotations would exceed 256 KiB (upstream: lastAppliedUpdater, SetLastApplied)."""
    if not _annotation(obj):
        return obj
    metadata = dict(obj["metadata"])
    annotations = dict(metadata["annotations"])
    annotations[ANNOTATION] = build(applied)
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        del annotations[ANNOTATION]
    metadata["annotations"] = annotations
    return {**obj, "metadata": metadata}
