"""PATCH as kube-apiserver 1.32 applies it: JSON patch, JSON merge patch and strategic merge patch on an
object's JSON form (plain dicts and lists, as ``codec.to_dict`` gives them).

Entry point: ``apply_patch``; see ``dispatch`` for the contract and ``jsonpatch``, ``mergepatch`` and
``strategic`` for each format's upstream semantics.
"""

from gateway.patch.dispatch import (
    APPLY_PATCH_CBOR,
    APPLY_PATCH_YAML,
    IGNORE,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    STRICT,
    WARN,
    PatchResult,
    accepted_patch_types,
    apply_patch,
    patch_type,
    route_content_type_error,
    unsupported_patch_type,
)
from gateway.patch.gofmt import PANIC_BODY, ServerPanic

__all__ = [
    "APPLY_PATCH_CBOR",
    "APPLY_PATCH_YAML",
    "IGNORE",
    "JSON_PATCH",
    "MERGE_PATCH",
    "PANIC_BODY",
    "STRATEGIC_MERGE_PATCH",
    "STRICT",
    "WARN",
    "PatchResult",
    "ServerPanic",
    "accepted_patch_types",
    "apply_patch",
    "patch_type",
    "route_content_type_error",
    "unsupported_patch_type",
]
