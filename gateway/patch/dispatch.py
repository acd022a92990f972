"""The PATCH entry point: which patch types a resource accepts, decoding the body as
kube-apiserver's patch handler does (k8s.io/apiserver/pkg/endpoints/handlers/patch.go), and
applying it.

Order of checks, as upstream: for built-in kinds go-restful's route match on the Content-Type
(``route_content_type_error``); the Content-Type check of PatchResource (415, in ``apply_patch``)
before the body is used; then, per type, the decoding of the body (400), the operation count (413),
and the application (400, 422 or 500).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import protokube.gateway.patch.gojson as gojson
import protokube.gateway.patch.jsonpatch as jsonpatch
import protokube.gateway.patch.mergepatch as mergepatch
import protokube.gateway.patch.strategic as strategic
from protokube.gateway import errors
from protokube.gateway.errors import FieldError, StatusError
from protokube.gateway.patch.gofmt import sprint_v
from protokube.gateway.patch.lazynode import Node, marshal, to_value
from protokube.schema.typetree import Type

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH_YAML = "application/apply-patch+yaml"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"


def accepted_patch_types(*, strategic: bool = True, cbor: bool = False) -> list[str]:
    """The patch types a resource accepts, in upstream's order: built-in kinds
    (k8s.io/apiserver/pkg/endpoints/installer.go) also take strategic merge patch; custom resources
    (apiextensions-apiserver customresource_handler.go) do not. ``cbor``: the CBORServingAndStorage
    feature gate adds CBOR apply patches."""
    types = [JSON_PATCH, MERGE_PATCH, *([STRATEGIC_MERGE_PATCH] if strategic else []), APPLY_PATCH_YAML]
    return [*types, APPLY_PATCH_CBOR] if cbor else types


def patch_type(content_type: str | None) -> str:
    """PatchResource: the Content-Type up to its first ";" (only if that is not its first character)."""
    value = content_type or ""
    idx = value.find(";")
    return value[:idx] if idx > 0 else value


def unsupported_patch_type(accepted: Sequence[str]) -> StatusError:
    """negotiation.NewUnsupportedMediaTypeError(patchTypes): 415."""
    return errors.unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted)
    )


def route_content_type_error(
    content_type: str | None, content_length: str | None, accepted: Sequence[str]
) -> StatusError | None:
    """For a built-in kind, go-restful (v3.11) selects the PATCH route by its Consumes list before
    PatchResource runs, and answers itself when no media type of the Content-Type matches:
    ``None`` when the route matches, else the Status kube-apiserver's serviceErrorHandler writes
    (NewGenericServerResponse with go-restful's text). ``content_length``: the request's
    Content-Length header (None when absent). Custom resources are not served by go-restful."""
    media_types = content_type or "application/octet-stream"  # go-restful's default for PATCH
    for media_type in media_types.split(","):
        media_type = media_type.split(";", 1)[0].strip(" ")
        if media_type == "*/*" or media_type in accepted:
            return None
    if content_length not in (None, "") and content_length.isdigit() and int(content_length) > 0:
        return errors.generic_server_response(415, "415: Unsupported Media Type")
    # no body: the Accept step finds no route either; a PATCH without Content-Length is told 415
    if content_length in (None, ""):
        return errors.generic_server_response(415, "415: Unsupported Media Type\n\nAvailable representations: ")
    return errors.generic_server_response(406, "406: Not Acceptable\n\nAvailable representations: ")


@dataclass
class PatchResult:
    """The patched object, and what upstream's handler still needs from the patch.

    ``object``: the patched JSON value — an object normally; a JSON or merge patch can make it an
    array (upstream then fails to decode it as the kind). ``strict_errors``: the strict decoding
    errors of the patch body (duplicate fields; for JSON patch also unknown operation fields) under
    fieldValidation Warn (warnings) or Strict (a 422, see ``strict_error``).
    """

    object: Any
    strict_errors: list[str] = field(default_factory=list)
    _invalid_value: Callable[[], str] = field(default=lambda: "", repr=False)

    @property
    def invalid_value(self) -> str:
        """The value upstream shows in its ``patch: Invalid value`` errors: the patched JSON as
        Go wrote it (JSON and merge patch), or ``%+v`` of the patch map after the merge (strategic)."""
        return self._invalid_value()

    def strict_error(self, decoding_errors: Sequence[str] = ()) -> StatusError:
        """patch.go under fieldValidation Strict: NewInvalid(GroupKind{}, "", patch: Invalid value)
        with runtime.NewStrictDecodingError of the patch's strict errors followed by those of
        decoding the patched object (``decoding_errors``)."""
        detail = "strict decoding error: " + ", ".join([*self.strict_errors, *decoding_errors])
        return errors.invalid("", "", "", [FieldError.invalid("patch", self.invalid_value, detail)])


def apply_patch(
    content_type: str | None,
    current: dict[str, Any],
    patch_body: bytes,
    obj_type: Type | None,
    *,
    field_validation: str = WARN,
    cbor: bool = False,
) -> PatchResult:
    """Apply a PATCH body to the current object's JSON form.

    ``obj_type`` None stands for a kind without Go type information (a custom resource): no
    strategic merge patch. ``field_validation`` is the request's fieldValidation ("" means Warn,
    upstream's default). Raises StatusError as upstream answers; ``gofmt.ServerPanic`` (a
    StatusError) where upstream's code panics. Apply patches (server-side apply) are accepted
    types but not applied here: LookupError.
    """
    kind = patch_type(content_type)
    accepted = accepted_patch_types(strategic=obj_type is not None, cbor=cbor)
    if kind not in accepted:
        raise unsupported_patch_type(accepted)
    strict = (field_validation or WARN) in (WARN, STRICT)
    if kind == JSON_PATCH:
        return _json_patch(current, patch_body, strict)
    if kind == MERGE_PATCH:
        return _merge_patch(current, patch_body, strict)
    if kind == STRATEGIC_MERGE_PATCH:
        assert obj_type is not None
        return _strategic_merge_patch(current, patch_body, obj_type, strict)
    raise LookupError(f"{kind} is server-side apply, not applied by protokube.gateway.patch")


def _node_result(node: Node, strict_errors: list[str]) -> PatchResult:
    return PatchResult(to_value(node), strict_errors, lambda: marshal(node))


def _json_patch(current: dict[str, Any], body: bytes, strict: bool) -> PatchResult:
    strict_errors = jsonpatch.strict_decode(body) if strict else []
    ops = jsonpatch.decode(body)
    try:
        root = jsonpatch.apply(current, ops)
    except jsonpatch.PatchFailed as e:
        raise jsonpatch.apply_failed(e) from e
    return _node_result(root, strict_errors)


def _merge_patch(current: dict[str, Any], body: bytes, strict: bool) -> PatchResult:
    strict_errors = mergepatch.strict_decode(body) if strict else []
    return _node_result(mergepatch.apply(current, body), strict_errors)


def _strategic_merge_patch(current: dict[str, Any], body: bytes, obj_type: Type, strict: bool) -> PatchResult:
    """strategicPatchObject: kjson decoding (400 with Go's text), then the merge."""
    try:
        patch, strict_errors = gojson.decode_map(body, strict=strict)
    except gojson.GoJSONError as e:
        raise errors.bad_request(str(e)) from None
    patch = patch if patch is not None else {}
    merged = strategic.apply(current, patch, obj_type)
    return PatchResult(merged, strict_errors, lambda: sprint_v(patch))
