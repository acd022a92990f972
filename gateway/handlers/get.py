"""GET of one object."""

from __future__ import annotations

from quart import Response

from gateway import reads
from gateway.context import RequestContext
from gateway.representation import object_body
from gateway.responses import respond


async def get(ctx: RequestContext) -> Response:
    target = ctx.target()
    view = await reads.read_object(ctx)
    return respond(object_body(ctx, target, view), 200, target.encoder)
