"""GET of one object."""

from __future__ import annotations

from protokube.gateway.handlers.common import info_of, negotiated
from protokube.gateway.registry.rest import Getter
from protokube.gateway.representation import object_body
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import respond
from protokube.gateway.scope import RequestScope


async def get(storage: Getter, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiated(request, scope)
    info = info_of(request)
    view = await storage.get(scope.namespace(info), info.name, request.args.get("resourceVersion"))
    return respond(request, object_body(request, scope, target, view), 200, target.encoder)
