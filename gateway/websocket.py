"""WebSocket requests (ASGI "websocket" scopes), served by the same filter chain as HTTP.

kube-apiserver sees a WebSocket handshake as the GET it is: Audit-Id, authentication, flow control
(a watch is long-running), authorization and routing run as for any GET, and the handler answers.
Only a watch upgrades (upstream's WatchServer.HandleWS, on golang.org/x/net/websocket): each event
is one message — text for JSON, binary otherwise (protobuf without its length prefix) — until the
watch ends (close 1000) or the client closes (the watch ends: watcher released, seats given back).
Every other answer — a Status error (404 for a missing pod, 400 ``pod x does not have a host
assigned``, 401, 403, 429 …) or anything else — goes out as the HTTP response it is, before the
handshake (ASGI's "websocket.http.response" extension): this server streams nothing to kubelets.

Before upgrading a watch, x/net/websocket refuses, with an empty body, a handshake without an
Origin that Go's url.ParseRequestURI takes (403) and one offering more than one subprotocol (400);
a single subprotocol is echoed, the messages unchanged. Malformed handshakes (no Sec-WebSocket-Key,
another version) never get here: the HTTP server answers them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from protokube.gateway.asgi import ApiHandler, Receive, Scope, Send, answer, send_response, while_connected
from protokube.gateway.handlers.watch import WatchEvents, WatchResponse
from protokube.gateway.negotiation.encoders import JSONEncoder, ProtobufEncoder
from protokube.gateway.negotiation.negotiate import Encoder
from protokube.gateway.request import ApiRequest, RequestBody

DENIAL = "websocket.http.response"  # an HTTP response instead of the handshake's 101
HTTP_SCHEMES = {"ws": "http", "wss": "https"}  # what authentication tells the ports apart by
PROTOBUF_LENGTH_PREFIX = 4  # a message frames the event itself
NORMAL_CLOSURE = 1000
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_CONTROL = re.compile("[\x00-\x1f\x7f]")

Message = dict[str, Any]


class WebSocketApi:
    """The ASGI app for WebSocket scopes: ``handler`` is the API's filter chain."""

    def __init__(self, handler: ApiHandler) -> None:
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = RequestBody(complete=True)
        request = ApiRequest({**scope, "method": "GET", "scheme": HTTP_SCHEMES[scope["scheme"]]}, body)
        await while_connected(receive, body, self._serve(request, _subprotocols(scope), send))

    async def _serve(self, request: ApiRequest, offered: list[str], send: Send) -> None:
        response = await answer(self.handler, request)
        if not isinstance(response, WatchResponse):
            await send_response(send, response, DENIAL)
            return
        try:
            await _stream_watch(request, offered, response.events, send)
        finally:
            response.events.close()  # also when refused, or cancelled before its first event


async def _stream_watch(request: ApiRequest, offered: list[str], events: WatchEvents, send: Send) -> None:
    if not _valid_origin(request.header("Origin")):
        await _refuse(send, HTTPStatus.FORBIDDEN)
        return
    if len(offered) > 1:
        await _refuse(send, HTTPStatus.BAD_REQUEST)
        return
    await send({"type": "websocket.accept", "subprotocol": offered[0] if offered else None})
    message = _messages(events.frames.encoder)
    async with contextlib.aclosing(events.batches()) as batches:
        async for frames in batches:
            for frame in frames:
                await send(message(frame))
    await send({"type": "websocket.close", "code": NORMAL_CLOSURE})


def _subprotocols(scope: Scope) -> list[str]:
    """The subprotocols offered: the server's reading of Sec-WebSocket-Protocol (comma-separated
    values, trimmed; empty items count, as in x/net/websocket), where a blank header offers none."""
    offered: list[str] = scope.get("subprotocols") or []
    return [] if offered == [""] else offered


def _valid_origin(origin: str) -> bool:
    """Whether Go's url.ParseRequestURI takes the Origin (x/net/websocket's checkOrigin): an
    absolute URI or path without control characters (its scheme and path rules; hosts unchecked)."""
    if not origin or _CONTROL.search(origin):
        return False
    return origin == "*" or origin.startswith("/") or _SCHEME.match(origin) is not None


def _messages(encoder: Encoder) -> Callable[[bytes], Message]:
    """How a frame goes out: as text in JSON (upstream's EncodesAsText), as binary otherwise."""
    if isinstance(encoder, JSONEncoder):
        return lambda frame: {"type": "websocket.send", "text": frame.decode()}
    skip = PROTOBUF_LENGTH_PREFIX if isinstance(encoder, ProtobufEncoder) else 0
    return lambda frame: {"type": "websocket.send", "bytes": frame[skip:]}


async def _refuse(send: Send, status: int) -> None:
    """x/net/websocket's refusal: the status line, no body, the connection closed."""
    headers = [(b"content-length", b"0"), (b"connection", b"close")]
    await send({"type": f"{DENIAL}.start", "status": status, "headers": headers})
    await send({"type": f"{DENIAL}.body", "body": b"", "more_body": False})
