"""A WebSocket session on an HTTP/1.1 connection (RFC 6455), served as an ASGI "websocket" scope.

The handshake is the application's to accept (101, with the subprotocol it picked) or to refuse with
an HTTP response of its own (the "websocket.http.response" extension); frames are wsproto's. A
handshake without a key, or of a version other than 13, gets Go's plain-text 400 before the
application sees it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
from collections import deque
from typing import Any, Protocol

from wsproto.connection import Connection, ConnectionState, ConnectionType
from wsproto.events import BytesMessage, CloseConnection, Ping, TextMessage

from protokube.gateway.serving.heads import field_start, http_date, status_line

log = logging.getLogger("protokube.serving")

Message = dict[str, Any]
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3
DENIAL = "websocket.http.response"
CLOSE_TIMEOUT = 5.0  # seconds the client has to answer the server's close frame
ABNORMAL_CLOSURE, NORMAL_CLOSURE, INTERNAL_ERROR = 1006, 1000, 1011


class HttpConnection(Protocol):
    """What a WebSocket session uses of the HTTP/1.1 connection it took over (http1.py's)."""

    loop: asyncio.AbstractEventLoop
    buffered: int

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    def update_reading(self) -> None: ...

    async def drain(self) -> None: ...


HANDSHAKE, DENYING, OPEN, CLOSING, CLOSED = range(5)


def valid_handshake(headers: list[tuple[bytes, bytes]]) -> bool:
    """A key of 16 bytes in base64 and version 13: what a server can answer a 101 to."""
    found = dict(headers)
    try:
        key = base64.b64decode(found.get(b"sec-websocket-key", b""), validate=True)
    except ValueError:
        return False
    return len(key) == 16 and found.get(b"sec-websocket-version", b"").strip() == b"13"


def accept_token(key: bytes) -> bytes:
    return base64.b64encode(hashlib.sha1(key.strip() + GUID).digest())


def offered_subprotocols(headers: list[tuple[bytes, bytes]]) -> list[str]:
    """Every Sec-WebSocket-Protocol value, split at commas and trimmed (empty items kept)."""
    values = [value.decode("latin-1") for name, value in headers if name == b"sec-websocket-protocol"]
    return [item.strip() for item in ",".join(values).split(",")] if values else []


class WebSocketSession:
    """The ASGI ``receive`` and ``send`` of one WebSocket handshake and the session after it."""

    def __init__(self, conn: HttpConnection, scope: dict[str, Any]) -> None:
        self.conn = conn
        headers = scope["headers"]
        scope.pop("method", None)
        scope["subprotocols"] = offered_subprotocols(headers)
        scope["extensions"][DENIAL] = {}
        self.scope = scope
        self.key = dict(headers).get(b"sec-websocket-key", b"")
        self.protocol = Connection(ConnectionType.SERVER)
        self.state = HANDSHAKE
        self.connected = False  # the application has had websocket.connect
        self.inbox: deque[Message] = deque()
        self.fragments: list[Any] = []
        self.close_code: int | None = None  # set once the client has gone
        self.waiter: asyncio.Future[None] | None = None
        self.close_timer: asyncio.TimerHandle | None = None

    # --- from the client -------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.close_code is not None or self.state == CLOSED:
            return
        self.protocol.receive_data(data)
        for event in self.protocol.events():
            if isinstance(event, TextMessage | BytesMessage):
                self.fragments.append(event.data)
                if event.message_finished:
                    self.arrived(event)
            elif isinstance(event, Ping):
                self.conn.write(self.protocol.send(event.response()))
            elif isinstance(event, CloseConnection):
                self.closed_by_client(event)

    def arrived(self, event: TextMessage | BytesMessage) -> None:
        if isinstance(event, TextMessage):
            message: Message = {"type": "websocket.receive", "text": "".join(self.fragments)}
        else:
            message = {"type": "websocket.receive", "bytes": b"".join(self.fragments)}
        self.fragments = []
        self.inbox.append(message)
        self.conn.buffered += len(message.get("text") or message.get("bytes") or b"")
        self.conn.update_reading()
        self.wake()

    def closed_by_client(self, event: CloseConnection) -> None:
        if self.protocol.state is ConnectionState.REMOTE_CLOSING:
            self.conn.write(self.protocol.send(event.response()))
        self.disconnect(event.code)
        self.conn.close()

    def disconnect(self, code: int = ABNORMAL_CLOSURE) -> None:
        if self.close_code is None:
            self.close_code = code
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.wake()

    def wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> Message:
        if not self.connected:
            self.connected = True
            return {"type": "websocket.connect"}
        while not self.inbox:
            if self.close_code is not None:
                return {"type": "websocket.disconnect", "code": self.close_code}
            self.waiter = self.conn.loop.create_future()
            await self.waiter
        message = self.inbox.popleft()
        self.conn.buffered -= len(message.get("text") or message.get("bytes") or b"")
        self.conn.update_reading()
        return message

    # --- to the client ---------------------------------------------------------------------------
    async def send(self, message: Message) -> None:
        kind = message["type"]
        if self.close_code is not None:
            return  # the client has gone: nobody reads it
        if self.state == HANDSHAKE:
            self.handshake(kind, message)
        elif self.state == DENYING and kind == f"{DENIAL}.body":
            self.deny_body(message.get("body", b""), message.get("more_body", False))
        elif self.state == OPEN and kind == "websocket.send":
            text = message.get("text")
            event = TextMessage(data=text) if text is not None else BytesMessage(data=message.get("bytes") or b"")
            self.conn.write(self.protocol.send(event))
            await self.conn.drain()
        elif self.state == OPEN and kind == "websocket.close":
            self.close(message.get("code") or NORMAL_CLOSURE, message.get("reason") or "")
        elif self.state not in (CLOSING, CLOSED):
            raise RuntimeError(f"unexpected ASGI message {kind!r} in a WebSocket session")

    def handshake(self, kind: str, message: Message) -> None:
        if kind == "websocket.accept":
            self.accept(message.get("subprotocol"), message.get("headers") or [])
        elif kind == "websocket.close":
            self.deny(403, [(b"content-length", b"0")])
            self.deny_body(b"", False)
        elif kind == f"{DENIAL}.start":
            self.deny(message["status"], message.get("headers") or [])
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} before the WebSocket handshake")

    def accept(self, subprotocol: str | None, headers: list[tuple[bytes, bytes]]) -> None:
        head = bytearray(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
        head += b"Sec-WebSocket-Accept: " + accept_token(self.key) + b"\r\n"
        if subprotocol is not None:
            head += b"Sec-WebSocket-Protocol: " + subprotocol.encode() + b"\r\n"
        for name, value in headers:
            head += field_start(name) + value + b"\r\n"
        self.conn.write(bytes(head + b"\r\n"))
        self.state = OPEN

    def deny(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        """The handshake answered with an HTTP response; the connection closes after it."""
        head = bytearray(status_line(status))
        for name, value in headers:
            if name not in (b"connection", b"transfer-encoding"):
                head += field_start(name) + value + b"\r\n"
        head += b"Date: " + http_date() + b"\r\nConnection: close\r\n\r\n"
        self.conn.write(bytes(head))
        self.state = DENYING

    def deny_body(self, body: bytes, more: bool) -> None:
        self.conn.write(body)
        if not more:
            self.state = CLOSED
            self.conn.close()

    def close(self, code: int, reason: str) -> None:
        """The server's close frame; the connection ends when the client answers, or after a while."""
        self.conn.write(self.protocol.send(CloseConnection(code=code, reason=reason or None)))
        self.state = CLOSING
        self.close_timer = self.conn.loop.call_later(CLOSE_TIMEOUT, self.conn.close)

    # --- the end ---------------------------------------------------------------------------------
    def done(self, task: asyncio.Task[None]) -> None:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("error serving a WebSocket on %s", self.scope["path"], exc_info=error)
        if self.close_code is not None:
            self.conn.close()
        elif self.state == HANDSHAKE:
            self.deny(500 if error is not None else 403, [(b"content-length", b"0")])
            self.deny_body(b"", False)
        elif self.state == OPEN:
            self.close(INTERNAL_ERROR if error is not None else NORMAL_CLOSURE, "")
        elif self.state == DENYING:
            self.conn.close()
