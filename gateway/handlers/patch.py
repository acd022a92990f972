"""PATCH: change an object with a patch of its JSON form (Kubernetes API Concepts: "Patch operations"; upstream's
k8s.io/apiserver pkg/endpoints/handlers/patch.go).

The patch is applied to the current object inside the store's guaranteed update, so a concurrent
write makes it apply again to the newer object (two label patches racing both land), unless the
patch names a resourceVersion, which then must match. JSON patch, merge patch and strategic merge
patch come from gateway/patch; the patched JSON is decoded into the kind as a request body is,
with fieldValidation deciding what unknown and duplicate fields do.
"""

from __future__ import annotations

from typing import Any, Protocol

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.handlers.common import info_of, may_create_write_options, negotiated
from protokube.gateway.handlers.update import check_name
from protokube.gateway.negotiation import yamlworker
from protokube.gateway.negotiation.negotiate import Target
from protokube.gateway.objects.codec import Obj
from protokube.gateway.params import APPLY_PATCH_TYPES, WriteOptions
from protokube.gateway.patch.dispatch import (
    JSON_PATCH,
    MERGE_PATCH,
    PatchResult,
    accepted_patch_types,
    apply_patch,
    patch_type,
    route_content_type_error,
)
from protokube.gateway.patch.gofmt import ServerPanic
from protokube.gateway.patch.gojson import type_error
from protokube.gateway.registry.rest import Applier, Updater
from protokube.gateway.representation import object_body
from protokube.gateway.request import MAX_BODY_BYTES, ApiRequest, Response
from protokube.gateway.responses import add_warnings, respond
from protokube.gateway.scope import RequestScope
from protokube.schema.jsondecode import DecodeError
from protokube.schema.typetree import Type, proto_type

STRICT, IGNORE = "Strict", "Ignore"
MAP = "map[string]interface {}"


def patch_schema(scope: RequestScope) -> Type | None:
    """The type strategic merge patch follows: compiled kinds have one; kinds without Go-style
    schema information (custom resources) have none and refuse strategic merge patches."""
    return proto_type(scope.resource.message) if scope.resource.message else None


def _internal_type(scope: RequestScope) -> str:
    """How upstream names the kind's internal Go type in decoding errors (*core.Pod, *apps.Deployment)."""
    package = scope.resource.group.split(".")[0] if scope.resource.group else "core"
    return f"*{package}.{scope.resource.kind}"


def decode_patched(
    scope: RequestScope, kind: str, result: PatchResult, options: WriteOptions, warnings: list[str]
) -> Obj:
    """The patched JSON as an object of the kind, as upstream's patchers decode it."""

    def invalid(detail: str) -> errors.StatusError:
        return errors.invalid("", "", "", [FieldError.invalid("patch", result.invalid_value, detail)])

    data = result.object
    if not isinstance(data, dict):
        raise invalid(f"json: cannot unmarshal {type(data).__name__} into Go value of type {_internal_type(scope)}")
    gvk = scope.codec.gvk
    if kind in (JSON_PATCH, MERGE_PATCH):  # decoded as a JSON document: its kind must be the resource's
        found_kind, found_version = data.get("kind") or gvk.kind, data.get("apiVersion") or gvk.api_version
        if (found_kind, found_version) != (gvk.kind, gvk.api_version):
            group, _, version = str(found_version).rpartition("/")
            raise invalid(f"unable to decode {group}/{version}, Kind={found_kind} into {_internal_type(scope)}")
    try:
        decoded = scope.codec.from_dict(data)
    except DecodeError as err:
        raise invalid(str(err)) from None
    if options.field_validation != IGNORE:
        found = [*result.strict_errors, *decoded.violations]
        if found and options.field_validation == STRICT:
            raise result.strict_error(decoded.violations)
        warnings[:] = found
    return decoded.obj


class UpdaterApplier(Updater, Applier, Protocol):
    """A storage that serves server-side apply besides patches (not every subresource does)."""


async def patch(storage: Updater, scope: RequestScope, request: ApiRequest) -> Response:
    """PATCH where the storage does not play Applier: an apply patch is refused."""
    return await _patch(storage, None, scope, request)


async def patch_or_apply(storage: UpdaterApplier, scope: RequestScope, request: ApiRequest) -> Response:
    """PATCH where the storage plays Applier: an apply patch is server-side apply."""
    return await _patch(storage, storage, scope, request)


async def _patch(storage: Updater, applier: Applier | None, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiated(request, scope)
    info = info_of(request)
    content_type = request.headers.get("Content-Type")
    kind = patch_type(content_type)
    schema = patch_schema(scope)
    if schema is not None:  # built-in kinds: go-restful matches the route's Content-Type first
        accepted = accepted_patch_types(strategic=True, cbor=scope.formats.cbor)
        refused = route_content_type_error(content_type, request.headers.get("Content-Length"), accepted)
        if refused is not None:
            raise refused
    options = may_create_write_options(request, scope, "PatchOptions", kind)
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise errors.request_entity_too_large(f"limit is {MAX_BODY_BYTES}")
    if kind in APPLY_PATCH_TYPES:
        return await apply(applier, scope, request, target, body, options)
    warnings: list[str] = []
    codec, resource, name = scope.codec, scope.resource, info.name

    def patched(current: Obj | None) -> Obj:
        if current is None:  # a patch never creates (upstream's createNewObject: NotFound)
            raise errors.not_found(resource, name)
        result = patch_result(content_type, codec.to_dict(current), body, schema, options, scope.formats.cbor)
        obj = decode_patched(scope, kind, result, options, warnings)
        check_name(obj, name)
        return obj

    view, _ = await storage.update(scope.namespace(info), name, patched, options)
    response = respond(request, object_body(request, scope, target, view), 200, target.encoder)
    add_warnings(response, warnings)
    return response


def patch_result(
    content_type: str | None,
    current: dict[str, Any],
    body: bytes,
    schema: Type | None,
    options: WriteOptions,
    cbor: bool,
) -> PatchResult:
    """The patched JSON. Where upstream answers a bad patch with 500 (a merge list element without
    its merge key) or panics (malformed directives), the client's mistake is a 400 here."""
    try:
        return apply_patch(content_type, current, body, schema, field_validation=options.field_validation, cbor=cbor)
    except ServerPanic as panic:
        raise errors.bad_request(f"the patch cannot be applied: {panic.reason}") from None
    except errors.StatusError as err:
        if err.status.code == 500:
            raise errors.bad_request(err.status.message) from None
        raise


async def apply_configuration(body: bytes, options: WriteOptions, warnings: list[str]) -> dict[str, Any]:
    """The apply patch body: YAML (or JSON) of an object, as upstream's applyPatcher decodes it;
    duplicate keys are what strict decoding finds (fieldValidation Strict: 400; Warn: warnings)."""
    try:
        document = await yamlworker.parse(body)
    except DecodeError as err:
        raise errors.bad_request(f"error decoding YAML: error converting YAML to JSON: {err}") from None
    applied, duplicates = document.value, document.duplicates
    if applied is None:  # null decodes into Go's map as an empty object
        applied = {}
    if not isinstance(applied, dict):
        raise errors.bad_request(f"error decoding YAML: {type_error(applied, 'map[string]interface {}')}")
    if duplicates and options.field_validation == STRICT:
        raise errors.bad_request(f"error strict decoding YAML: {duplicates[0]}")
    if duplicates and options.field_validation != IGNORE:
        warnings += duplicates
    return applied


async def apply(
    storage: Applier | None,
    scope: RequestScope,
    request: ApiRequest,
    target: Target,
    body: bytes,
    options: WriteOptions,
) -> Response:
    """Server-side apply: the body is the manager's whole intent for the fields it names."""
    info = info_of(request)
    if storage is None:  # a subresource with no field management of its own
        what = f"{scope.resource.group_resource}/{info.subresource}" if info.subresource else "this resource"
        raise errors.unsupported_media_type(f"{what} does not support server-side apply")
    warnings: list[str] = []
    applied = await apply_configuration(body, options, warnings)
    view, created = await storage.apply(scope.namespace(info), info.name, applied, options)
    response = respond(request, object_body(request, scope, target, view), 201 if created else 200, target.encoder)
    add_warnings(response, warnings)
    return response
