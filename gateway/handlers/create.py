"""POST: create an object in a collection."""

from __future__ import annotations

from quart import Response

from gateway.handlers.common import (
    decode_request,
    field_validation_warnings,
    info_of,
    negotiated,
    request_write_options,
)
from gateway.registry.rest import Creater, NamedCreater
from gateway.representation import object_body
from gateway.request import ApiRequest
from gateway.responses import add_warnings, respond
from gateway.scope import RequestScope


async def create(request: ApiRequest, scope: RequestScope) -> Response:
    target = negotiated(request, scope)
    storage: Creater | NamedCreater = scope.storage  # type: ignore[assignment]
    options = request_write_options(request, "CreateOptions")
    decoded = await decode_request(request, scope)
    warnings = field_validation_warnings(decoded, options, scope)
    info = info_of(request)
    if isinstance(storage, NamedCreater):
        view = await storage.create_named(scope.namespace(info), info.name, decoded.obj, options)
    else:
        view = await storage.create(scope.namespace(info), decoded.obj, options)
    response = respond(request, object_body(request, scope, target, view), 201, target.encoder)
    add_warnings(response, warnings)
    return response
