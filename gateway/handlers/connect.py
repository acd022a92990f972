"""Requests to a connect subresource (pods/NAME/log, exec, attach, portforward, proxy; nodes and
services proxy), whatever their method: the storage finds the backend, or says why there is none."""

from __future__ import annotations

from typing import cast

from quart import Response

from gateway.handlers.common import info_of
from gateway.registry.rest import Connecter, Connection
from gateway.request import ApiRequest
from gateway.scope import RequestScope

NO_CONTENT = 204


async def connect(request: ApiRequest, scope: RequestScope) -> Response:
    storage = cast(Connecter, scope.storage)  # the router sends here only storage that plays Connecter
    info = info_of(request)
    upgrade = "upgrade" in request.header("Connection").lower() and bool(request.header("Upgrade"))
    await storage.connect(Connection(scope.namespace(info), info.name, info.subpath, request.query_lists(), upgrade))
    response = Response(b"", NO_CONTENT)
    del response.headers["Content-Type"]
    return response
