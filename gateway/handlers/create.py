"""POST: create an object in a collection, or something for a named object (pods/NAME/eviction)."""

from __future__ import annotations

from typing import Final

from protokube.gateway.handlers.common import (
    decode_request,
    field_validation_warnings,
    info_of,
    negotiated,
    request_write_options,
)
from protokube.gateway.negotiation.negotiate import Target
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.rest import BothCreater, Creater, NamedCreater
from protokube.gateway.representation import object_body
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import STATUS_GVK, add_warnings, respond
from protokube.gateway.scope import RequestScope
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

CREATED: Final = 201


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class _Posted:
    """A create request, read: the response's target, the body's object, the options, the warnings."""

    def __init__(self, target: Target, obj: Obj, options: WriteOptions, warnings: list[str]) -> None:
        self.target = target
        self.obj = obj
        self.options = options
        self.warnings = warnings


async def _posted(request: ApiRequest, scope: RequestScope) -> _Posted:
    target = negotiated(request, scope)
    options = request_write_options(request, "CreateOptions")
    decoded = await decode_request(request, scope)
    return _Posted(target, decoded.obj, options, field_validation_warnings(decoded, options, scope))


async def create(storage: Creater, scope: RequestScope, request: ApiRequest) -> Response:
    """The body's object, created in the collection (a name in the URL plays no part)."""
    posted = await _posted(request, scope)
    result = await storage.create(scope.namespace(info_of(request)), posted.obj, posted.options)
    return _answer(request, scope, posted, result)


async def create_named(storage: NamedCreater, scope: RequestScope, request: ApiRequest) -> Response:
    """Something created for the object the URL names."""
    posted = await _posted(request, scope)
    info = info_of(request)
    result = await storage.create_for(scope.namespace(info), info.name, posted.obj, posted.options)
    return _answer(request, scope, posted, result)


async def create_by_name(storage: BothCreater, scope: RequestScope, request: ApiRequest) -> Response:
    """A POST that names an object creates for it, any other in the collection."""
    return await (create_named if info_of(request).name else create)(storage, scope, request)


def _answer(request: ApiRequest, scope: RequestScope, posted: _Posted, result: ObjectView | meta.Status) -> Response:
    target = posted.target
    if isinstance(result, meta.Status):  # upstream's createHandler: a Status without a code gets 201
        result.code = result.code or CREATED
        response = respond(request, target.encoder.message(result, STATUS_GVK), result.code, target.encoder)
    else:
        response = respond(request, object_body(request, scope, target, result), CREATED, target.encoder)
    add_warnings(response, posted.warnings)
    return response
