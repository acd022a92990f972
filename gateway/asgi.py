"""The API served at the ASGI level, below the web framework's per-request machinery.

Every HTTP request goes from the server straight to the filter chain: its ``ApiRequest`` is built
from the ASGI scope once, its body read from ``receive`` as it arrives (``RequestBody``), and the
chain's response written as ASGI messages — in one message when its body is in memory, chunk by
chunk when it is streamed (watches, large lists). No framework request or response wrapper, context
variable or routing is made per request. Quart hosts the application around it (its lifespan, and
the scopes that are not HTTP); ``mount`` puts the API in front of Quart's own ``asgi_app``, the
extension point Quart documents for ASGI middleware. WebSocket scopes go through the same chain
(gateway/websocket.py).

While the handler runs, a second task reads ``receive`` (``while_connected``): the body's chunks,
and the client's disconnect, on which the handler is cancelled (its flow-control seats given back,
its watch ended) as kube-apiserver's request context is cancelled when its client goes away.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from protokube.gateway import errors
from protokube.gateway.handlers.watch import WatchResponse
from protokube.gateway.negotiation.encoders import JSONEncoder
from protokube.gateway.request import ApiRequest, RequestBody, Response
from protokube.gateway.responses import status_response
from protokube.gateway.serving.follow import FOLLOW_BODY
from protokube.gateway.serving.http1 import WRITE_NOW

if TYPE_CHECKING:
    from quart import Quart

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ApiHandler = Callable[[ApiRequest], Awaitable[Response]]
Follow = Callable[..., None]  # serving/follow.py's Followed.follow
DISCONNECTS: Final = ("http.disconnect", "websocket.disconnect")


def mount(app: Quart, handler: ApiHandler, websocket: ASGIApp) -> None:
    """Serve the API (``handler``, the filter chain) at the ASGI level in front of ``app``, and its
    WebSocket requests with ``websocket``."""
    app.asgi_app = ApiASGI(handler, app.asgi_app, websocket)  # type: ignore[method-assign,assignment,arg-type]


class ApiASGI:
    """HTTP scopes to the API, WebSocket scopes to ``websocket``; lifespan to the hosting app."""

    def __init__(self, handler: ApiHandler, host: ASGIApp, websocket: ASGIApp) -> None:
        self.handler = handler
        self.host = host
        self.websocket = websocket

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self.websocket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.host(scope, receive, send)
            return
        body = RequestBody()
        extensions = scope.get("extensions")
        follow = extensions.get(FOLLOW_BODY) if extensions else None
        await while_connected(receive, body, self._answer(ApiRequest(scope, body), send, extensions), follow)

    async def _answer(self, request: ApiRequest, send: Send, extensions: dict[str, Any] | None) -> None:
        response = await answer(self.handler, request)
        if isinstance(response, WatchResponse) and extensions:  # the server may write its events itself
            response.events.write_now = extensions.get(WRITE_NOW)
        try:
            await send_response(send, response)
        finally:
            if isinstance(response, WatchResponse):  # also when its client left before its first byte
                response.events.close()


async def while_connected(
    receive: Receive, body: RequestBody, serving: Awaitable[None], follow: Follow | None = None
) -> None:
    """Await ``serving`` while the body is handed over as it arrives, and the client's disconnect
    cancels ``serving`` (nobody is left to answer): by the server itself where it offers ``follow``
    (serving/follow.py), else by a second task reading ``receive``."""
    task = asyncio.current_task()
    assert task is not None
    left = partial(_left, body, task)
    reader = None
    if follow is not None:
        follow(body.arrived, left)
    else:
        reader = asyncio.get_running_loop().create_task(_read(receive, body, left))
    try:
        await serving
    except asyncio.CancelledError:
        if not body.disconnected:
            raise
        task.uncancel()  # the client went away
    finally:
        if reader is not None:
            reader.cancel()
        elif follow is not None:
            follow(None)


async def answer(handler: ApiHandler, request: ApiRequest) -> Response:
    """The chain's response to ``request``; a 500 Status when an error got through it."""
    try:
        return await handler(request)
    except asyncio.CancelledError:
        raise
    except Exception:  # the error funnel answers every error; this is a bug of ours
        log.exception("unhandled error serving %s %s", request.method, request.path)
        return status_response(request, errors.internal("an error on the server"), JSONEncoder())


async def _read(receive: Receive, body: RequestBody, left: Callable[[], None]) -> None:
    """Hand the body's chunks over as they arrive; ``left()`` when the client goes away.
    A WebSocket client's messages are dropped: nothing served over one reads them (upstream's
    watches ignore them too)."""
    while True:
        message = await receive()
        if message["type"] == "http.request":
            body.arrived(message.get("body", b""), message.get("more_body", False))
        elif message["type"] in DISCONNECTS:
            left()
            return


def _left(body: RequestBody, handler: asyncio.Task[Any]) -> None:
    """The client went away: the body ends, and the handler with it."""
    body.gone()
    handler.cancel()


async def send_response(send: Send, response: Response, kind: str = "http.response") -> None:
    """Write ``response`` as ASGI messages of ``kind``: "http.response", or "websocket.http.response"
    (the extension that answers a WebSocket handshake with an HTTP response instead)."""
    headers = response.headers.encoded()
    start, body = f"{kind}.start", f"{kind}.body"
    await send({"type": start, "status": response.status_code, "headers": headers})
    chunks = response.chunks
    if chunks is None:
        await send({"type": body, "body": response.body, "more_body": False})
        return
    try:
        async for chunk in chunks:
            await send({"type": body, "body": chunk, "more_body": True})
    finally:
        if isinstance(chunks, AsyncGenerator):
            await chunks.aclose()
    await send({"type": body, "body": b"", "more_body": False})
