"""PUT: replace an object (or create it, for kinds that allow create-on-update)."""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.handlers.common import (
    decode_request,
    field_validation_warnings,
    info_of,
    may_create_write_options,
    negotiated,
)
from protokube.gateway.objects.codec import Obj
from protokube.gateway.registry.rest import UpdatedObject, Updater
from protokube.gateway.registry.store import check_namespace
from protokube.gateway.representation import object_body
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import add_warnings, respond
from protokube.gateway.scope import RequestScope


def check_name(obj: Obj, name: str) -> None:
    """The object names the URL's object (upstream's checkName: 400 otherwise), as PUT's body and a
    patch's result must."""
    if obj.metadata.name != name:
        raise errors.bad_request(
            f"the name of the object ({obj.metadata.name}) does not match the name on the URL ({name})"
        )


def replacement(scope: RequestScope, obj: Obj, namespace: str, name: str) -> UpdatedObject:
    """PUT's new object: the body, whatever is stored (upstream's DefaultUpdatedObjectInfo), once
    its name and namespace agree with the URL (upstream's checkName)."""
    check_name(obj, name)
    if scope.resource.namespaced:
        check_namespace(obj, namespace)
    codec = scope.codec
    return lambda current: codec.copy(obj)


async def update(storage: Updater, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiated(request, scope)
    info = info_of(request)
    options = may_create_write_options(request, scope, "UpdateOptions")
    decoded = await decode_request(request, scope)
    warnings = field_validation_warnings(decoded, options, scope)
    namespace = scope.namespace(info)
    updated = replacement(scope, decoded.obj, namespace, info.name)
    view, created = await storage.update(namespace, info.name, updated, options)
    response = respond(request, object_body(request, scope, target, view), 201 if created else 200, target.encoder)
    add_warnings(response, warnings)
    return response
