"""GET of a collection: a list (a watch is in watch.py)."""

from __future__ import annotations

from quart import Response

from gateway import reads
from gateway.context import RequestContext
from gateway.negotiation.negotiate import COLLECTION
from gateway.representation import list_body
from gateway.responses import respond


async def list_(ctx: RequestContext) -> Response:
    target = ctx.target(COLLECTION)
    listed = await reads.list_objects(ctx)
    return respond(list_body(ctx, target, listed.items, listed.list_meta), 200, target.encoder)
