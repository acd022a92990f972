"""GET ?watch=true: a chunked stream of watch events until the timeout or the client leaves.

Events are framed by the negotiated encoder (JSON lines, length-prefixed protobuf, …); an error
after the stream started is sent as an ERROR event carrying a Status, as upstream does.
"""

from __future__ import annotations

import random

from quart import Response

from gateway.context import RequestContext
from gateway.negotiation import negotiate
from gateway.params import list_options
from gateway.watchstream import WatchStream

# upstream: --min-request-timeout; a watch without timeoutSeconds lasts [1, 2) times this.
MIN_REQUEST_TIMEOUT = 1800


def watch_timeout(requested: int | None) -> float:
    if requested:
        return float(requested)
    return MIN_REQUEST_TIMEOUT * (1 + random.random())


async def watch(ctx: RequestContext) -> Response:
    encoder = negotiate.watch_encoder(ctx.request.headers.get("Accept"), ctx.pretty, ctx.gateway.formats)
    options = list_options(ctx.query())
    stream = WatchStream(ctx, options, encoder, watch_timeout(options.timeout_seconds))
    await stream.start()
    response = Response(stream.body(), status=200, content_type=encoder.watch_content_type)
    response.headers["Cache-Control"] = "no-cache, private"
    response.timeout = None
    return response
