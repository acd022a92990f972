"""GET of a collection: a list (or a watch, see watch.py)."""

from __future__ import annotations

from quart import Response

from gateway.context import RequestContext
from gateway.responses import respond
from protokube.schema.registry import GroupVersionKind


async def list_(ctx: RequestContext) -> Response:
    encoder = ctx.encoder()
    listed = await ctx.gateway.list_objects(ctx)
    gvk = GroupVersionKind(ctx.resource.group, ctx.resource.version, ctx.resource.list_kind)
    return respond(encoder.list(gvk, listed.list_meta, listed.items), 200, encoder)
