"""HTTP/2 connections serving an ASGI 3 app, on h2's protocol state machine.

One ``Http2Protocol`` per connection (created by the TLS side once ALPN chose "h2"); one ``_Stream``
per request, whose app task runs in a copy of the connection's context (``protokube.gateway.lanes``).
Settings as kube-apiserver's (k8s.io/apiserver ``SecureServingInfo.Serve``): 100 concurrent streams
(its default since CVE-2023-44487), the header list limit it is given (MaxHeaderBytes, 1 MiB).

Bounded against hostile clients:

- Request bodies are acknowledged (WINDOW_UPDATE) only as the app reads them, so a stream buffers at
  most its window. Responses are written within the peer's windows; ``send`` waits for its
  WINDOW_UPDATEs, and for the transport to drain when it is full.
- While the transport's buffer is full, the connection is not read: what h2 answers by itself (PING
  and SETTINGS acknowledgements) cannot pile up behind a peer that does not read.
- Rapid reset: at most ``MAX_CONCURRENT_STREAMS`` app tasks run at once, streams reset by the client
  included until their task ends; more requests wait for a slot, and a stream reset before its task
  started never starts one. More than ``MAX_QUEUED_HANDLERS`` waiting requests (which only streams
  opened and reset faster than their tasks end can make) end the connection with ENHANCE_YOUR_CALM,
  as golang.org/x/net/http2 does.
- Any protocol error ends the connection with the GOAWAY h2 chose, without a traceback (a client
  whose preface is not HTTP/2's is closed on without one, as Go does).

A stream's scope offers the ``protokube.follow_body`` extension (follow.py), as http1.py's requests
do: the body handed over as it arrives and a reset or lost stream told, without ``receive``.

``shutdown`` is graceful: a GOAWAY naming the last stream, streams opened after it refused, the
streams in flight finished. A connection without streams for ``IDLE_TIMEOUT`` is closed (GOAWAY).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import unquote

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from h2.errors import ErrorCodes
from h2.settings import SettingCodes
from hyperframe.frame import GoAwayFrame

from protokube.gateway.serving.follow import FOLLOW_BODY, Arrived, Followed, Gone

log = logging.getLogger(__name__)

MAX_CONCURRENT_STREAMS = 100  # k8s.io/apiserver's default (secure_serving.go, since CVE-2023-44487)
MAX_QUEUED_HANDLERS = 4 * MAX_CONCURRENT_STREAMS  # golang.org/x/net/http2: beyond, ENHANCE_YOUR_CALM
STREAM_WINDOW = 1 << 20  # what one request body may have in flight before the app reads it
CONNECTION_WINDOW = 16 << 20  # and all of a connection's
IDLE_TIMEOUT = 75.0  # seconds without a stream before the connection is closed
HEADER_FIELD_OVERHEAD = 32  # RFC 9113 §6.5.2: a header list's size counts 32 octets per field
# h2 refuses a header block whose decoded size exceeds its decoder's limit by ending the connection;
# the decoder gets this many times our limit, so that a list a little too large gets its 431. (The
# encoded block is bounded by h2 too: 64 frames of the default 16 KiB, which we keep, since h2 takes
# a larger frame size as agreed only from the next read after the client's acknowledgement.)
DECODED_HEADERS_FACTOR = 4
HEADERS_TOO_LARGE = b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"  # as Go's
WRITE_NOW = 1 << 16  # response bytes given to h2 that are written at once rather than with the iteration's
CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
FORBIDDEN_IN_VALUES = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # control characters but HTAB (Go's httpguts)

ASGIApp = Callable[..., Any]
Message = dict[str, Any]


class _Stream(Followed):
    """One request: its scope, its body as it arrives, and the app's ends of ``receive`` and ``send``."""

    __slots__ = (
        "answered",
        "body",
        "body_done",
        "closed",
        "connection",
        "ended",
        "follower",
        "id",
        "reader",
        "scope",
        "started",
        "task",
        "writer",
    )

    def __init__(self, connection: Http2Protocol, stream_id: int, scope: dict[str, Any], ended: bool) -> None:
        self.connection = connection
        self.id = stream_id
        self.scope = scope
        self.body: deque[tuple[bytes, int]] = deque()  # chunks and their flow-controlled sizes
        self.ended = ended  # the client has sent all of the body
        self.body_done = False  # the app has received all of it
        self.closed = False  # answered, reset or the connection lost: receive says disconnect
        self.answered = False  # the response's last frame is with h2
        self.started = False  # the app has sent http.response.start
        self.reader: asyncio.Future[None] | None = None
        self.writer: asyncio.Future[None] | None = None
        self.task: asyncio.Task[None] | None = None
        self.follower: tuple[Arrived, Gone] | None = None
        scope["extensions"][FOLLOW_BODY] = self.follow

    async def receive(self) -> Message:
        """The next chunk of the body (acknowledged to the client now), then ``http.disconnect``
        once the response is complete, the stream reset or the connection lost."""
        while not (self.closed or self.has_body()):
            self.reader = self.connection.loop.create_future()
            await self.reader
        if self.closed:
            return {"type": "http.disconnect"}
        data, more = self.take_body()
        return {"type": "http.request", "body": data, "more_body": more}

    def feed(self) -> None:
        assert self.follower is not None
        arrived, gone = self.follower
        while not self.closed and self.has_body():
            arrived(*self.take_body())
        if self.closed:
            self.follower = None
            if not self.answered:
                gone()

    def has_body(self) -> bool:
        return bool(self.body) or (self.ended and not self.body_done)

    def take_body(self) -> tuple[bytes, bool]:
        """The next chunk and whether more comes; acknowledged to the client now."""
        if self.body:
            data, size = self.body.popleft()
            self.connection.consumed(self.id, size)
            more = bool(self.body) or not self.ended
        else:
            data, more = b"", False
        self.body_done = not more
        return data, more

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.started:
                raise RuntimeError("the response has already started")
            head = response_head(message["status"], message.get("headers", ()))
            self.started = True
            self.connection.start(self, head)  # at once: a watch's headers come before its first event
        elif kind == "http.response.body":
            if not self.started:
                raise RuntimeError("http.response.body before http.response.start")
            body = b"" if self.scope["method"] == "HEAD" else message.get("body", b"")
            await self.connection.respond(self, body, not message.get("more_body", False))
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    def wake(self) -> None:
        """Wake a ``receive`` or ``send`` waiting for something to change (or tell the follower)."""
        if self.follower is not None:
            self.feed()
        for waiter in (self.reader, self.writer):
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


class Http2Protocol(asyncio.Protocol):
    """A server's HTTP/2 connection (see the module's docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        scheme: str,
        server: tuple[str, int] | None,
        client: tuple[str, int] | None,
        tls: dict[str, Any] | None,
        context: contextvars.Context,
        max_header_list_size: int,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.app = app
        self.loop = asyncio.get_running_loop()
        self._scheme = scheme
        self._server = server
        self._client = client
        self._extensions = {"tls": tls} if tls is not None else {}
        self._context = context
        self._max_header_list_size = max_header_list_size
        self._idle_timeout = idle_timeout
        config = h2.config.H2Configuration(
            client_side=False,
            header_encoding=None,
            validate_outbound_headers=False,  # response_head makes them valid, in one pass
            normalize_outbound_headers=False,
        )
        self._h2 = h2.connection.H2Connection(config)
        self._h2.decoder.max_header_list_size = max_header_list_size * DECODED_HEADERS_FACTOR
        self.transport: asyncio.Transport | None = None
        self._streams: dict[int, _Stream] = {}  # open streams, by id
        self._queue: deque[_Stream] = deque()  # requests waiting for a task slot
        self._tasks: set[asyncio.Task[None]] = set()
        self._blocked: set[_Stream] = set()  # streams whose send waits for a window
        self._drain: list[asyncio.Future[None]] = []  # sends waiting for the transport to drain
        self._quiet: asyncio.Future[None] | None = None  # shutdown waiting for the last task
        self._paused = False
        self._going_away = False  # shutdown's GOAWAY sent: no new streams
        self._closed = False
        self._idle_since = time.monotonic()
        self._idle_timer: asyncio.TimerHandle | None = None
        self._unwritten = 0  # response bytes given to h2 since the last write
        self._write_scheduled = False
        self._write_context = contextvars.Context()  # writes run in no request's lane

    # -- the transport's callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses
        self._h2.initiate_connection()
        self._h2.update_settings(
            {
                SettingCodes.MAX_CONCURRENT_STREAMS: MAX_CONCURRENT_STREAMS,
                SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
                SettingCodes.MAX_HEADER_LIST_SIZE: self._max_header_list_size,
                SettingCodes.ENABLE_PUSH: 0,
            }
        )
        self._h2.increment_flow_control_window(CONNECTION_WINDOW - self._h2.outbound_flow_control_window)
        self._flush()
        self._idle_timer = self.loop.call_later(self._idle_timeout, self._check_idle)

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        try:
            events = self._h2.receive_data(data)
            for event in events:
                handler = _EVENTS.get(type(event))
                if handler is not None:
                    handler(self, event)
                if self._closed:
                    return
        except h2.exceptions.ProtocolError as error:  # h2 has written its GOAWAY
            log.debug("HTTP/2 connection from %s ended: %s", self._client, error)
            self._close()
            return
        self._start_queued()
        self._write()

    def eof_received(self) -> None:
        """The client will send nothing more: the transport closes (returning None says so)."""

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._drop_streams()
        self._resume_senders()
        self._wake_shutdown()

    def pause_writing(self) -> None:
        self._paused = True
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self._paused = False
        if self.transport is not None and not self._closed:
            self.transport.resume_reading()
        self._resume_senders()

    async def shutdown(self) -> None:
        """GOAWAY (streams the client opens from now on are refused), wait for the streams in
        flight, then close. Cancelled (a deadline), it closes at once."""
        if self._closed or self.transport is None:
            return
        if not self._going_away:
            self._going_away = True
            self._write()
            goaway = GoAwayFrame(0, last_stream_id=self._h2.highest_inbound_stream_id, error_code=ErrorCodes.NO_ERROR)
            self.transport.write(goaway.serialize())  # h2's own GOAWAY would end every stream with it
        try:
            while self._busy() and not self._closed:
                self._quiet = self.loop.create_future()
                await self._quiet
        finally:
            self._terminate(ErrorCodes.NO_ERROR)

    # -- what the streams call

    def consumed(self, stream_id: int, size: int) -> None:
        """The app has read ``size`` flow-controlled bytes of a stream: the client may send more."""
        if size and not self._closed:
            self._h2.acknowledge_received_data(size, stream_id)
            self._flush()

    def start(self, stream: _Stream, head: list[tuple[bytes, bytes]]) -> None:
        """The response's headers (ignored, as every send, once nobody listens)."""
        if not stream.closed:
            self._h2.send_headers(stream.id, head)
            self._flush()

    async def respond(self, stream: _Stream, body: bytes, end: bool) -> None:
        """A body message, written within the windows."""
        if stream.closed:
            return
        if body:
            await self._send_body(stream, memoryview(body), end)
        elif end:
            self._h2.send_data(stream.id, b"", end_stream=True)
            self._complete(stream)
        else:
            self._flush()

    # -- requests

    def _on_request(self, event: h2.events.RequestReceived) -> None:
        stream_id = event.stream_id
        headers = event.headers or []
        if self._going_away:
            self._h2.reset_stream(stream_id, ErrorCodes.REFUSED_STREAM)
        elif sum(len(name) + len(value) for name, value in headers) + HEADER_FIELD_OVERHEAD * len(headers) > (
            self._max_header_list_size
        ):
            self._answer_headers_too_large(stream_id, ended=event.stream_ended is not None)
        else:
            scope = self._scope(headers)
            if scope is None:
                self._h2.reset_stream(stream_id, ErrorCodes.PROTOCOL_ERROR)
                return
            stream = _Stream(self, stream_id, scope, ended=event.stream_ended is not None)
            self._streams[stream_id] = stream
            self._queue.append(stream)
            if len(self._queue) > MAX_QUEUED_HANDLERS:
                log.warning("HTTP/2 client %s opens streams faster than they end: ENHANCE_YOUR_CALM", self._client)
                self._terminate(ErrorCodes.ENHANCE_YOUR_CALM)

    def _scope(self, headers: list[tuple[bytes, bytes]]) -> dict[str, Any] | None:
        """The ASGI scope of a request's headers (h2 has validated them); None for a CONNECT, which
        has no :path and is served nowhere here."""
        method = path = authority = None
        fields: list[tuple[bytes, bytes]] = []
        has_host = False
        for name, value in headers:
            if name.startswith(b":"):
                if name == b":method":
                    method = value
                elif name == b":path":
                    path = value
                elif name == b":authority":
                    authority = value
            else:
                has_host = has_host or name == b"host"
                fields.append((name, value))
        if method is None or not path:
            return None
        if authority is not None and not has_host:
            fields.insert(0, (b"host", authority))
        raw_path, _, query = path.partition(b"?")
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "2",
            "method": method.decode("latin-1"),
            "scheme": self._scheme,
            "path": unquote(raw_path.decode("latin-1")),
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            "headers": fields,
            "client": self._client,
            "server": self._server,
            "extensions": dict(self._extensions),  # a stream adds its own (FOLLOW_BODY)
        }

    def _answer_headers_too_large(self, stream_id: int, ended: bool) -> None:
        """Go's 431, without the app; a body still coming is declined (RST_STREAM NO_ERROR)."""
        head = [
            (b":status", b"431"),
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", b"%d" % len(HEADERS_TOO_LARGE)),
        ]
        self._h2.send_headers(stream_id, head)
        self._h2.send_data(stream_id, HEADERS_TOO_LARGE, end_stream=True)
        if not ended:
            self._h2.reset_stream(stream_id, ErrorCodes.NO_ERROR)

    def _on_data(self, event: h2.events.DataReceived) -> None:
        stream = self._streams.get(event.stream_id)
        if stream is None:  # a stream answered without the app: its body is dropped
            self._h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            return
        stream.body.append((event.data or b"", event.flow_controlled_length))
        if event.stream_ended is not None:
            stream.ended = True
        stream.wake()

    def _on_end(self, event: h2.events.StreamEnded) -> None:
        stream = self._streams.get(event.stream_id)
        if stream is not None:
            stream.ended = True
            stream.wake()

    def _on_reset(self, event: h2.events.StreamReset) -> None:
        stream = self._streams.get(event.stream_id)
        if stream is not None:
            self._forget(stream)

    def _on_window(self, event: h2.events.WindowUpdated) -> None:
        if event.stream_id:
            stream = self._streams.get(event.stream_id)
            if stream is not None:
                stream.wake()
        else:
            self._wake_blocked()

    def _on_settings(self, event: h2.events.RemoteSettingsChanged) -> None:
        self._wake_blocked()  # the initial window or the frame size may have changed

    def _on_settings_acknowledged(self, event: h2.events.SettingsAcknowledged) -> None:
        # h2 sets its decoder's limit to the advertised one when the client acknowledges it
        self._h2.decoder.max_header_list_size = self._max_header_list_size * DECODED_HEADERS_FACTOR

    def _on_goaway(self, event: h2.events.ConnectionTerminated) -> None:
        self._close()  # h2 sends nothing once it has received a GOAWAY: what is in flight is lost

    # -- app tasks

    def _start_queued(self) -> None:
        """Start the app for waiting requests while fewer than MAX_CONCURRENT_STREAMS tasks run."""
        while self._queue and len(self._tasks) < MAX_CONCURRENT_STREAMS:
            stream = self._queue.popleft()
            if not stream.closed:
                stream.task = self.loop.create_task(self._run(stream), context=self._context.copy())
                self._tasks.add(stream.task)

    async def _run(self, stream: _Stream) -> None:
        try:
            await self.app(stream.scope, stream.receive, stream.send)
        except Exception:
            log.exception("error in the ASGI app serving %s %s", stream.scope["method"], stream.scope["path"])
        finally:
            if not stream.closed:  # failed, or returned without completing its response
                self._fail(stream)
            assert stream.task is not None
            self._tasks.discard(stream.task)
            self._ended_task()

    def _ended_task(self) -> None:
        if self._closed:
            return
        self._start_queued()
        self._flush()
        if not self._busy():
            self._idle_since = time.monotonic()
            self._wake_shutdown()

    def _fail(self, stream: _Stream) -> None:
        """A 500 if the response has not started, else RST_STREAM INTERNAL_ERROR."""
        if self._closed:
            return
        if stream.started:
            self._h2.reset_stream(stream.id, ErrorCodes.INTERNAL_ERROR)
            self._forget(stream)
            self._flush()
        else:
            self._h2.send_headers(stream.id, [(b":status", b"500"), (b"content-length", b"0")], end_stream=True)
            self._complete(stream)

    def _busy(self) -> bool:
        return bool(self._tasks or self._queue)

    # -- responses

    async def _send_body(self, stream: _Stream, body: memoryview, end: bool) -> None:
        """Send ``body`` in frames the windows allow, waiting for WINDOW_UPDATEs and for the
        transport to drain."""
        while not stream.closed:
            try:
                size = min(self._h2.local_flow_control_window(stream.id), self._h2.max_outbound_frame_size)
            except h2.exceptions.StreamClosedError:
                self._forget(stream)
                return
            if size <= 0:
                await self._wait_window(stream)
                continue
            last = size >= len(body)
            self._h2.send_data(stream.id, body if last else body[:size], end_stream=end and last)
            self._unwritten += min(size, len(body))
            if last:
                if end:
                    self._complete(stream)
                else:
                    self._flush()
                break
            body = body[size:]
            self._flush()
            if self._paused:
                await self._drained()
        if self._paused and not stream.closed:
            await self._drained()

    async def _wait_window(self, stream: _Stream) -> None:
        stream.writer = self.loop.create_future()
        self._blocked.add(stream)
        try:
            await stream.writer
        finally:
            self._blocked.discard(stream)
            stream.writer = None

    async def _drained(self) -> None:
        waiter = self.loop.create_future()
        self._drain.append(waiter)
        await waiter

    def _complete(self, stream: _Stream) -> None:
        """The response's last frame is with h2: a body still coming is declined (RFC 9113 §8.1)."""
        if not stream.ended:
            self._h2.reset_stream(stream.id, ErrorCodes.NO_ERROR)
        stream.answered = True
        self._forget(stream)
        self._flush()

    def _forget(self, stream: _Stream) -> None:
        """The stream is over: what it buffered goes back to the connection's window, and its app
        hears ``http.disconnect``."""
        stream.closed = True
        self._streams.pop(stream.id, None)
        unread = sum(size for _, size in stream.body)
        stream.body.clear()
        if unread and not self._closed:
            self._h2.acknowledge_received_data(unread, stream.id)
        stream.wake()

    def _wake_blocked(self) -> None:
        for stream in self._blocked:
            stream.wake()

    def _resume_senders(self) -> None:
        waiters, self._drain = self._drain, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _wake_shutdown(self) -> None:
        if self._quiet is not None and not self._quiet.done():
            self._quiet.set_result(None)

    # -- the connection

    def _flush(self) -> None:
        """Write what h2 has to send with the loop's iteration (the responses completed in it go out
        in one write), or at once past WRITE_NOW bytes (so that a full transport is noticed)."""
        if self._unwritten >= WRITE_NOW:
            self._write()
        elif not self._write_scheduled:
            self._write_scheduled = True
            self.loop.call_soon(self._write, context=self._write_context)

    def _write(self) -> None:
        self._write_scheduled = False
        self._unwritten = 0
        data = self._h2.data_to_send()
        if data and self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _check_idle(self) -> None:
        idle = 0.0 if self._busy() else time.monotonic() - self._idle_since
        if idle >= self._idle_timeout:
            self._terminate(ErrorCodes.NO_ERROR)
        elif not self._closed:
            self._idle_timer = self.loop.call_later(self._idle_timeout - idle, self._check_idle)

    def _terminate(self, error_code: ErrorCodes) -> None:
        """GOAWAY with ``error_code`` and close."""
        if not self._closed:
            self._h2.close_connection(error_code)
            self._close()

    def _close(self) -> None:
        """Write what h2 has left (its GOAWAY) and close; every stream hears ``http.disconnect``."""
        if self._closed:
            return
        self._write()
        self._closed = True
        if self.transport is not None:
            self.transport.close()
        self._drop_streams()
        self._resume_senders()
        self._wake_shutdown()

    def _drop_streams(self) -> None:
        streams = list(self._streams.values())
        self._streams.clear()
        self._queue.clear()
        for stream in streams:
            stream.closed = True
            stream.body.clear()
            stream.wake()


def response_head(status: int, headers: Any) -> list[tuple[bytes, bytes]]:
    """:status and the app's headers as HTTP/2 carries them: names lowercased, connection-specific
    fields dropped (RFC 9113 §8.2.2), and fields whose value has control characters dropped, as Go's
    http2 server drops them."""
    head = [(b":status", b"%d" % status)]
    for name, value in headers:
        lowered = name.lower()
        if lowered not in CONNECTION_SPECIFIC and not FORBIDDEN_IN_VALUES.search(value):
            head.append((lowered, value))
    return head


_EVENTS: dict[type[h2.events.Event], Callable[[Http2Protocol, Any], None]] = {
    h2.events.RequestReceived: Http2Protocol._on_request,
    h2.events.DataReceived: Http2Protocol._on_data,
    h2.events.StreamEnded: Http2Protocol._on_end,
    h2.events.StreamReset: Http2Protocol._on_reset,
    h2.events.WindowUpdated: Http2Protocol._on_window,
    h2.events.RemoteSettingsChanged: Http2Protocol._on_settings,
    h2.events.SettingsAcknowledged: Http2Protocol._on_settings_acknowledged,
    h2.events.ConnectionTerminated: Http2Protocol._on_goaway,
}
