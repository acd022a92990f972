"""GET of one object."""

from __future__ import annotations

from quart import Response

from gateway.context import RequestContext
from gateway.responses import respond


async def get(ctx: RequestContext) -> Response:
    encoder = ctx.encoder()
    view = await ctx.gateway.read_object(ctx)
    return respond(encoder.object(view), 200, encoder)
