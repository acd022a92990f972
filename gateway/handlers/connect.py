"""Requests to a connect subresource (pods/NAME/log, exec, attach, portforward, proxy; nodes and
services proxy), whatever their method: the storage finds the backend, or says why there is none."""

from __future__ import annotations

from protokube.gateway.handlers.common import info_of
from protokube.gateway.registry.rest import Connecter, Connection
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.scope import RequestScope

NO_CONTENT = 204


async def connect(storage: Connecter, scope: RequestScope, request: ApiRequest) -> Response:
    info = info_of(request)
    upgrade = "upgrade" in request.header("Connection").lower() and bool(request.header("Upgrade"))
    await storage.connect(Connection(scope.namespace(info), info.name, info.subpath, request.query_lists(), upgrade))
    response = Response(b"", NO_CONTENT)
    del response.headers["Content-Type"]
    response.headers["Cache-Control"] = "no-cache, private"  # upstream's WithCacheControl: every response
    return response
