"""GET of a collection: a list (a watch is in watch.py)."""

from __future__ import annotations

from protokube.gateway.handlers.common import info_of, negotiated
from protokube.gateway.negotiation.negotiate import COLLECTION
from protokube.gateway.params import list_options, validate_list_options
from protokube.gateway.registry.rest import Lister
from protokube.gateway.representation import list_body
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import respond
from protokube.gateway.scope import RequestScope


async def list_(storage: Lister, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiated(request, scope, COLLECTION)
    options = validate_list_options(list_options(request.query()))
    listed = await storage.list(scope.namespace(info_of(request)), options)
    return respond(request, list_body(request, scope, target, listed.items, listed.list_meta), 200, target.encoder)
