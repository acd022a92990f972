"""A request body the handler answered without reading (415, 404, 403 …) must not break the
connection for the next request — what Go's net/http does after every handler.

An answer can be ready before the client has sent its whole body; the server would then close the
keep-alive connection without saying so, and the client's next request on it fails ("server
disconnected without sending a response"). As Go's server does, up to 256 KiB of unread body is
waited for (the connection stays open); beyond that, or when the body does not arrive in time, the
response carries ``Connection: close`` so that the client does not reuse the connection.
"""

from __future__ import annotations

from typing import Final

from protokube.gateway.request import ApiRequest, Handler, Response

MAX_DRAIN_BYTES: Final = 256 * 1024  # Go's net/http maxPostHandlerReadBytes
DRAIN_TIMEOUT: Final = 5.0


class UnreadBody:
    def __init__(self, next_handler: Handler) -> None:
        self.next = next_handler

    async def __call__(self, request: ApiRequest) -> Response:
        response = await self.next(request)
        if request.body_read or (request.body_complete and request.body_size <= MAX_DRAIN_BYTES):
            return response  # nothing left unread, or all of it here and within what Go's server reads
        length = request.header("Content-Length")
        chunked = "chunked" in request.header("Transfer-Encoding").lower()
        if not chunked and length in ("", "0"):
            return response
        small = chunked or (length.isdigit() and int(length) <= MAX_DRAIN_BYTES)
        if not (small and await request.body_received(DRAIN_TIMEOUT, MAX_DRAIN_BYTES)):  # more unread: close
            response.headers["Connection"] = "close"
        return response
