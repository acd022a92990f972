"""POST: create an object in a collection."""

from __future__ import annotations

from quart import Response

from gateway.context import RequestContext
from gateway.handlers.writes import decode_request, field_validation_warnings
from gateway.params import write_options
from gateway.representation import object_body
from gateway.responses import add_warnings, respond


async def create(ctx: RequestContext) -> Response:
    target = ctx.target()
    options = write_options(ctx.query_lists(), "CreateOptions")
    decoded = await decode_request(ctx)
    warnings = field_validation_warnings(decoded, options, ctx.resource.kind, ctx.resource.version)
    view = await ctx.store.create(ctx.namespace, decoded.message, options)
    response = respond(object_body(ctx, target, view), 201, target.encoder)
    add_warnings(response, warnings)
    return response
