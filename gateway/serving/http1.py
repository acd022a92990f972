"""HTTP/1.1 on httptools: one connection, its requests served one at a time as ASGI "http" scopes.

- Keep-alive and pipelining: requests parsed while one is served wait in order (their bodies kept);
  reading pauses while too much waits, and while a body piles up that the application does not read.
- Bodies reach ``receive`` as they arrive (Content-Length or chunked; ``Expect: 100-continue`` is
  answered when the application first asks for the body). Responses go out with the Content-Length
  the application gives, or one counted when the whole body comes in one message, or chunked; the
  status line carries Go's reason phrase, and a Date header is added as Go's server adds one.
  What a turn of the loop writes goes out at its end, so that the responses made in one turn reach
  their clients together.
- As Go's net/http: a head beyond MaxHeaderBytes gets its plain-text 431, a malformed request its
  plain-text 400, and the connection is closed. A client that closes its end ends the connection
  at once: an idle one is let go, a request in flight gets ``http.disconnect``.
- An idle connection is closed after the keep-alive timeout; at shutdown, after its request.
- ``Upgrade: websocket`` hands the connection over to a WebSocket session (upgrade.py).
- The ``protokube.write_now`` extension (``Request.write_now``) writes a streamed response's next
  chunk from outside its task, when the connection takes it without waiting: a watch's fan-out
  writes many connections in one callback instead of waking a task for each.
- The ``protokube.follow_body`` extension (follow.py) hands the body over as it arrives, and says
  when the client leaves, by calls instead of ``receive``.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, Final
from urllib.parse import unquote

import httptools

from protokube.gateway.serving.follow import FOLLOW_BODY, Arrived, Followed, Gone
from protokube.gateway.serving.heads import STATUS_LINES, field_start, go_error, http_date, status_line
from protokube.gateway.serving.limits import HEADER_LIMIT

log = logging.getLogger("protokube.serving")

Message = dict[str, Any]
ASGIApp = Callable[..., Coroutine[Any, Any, None]]
ASGI: Final = {"version": "3.0", "spec_version": "2.4"}
WRITE_NOW: Final = "protokube.write_now"  # the scope's extension: Request.write_now
HIGH_WATER: Final = 256 * 1024  # body bytes waiting for the application before reading pauses
MAX_PIPELINE: Final = 16  # requests parsed ahead of the one being served before reading pauses
RAW_HEAD_SLACK: Final = 64 * 1024  # a head is refused once this much more than the limit came without its end
WRITE_AT_ONCE: Final = 1 << 16  # bytes written in one turn of the loop beyond which they are handed over at once
WRITES: Final = contextvars.Context()  # the writes at the end of a turn run in no request's lane (lanes.py)
LINGER: Final = 0.5  # seconds a closing connection reads (and drops) what the client still sends, as Go's
# how a response's body is framed
CHUNKED: Final = 0
LENGTH: Final = 1
UNTIL_CLOSE: Final = 2
NO_BODY: Final = 3
NO_BODY_STATUSES: Final = frozenset((204, 304))
# searched for as ints: ``13 in value`` is a memchr, ``b"\r" in value`` ten times slower
CR: Final = 13
LF: Final = 10
# kube-apiserver's ReadHeaderTimeout: a request's head must be complete this long after it began (a
# new connection's first one: after the connection was made), else the connection is closed unanswered.
HEADER_TIMEOUT: Final = 32.0
BODY_HEADERS: Final = frozenset((b"content-length", b"content-type", b"transfer-encoding"))
COMMON_STARTS: Final = frozenset((b"GET ", b"POST", b"PUT ", b"PATC", b"DELE", b"HEAD", b"OPTI"))
# The methods llhttp knows (any other token is a method to Go, and llhttp refuses it) and PRI, HTTP/2's preface.
LLHTTP_METHODS: Final = frozenset(
    b"DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH SEARCH UNLOCK BIND "
    b"REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY SUBSCRIBE UNSUBSCRIBE PATCH PURGE "
    b"MKCALENDAR LINK UNLINK SOURCE QUERY PRI".split()
)
TOKEN: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class HeadTooLarge(Exception):
    """Raised in a parser callback: the head is beyond the limit (431)."""


class Http1Protocol(asyncio.Protocol):
    """One HTTP/1.x connection (TCP or TLS after its handshake); see the module's docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        scheme: str,
        server: tuple[str, int] | None,
        client: tuple[str, int] | None,
        tls: dict | None,
        context: contextvars.Context,
        keep_alive_timeout: float,
        access_log: logging.Logger | None = None,
    ) -> None:
        self.app = app
        self.scheme, self.server, self.client = scheme, server, client
        self.extensions: dict[str, Any] = {"tls": tls} if tls is not None else {}
        self.context = context
        self.keep_alive_timeout = keep_alive_timeout
        self.access_log = access_log
        self.loop = asyncio.get_running_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.current: Any = None  # the request (or WebSocket session) being served
        self.pipeline: deque[Any] = deque()  # those parsed after it, in order
        self.parsing: Request | None = None  # the request whose body the parser is reading
        self.upgraded: Any = None  # the WebSocket session the connection was handed over to
        self.awaiting_head = False  # a request's head has begun (or the connection is new): HEADER_TIMEOUT runs
        self.ignored_upgrade = False  # the head asks for another upgrade (h2c), which is ignored
        self.priming = False  # a new parser is being given the head that frames an ignored upgrade's body
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_size = 0
        self.raw_head = 0  # bytes received since the current head began
        self.in_head = True
        self.parser_idle = True  # between two messages, nothing of the next one parsed yet
        self.method: str | None = None  # a method llhttp does not know, which it was told is GET
        self.expect_continue = False
        self.websocket = False  # the head asks for a WebSocket upgrade
        self.websocket_scope: dict[str, Any] | None = None  # such a head's, once complete
        self.buffered = 0  # body bytes received that the application has not taken yet
        self.reading_paused = False
        self.write_paused = False
        self.unwritten: list[bytes] = []  # written this turn of the loop, not yet handed to the transport
        self.unwritten_bytes = 0
        self.flush_scheduled = False
        self.drain_waiters: list[asyncio.Future[None]] = []
        self.idle_timer: asyncio.TimerHandle | None = None
        self.idle_deadline: float | None = None  # loop time at which an idle connection is closed
        self.linger_timer: asyncio.TimerHandle | None = None
        self.refusal: int | None = None  # the status the connection ends with once the current request is done
        self.discarding = False  # no more requests are read: what arrives is dropped
        self.ending = False  # close() was called: nothing more is written
        self.closing = False  # no request after the current one (shutdown)
        self.lost = False
        self.closed = self.loop.create_future()

    # --- the transport's callbacks -------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.arm_idle_timer(HEADER_TIMEOUT)  # the first request's head is due from the start
        self.awaiting_head = True

    def data_received(self, data: bytes) -> None:
        if self.upgraded is not None:
            self.upgraded.feed(data)
            return
        if self.discarding:
            return
        if self.in_head and not self.awaiting_head:  # a request begins: its head is due within the timeout
            self.awaiting_head = True
            self.arm_idle_timer(HEADER_TIMEOUT)
        if self.in_head:
            self.raw_head += len(data)
            if self.raw_head > HEADER_LIMIT + RAW_HEAD_SLACK:
                self.refuse(431)
                return
            if self.parser_idle and data[:4] not in COMMON_STARTS:
                data = self.other_method(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            self.upgrade(data[upgrade.args[0] :])
        except httptools.HttpParserError as err:
            unreadable = self.parsing  # a request whose body cannot be read (a bad chunk size)
            self.refuse(431 if isinstance(err.__context__, HeadTooLarge) else 400)
            if unreadable is not None and unreadable is self.current:
                unreadable.disconnect()  # its handler stops; the client gets Go's 400 at once

    def eof_received(self) -> bool:
        """The client closed its end: as Go's server, that ends the connection and the request in
        flight (``http.disconnect``), unless requests it sent before wait: they are served, and
        the connection closed after the last."""
        if self.pipeline and self.upgraded is None and self.scheme == "http":  # TLS ends with its transport
            self.discarding = True
            self.pipeline[-1].keep_alive = False
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        for timer in (self.idle_timer, self.linger_timer):
            if timer is not None:
                timer.cancel()
        if self.current is not None:
            self.current.disconnect()
        if self.upgraded is not None and self.upgraded is not self.current:
            self.upgraded.disconnect()
        self.pipeline.clear()
        self.wake_writers()
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self.wake_writers()

    # --- the parser's callbacks ------------------------------------------------------------------
    def other_method(self, data: bytes) -> bytes:
        """A request line whose method is a token llhttp does not know (Go's server takes any): the
        parser is given GET in its place, the scope the method."""
        space = data.find(b" ", 0, 256)
        method = data[:space]
        if space <= 0 or method in LLHTTP_METHODS or not TOKEN.fullmatch(method):
            return data
        self.method = method.decode("ascii")
        return b"GET" + data[space:]

    def on_message_begin(self) -> None:
        if self.priming:
            return
        self.parser_idle = False
        self.url, self.headers, self.head_size = b"", [], 0
        self.expect_continue = self.websocket = False
        self.websocket_scope = None

    def on_url(self, url: bytes) -> None:
        if not self.priming:
            self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.priming:
            return
        name = name.lower()
        self.headers.append((name, value))
        self.head_size += len(name) + len(value) + 4
        if name == b"expect":
            self.expect_continue = value.lower() == b"100-continue"
        elif name == b"upgrade":
            self.websocket = b"websocket" in value.lower()

    def on_headers_complete(self) -> None:
        if self.priming:
            return
        if len(self.url) + self.head_size > HEADER_LIMIT:
            raise HeadTooLarge
        self.in_head = self.awaiting_head = False
        self.cancel_idle_timer()
        scope = self.scope()
        if self.parser.should_upgrade():
            if self.websocket and scope["method"] == "GET":
                self.websocket_scope = scope  # served once the parser hands the connection over
                return
            self.ignored_upgrade = True
        request = Request(self, scope, self.expect_continue)
        self.parsing = request
        if self.current is None:
            self.serve(request)
        else:
            self.pipeline.append(request)
            self.update_reading()

    def on_body(self, body: bytes) -> None:
        request = self.parsing
        if request is not None and not request.finished:
            request.chunks.append(body)
            self.buffered += len(body)
            request.wake()
            if self.buffered > HIGH_WATER:
                self.update_reading()

    def on_message_complete(self) -> None:
        if self.ignored_upgrade:  # llhttp ends the message at its head: the body is yet to be read
            return
        self.in_head, self.raw_head, self.parser_idle = True, 0, True
        request, self.parsing = self.parsing, None
        if request is None:
            return
        request.complete = True
        request.wake()
        if request is self.current and request.finished:
            self.next()  # it was answered before its whole body came

    # --- requests --------------------------------------------------------------------------------
    def scope(self) -> dict[str, Any]:
        """The ASGI scope of the request whose head was just parsed."""
        url = self.url
        if url[:1] == b"/":
            raw_path, _, query = url.partition(b"?")
        else:  # absolute form, or "*"
            parsed = httptools.parse_url(url)
            raw_path, query = parsed.path or b"/", parsed.query or b""
        return {
            "type": "http",
            "asgi": ASGI,
            "http_version": self.parser.get_http_version(),
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "method": self.request_method(),
            "root_path": "",
            "path": unquote(raw_path.decode("utf-8", "replace")),
            "raw_path": raw_path,
            "query_string": query,
            "headers": self.headers,
            "extensions": dict(self.extensions),
        }

    def request_method(self) -> str:
        method, self.method = self.method, None
        return method or self.parser.get_method().decode("ascii")

    def serve(self, exchange: Any) -> None:
        """Run the application for ``exchange`` (a request or a WebSocket session) in a task of its
        own, in a copy of the connection's context (the connection's lane: lanes.py)."""
        self.current = exchange
        self.cancel_idle_timer()
        call = self.app(exchange.scope, exchange.receive, exchange.send)
        task = self.loop.create_task(call, context=self.context.copy())
        task.add_done_callback(exchange.done)

    def request_done(self, request: Request) -> None:
        """The application is done with ``request``: its body is not wanted any longer."""
        self.buffered -= request.drop_body()
        if self.lost:
            return
        if not request.keep_alive or self.closing:
            self.close()
        elif request.complete or self.refusal is not None:
            self.next()
        else:
            self.update_reading()  # the rest of its body is read and dropped, then the next request

    def next(self) -> None:
        """Serve the next request, or wait for one."""
        self.current = None
        if self.refusal is not None:
            self.refuse(self.refusal)
        elif self.pipeline:
            self.serve(self.pipeline.popleft())
            self.update_reading()
        elif self.upgraded is not None:
            self.serve(self.upgraded)
        else:
            self.update_reading()
            self.arm_idle_timer()

    def upgrade(self, rest: bytes) -> None:
        """The parser stopped after an upgrade request: a WebSocket handshake is served by a session
        that takes the connection's bytes from now on; any other upgrade is served as HTTP, and the
        connection closed after it."""
        scope = self.websocket_scope
        if scope is None:
            self.ignore_upgrade(rest)
            return
        # wsproto with it, at the first WebSocket (~15 ms of every start otherwise)
        from protokube.gateway.serving.upgrade import WebSocketSession, valid_handshake

        if not valid_handshake(scope["headers"]):
            self.refuse(400)
            return
        scope["type"], scope["scheme"] = "websocket", "wss" if self.scheme == "https" else "ws"
        self.upgraded = WebSocketSession(self, scope)
        if rest:
            self.upgraded.feed(rest)
        if self.current is None:
            self.serve(self.upgraded)

    def ignore_upgrade(self, rest: bytes) -> None:
        """An upgrade other than WebSocket (h2c, which Java's HTTP client asks for on plain HTTP) is
        ignored, as Go's server ignores it: the request is served as HTTP/1.1. llhttp stops at an
        upgrade's head, so a new parser reads its body — given first a head that frames the body as
        the request's own head does — and the requests after it."""
        self.ignored_upgrade = False
        headers = dict(self.parsing.scope["headers"]) if self.parsing is not None else {}
        framing = b"Content-Length: 0"
        if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
            framing = b"Transfer-Encoding: chunked"
        elif b"content-length" in headers:
            framing = b"Content-Length: " + headers[b"content-length"]
        self.parser = httptools.HttpRequestParser(self)
        self.priming = True
        try:
            self.parser.feed_data(b"POST / HTTP/1.1\r\n" + framing + b"\r\n\r\n")
        finally:
            self.priming = False
        if rest:
            self.data_received(rest)

    # --- writing ---------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self.write_parts([data])

    def write_parts(self, parts: list[bytes]) -> None:
        """Write ``parts`` with the loop's turn: the responses completed in it go out together, their
        clients woken once for them rather than once for each while the server makes the next (as
        http2.py writes h2's frames); or at once past WRITE_AT_ONCE bytes, so that a transport that
        fills up is noticed (``write_paused``)."""
        if self.lost or self.ending or self.transport is None:
            return
        self.unwritten += parts
        self.unwritten_bytes += sum(map(len, parts))
        if self.unwritten_bytes >= WRITE_AT_ONCE:
            self.flush()
        elif not self.flush_scheduled:
            self.flush_scheduled = True
            self.loop.call_soon(self.flush, context=WRITES)

    def flush(self) -> None:
        """Hand what was written to the transport."""
        self.flush_scheduled = False
        data, self.unwritten, self.unwritten_bytes = self.unwritten, [], 0
        if data and not self.lost and self.transport is not None and not self.transport.is_closing():
            self.transport.writelines(data)

    async def drain(self) -> None:
        """Wait while the transport's buffer is full (until the client reads, or leaves)."""
        if self.write_paused and not self.lost:
            waiter = self.loop.create_future()
            self.drain_waiters.append(waiter)
            await waiter

    def wake_writers(self) -> None:
        waiters, self.drain_waiters = self.drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # --- the connection's state ------------------------------------------------------------------
    def update_reading(self) -> None:
        """Pause reading while too much waits for the application, resume when it has taken it."""
        if self.transport is None or self.lost:
            return
        pause = self.buffered > HIGH_WATER or len(self.pipeline) >= MAX_PIPELINE
        if pause != self.reading_paused:
            self.reading_paused = pause
            if pause:
                self.transport.pause_reading()
            else:
                self.transport.resume_reading()

    def refuse(self, code: int) -> None:
        """Answer as Go's server does a request it cannot read, and close; after the current request."""
        self.discarding = True
        if self.current is not None:
            self.refusal = code
            return
        self.refusal = None
        self.write(go_error(code))
        self.close()

    def close(self) -> None:
        """Close once what was written is sent; what the client still sends meanwhile is read and
        dropped for a moment (closing on unread data would reset the connection, losing the answer)."""
        self.discarding = True
        if self.ending or self.lost or self.transport is None or self.transport.is_closing():
            return
        self.flush()
        self.ending = True
        if self.reading_paused:
            self.reading_paused = False
            self.transport.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.linger_timer = self.loop.call_later(LINGER, self.transport.close)
        else:
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None and not self.lost:
            self.transport.abort()

    def arm_idle_timer(self, seconds: float | None = None) -> None:
        """Close the connection if nothing is in flight ``seconds`` from now (the keep-alive timeout
        by default). Armed and disarmed twice a request, the deadline is a number: the timer is made
        anew only when it would fire too late, and one that fires early is set again for the deadline."""
        deadline = self.loop.time() + (seconds or self.keep_alive_timeout)
        self.idle_deadline = deadline
        timer = self.idle_timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self.idle_timer = self.loop.call_at(deadline, self.idle_timeout)

    def cancel_idle_timer(self) -> None:
        self.idle_deadline = None  # the timer, if it fires, finds nothing due

    def idle_timeout(self) -> None:
        self.idle_timer = None
        deadline = self.idle_deadline
        if deadline is None:
            return
        if deadline > self.loop.time():  # armed again since this timer was set: wait for that deadline
            self.idle_timer = self.loop.call_at(deadline, self.idle_timeout)
        elif self.current is None and self.transport is not None:
            self.flush()
            self.transport.close()

    async def shutdown(self) -> None:
        """Take no more requests; close once the current one (if any) is done."""
        self.closing = True
        if self.current is None and self.transport is not None:
            self.flush()
            self.transport.close()
        await self.closed


class Request(Followed):
    """One request: its ``receive`` and ``send``, its body as it arrives, its response as it goes out."""

    __slots__ = (
        "chunks",
        "complete",
        "conn",
        "continue_sent",
        "disconnected",
        "expect_continue",
        "final_sent",
        "finished",
        "follower",
        "framing",
        "head",
        "head_request",
        "keep_alive",
        "length",
        "response_complete",
        "scope",
        "sent",
        "started",
        "status",
        "version",
        "waiter",
    )

    def __init__(self, conn: Http1Protocol, scope: dict[str, Any], expect_continue: bool) -> None:
        self.conn = conn
        self.scope = scope
        self.version: str = scope["http_version"]
        self.head_request = scope["method"] == "HEAD"
        self.keep_alive = conn.parser.should_keep_alive() and not conn.closing
        self.expect_continue = expect_continue
        self.chunks: list[bytes] = []
        self.complete = False  # the whole body has arrived
        self.final_sent = False  # the application has been told so
        self.disconnected = False
        self.finished = False  # the application is done
        self.continue_sent = False
        self.waiter: asyncio.Future[None] | None = None
        self.started = self.response_complete = False
        self.status = 0
        self.head: bytearray | None = None  # the response's head, until it is written
        self.length: int | None = None  # the response's Content-Length
        self.framing = NO_BODY
        self.sent = 0
        self.follower: tuple[Arrived, Gone] | None = None
        extensions = scope["extensions"]
        extensions[WRITE_NOW] = self.write_now
        extensions[FOLLOW_BODY] = self.follow

    # --- receive ---------------------------------------------------------------------------------
    async def receive(self) -> Message:
        while True:
            if self.has_body():
                body, more = self.take_body()
                return {"type": "http.request", "body": body, "more_body": more}
            if self.disconnected or self.finished:
                return {"type": "http.disconnect"}
            self.continue_if_expected()
            self.waiter = self.conn.loop.create_future()
            await self.waiter

    def feed(self) -> None:
        """Tell the follower what ``receive`` would say now: the body so far, or the client's leaving."""
        assert self.follower is not None
        arrived, gone = self.follower
        if self.has_body():
            arrived(*self.take_body())
        if self.disconnected:
            self.follower = None
            gone()
        elif not self.complete:
            self.continue_if_expected()

    def has_body(self) -> bool:
        """Body bytes, or its end, not yet handed to the application."""
        return bool(self.chunks) or (self.complete and not self.final_sent)

    def continue_if_expected(self) -> None:
        """``Expect: 100-continue`` is answered when the application waits for the body."""
        if self.expect_continue and not self.continue_sent and not self.started:
            self.continue_sent = True
            self.conn.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def take_body(self) -> tuple[bytes, bool]:
        body = b"".join(self.chunks) if len(self.chunks) != 1 else self.chunks[0]
        self.chunks = []
        conn = self.conn
        conn.buffered -= len(body)
        if conn.reading_paused:
            conn.update_reading()
        self.final_sent = self.complete
        return body, not self.complete

    def wake(self) -> None:
        if self.follower is not None:
            self.feed()
            return
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def drop_body(self) -> int:
        """Forget the body not taken; how many bytes that was."""
        size = sum(map(len, self.chunks))
        self.chunks = []
        return size

    def disconnect(self) -> None:
        self.disconnected = True
        self.wake()

    # --- send ------------------------------------------------------------------------------------
    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.body":
            if not self.started or self.response_complete:
                raise RuntimeError(f"{kind} {'before the response start' if not self.started else 'after its end'}")
            more = message.get("more_body", False)
            self.write_body(message.get("body", b""), more)
            if more and self.conn.write_paused:
                await self.conn.drain()
        elif kind == "http.response.start":
            if self.started:
                raise RuntimeError("the response has already started")
            self.start(message["status"], message.get("headers", ()))
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r} in an HTTP request")

    def write_now(self, make: Callable[[], bytes]) -> bool:
        """A streamed response's next chunk, ``make()``, written at once if the connection takes it
        without waiting (the response started and goes on, its client is there and reading);
        whether it was (if not, the application sends it as a message)."""
        if not self.started or self.response_complete or self.disconnected or self.conn.write_paused:
            return False
        self.write_body(make(), True)
        return True

    def start(self, status: int, headers: Any) -> None:
        """Make the response's head; it goes out with the first body message (as ASGI has it), or, for a
        response without a Content-Length, at the next turn of the loop if none comes by then (a watch's
        head must not wait for its first event)."""
        self.started = True
        self.status = status
        line = STATUS_LINES.get(status) if self.version == "1.1" else None
        head = bytearray(line or status_line(status, self.version.encode()))
        date = False
        bodyless = status in NO_BODY_STATUSES or status < 200
        for header in headers:
            name: bytes = header[0]  # typed: the comparisons below are C's, not Python's
            value: bytes = header[1]
            if bodyless and name in BODY_HEADERS:
                continue  # Go's server drops them from a response that cannot have a body
            if name == b"content-length":
                if not value.isdigit():
                    raise RuntimeError(f"invalid Content-Length {value!r}")
                self.length = int(value)
            elif name == b"connection":
                if b"close" in value.lower():
                    self.keep_alive = False
                continue  # written below, as the connection's fate requires
            elif name == b"transfer-encoding":
                continue  # the server frames the body
            elif name == b"date":
                date = True
            if CR in value or LF in value:  # Go writes them as spaces
                value = value.replace(b"\r", b" ").replace(b"\n", b" ")
            head += field_start(name)  # appended in place: no intermediate bytes per header
            head += value
            head += b"\r\n"
        if not date:
            head += b"Date: " + http_date() + b"\r\n"
        self.head = head
        if self.length is None:  # streamed, maybe slowly: the head must not wait (a watch's first event)
            self.conn.loop.call_soon(self.flush_head)

    def flush_head(self) -> None:
        if self.head is not None and not self.disconnected:
            self.conn.write(self.finish_head(None))

    def finish_head(self, size: int | None) -> bytes:
        """The head with its framing: ``size`` is the whole body's when known (None: streamed)."""
        head, self.head = self.head, None
        assert head is not None
        status = self.status
        if self.head_request or status in NO_BODY_STATUSES or status < 200:
            self.framing = NO_BODY
            if self.length is None and size is not None and self.head_request:
                head += b"Content-Length: %d\r\n" % size
        elif self.length is not None:
            self.framing = LENGTH
        elif size is not None:
            self.framing, self.length = LENGTH, size
            head += b"Content-Length: %d\r\n" % size
        elif self.version == "1.1":
            self.framing = CHUNKED
            head += b"Transfer-Encoding: chunked\r\n"
        else:
            self.framing, self.keep_alive = UNTIL_CLOSE, False
        if self.conn.closing:
            self.keep_alive = False
        if not self.keep_alive:
            head += b"Connection: close\r\n\r\n"
        elif self.version == "1.0":
            head += b"Connection: keep-alive\r\n\r\n"
        else:
            head += b"\r\n"
        return bytes(head)

    def write_body(self, body: bytes, more: bool) -> None:
        if self.disconnected:
            self.response_complete = not more
            return
        parts: list[bytes] = [] if self.head is None else [self.finish_head(None if more else len(body))]
        framing = self.framing
        if framing == CHUNKED:
            if body:
                parts += (b"%x\r\n" % len(body), body, b"\r\n")
            if not more:
                parts.append(b"0\r\n\r\n")
        elif framing == LENGTH:
            parts.append(self.counted(body, more))
        elif framing == UNTIL_CLOSE:
            parts.append(body)
        if not more:
            self.response_complete = True
        self.conn.write_parts(parts)

    def counted(self, body: bytes, more: bool) -> bytes:
        """``body`` within the declared Content-Length; a response that breaks it ends the connection."""
        assert self.length is not None
        self.sent += len(body)
        if self.sent > self.length:
            log.error("the response to %s %s is longer than its Content-Length", self.scope["method"], self.path)
            self.keep_alive = False
            return body[: len(body) - (self.sent - self.length)]
        if not more and self.sent < self.length:
            self.keep_alive = False
        return body

    @property
    def path(self) -> str:
        return self.scope["path"]

    # --- the end ---------------------------------------------------------------------------------
    def done(self, task: asyncio.Task[None]) -> None:
        """The application returned (or failed): finish the response, and go on with the connection."""
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("error serving %s %s", self.scope["method"], self.path, exc_info=error)
        if not self.disconnected and not self.response_complete:
            self.keep_alive = False
            if not self.started:  # nothing was said: a 500, as Go's server answers a panicking handler's
                self.conn.write(go_error(500))
            elif self.head is not None:
                self.conn.write(self.finish_head(None))
        self.finished = True
        self.follower = None
        self.wake()
        if self.conn.access_log is not None:
            self.log_access()
        self.conn.request_done(self)

    def log_access(self) -> None:
        client = self.conn.client
        who = f"{client[0]}:{client[1]}" if client else "-"
        query = self.scope["query_string"]
        target = self.path + ("?" + query.decode("latin-1") if query else "")
        assert self.conn.access_log is not None
        self.conn.access_log.info(
            '%s "%s %s HTTP/%s" %d', who, self.scope["method"], target, self.version, self.status or 500
        )
