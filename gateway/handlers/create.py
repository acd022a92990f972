"""POST: create an object in a collection, or something for a named object (pods/NAME/eviction)."""

from __future__ import annotations

from typing import cast

from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from quart import Response

from gateway.handlers.common import (
    decode_request,
    field_validation_warnings,
    info_of,
    negotiated,
    request_write_options,
)
from gateway.registry.rest import Creater, NamedCreater, plays
from gateway.representation import object_body
from gateway.request import ApiRequest
from gateway.responses import STATUS_GVK, add_warnings, respond
from gateway.scope import RequestScope

CREATED = 201


async def create(request: ApiRequest, scope: RequestScope) -> Response:
    target = negotiated(request, scope)
    storage = scope.storage
    options = request_write_options(request, "CreateOptions")
    decoded = await decode_request(request, scope)
    warnings = field_validation_warnings(decoded, options, scope)
    info = info_of(request)
    namespace = scope.namespace(info)
    if info.name and plays(storage, NamedCreater):
        result = await cast(NamedCreater, storage).create_for(namespace, info.name, decoded.obj, options)
    else:  # the router serves create only for storage that plays one of the two
        result = await cast(Creater, storage).create(namespace, decoded.obj, options)
    if isinstance(result, meta.Status):  # upstream's createHandler: a Status without a code gets 201
        result.code = result.code or CREATED
        response = respond(request, target.encoder.message(result, STATUS_GVK), result.code, target.encoder)
    else:
        response = respond(request, object_body(request, scope, target, result), CREATED, target.encoder)
    add_warnings(response, warnings)
    return response
