"""gateway/serving/http2.py driven by real HTTP/2 clients over loopback sockets: h2's client connection
(every frame under the test's control), raw frames where h2's client cannot follow (a graceful
GOAWAY, garbage), and httpx over TLS.

Each test runs its scenario on the gateway's loop (LaneLoop, uvloop's) with a small ASGI app.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from h2.errors import ErrorCodes
from h2.settings import SettingCodes
from hpack import Decoder
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
)

from protokube.gateway.lanes import LaneLoop
from protokube.gateway.serving import http2
from protokube.gateway.serving.follow import FOLLOW_BODY
from protokube.gateway.serving.http2 import Http2Protocol
from tests.gateway.helpers import self_signed_pem

MiB = 1 << 20
HEAD = [(b":scheme", b"http"), (b":authority", b"example.test")]
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
Scope = dict[str, Any]
App = Callable[[Scope, Any, Any], Awaitable[None]]


def run(scenario: Callable[[], Awaitable[None]], timeout: float = 60) -> None:
    with asyncio.Runner(loop_factory=LaneLoop) as runner:
        runner.run(asyncio.wait_for(scenario(), timeout))


class Server:
    """A loopback listener serving ``app`` with Http2Protocol (no TLS unless given a context)."""

    def __init__(self, app: App, **options: Any) -> None:
        self.app = app
        self.options = options
        self.protocols: list[Http2Protocol] = []
        self.port = 0

    def protocol(self) -> Http2Protocol:
        protocol = Http2Protocol(
            self.app,
            scheme="https" if self.options.get("ssl") else "http",
            server=("127.0.0.1", self.port),
            client=("127.0.0.1", 1),
            tls={"client_cert_chain": []} if self.options.get("ssl") else None,
            context=contextvars.copy_context(),
            max_header_list_size=MiB,
            idle_timeout=self.options.get("idle_timeout", http2.IDLE_TIMEOUT),
        )
        self.protocols.append(protocol)
        return protocol


@asynccontextmanager
async def serving(app: App, **options: Any) -> AsyncIterator[Server]:
    server = Server(app, **options)
    listener = await asyncio.get_running_loop().create_server(server.protocol, "127.0.0.1", 0, ssl=options.get("ssl"))
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        for protocol in server.protocols:
            protocol.connection_lost(None)


class Client:
    """h2's client connection over a socket: requests sent, events collected as they arrive."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
        self.events: list[h2.events.Event] = []
        self.auto_acknowledge = True

    @classmethod
    async def connect(cls, port: int, settings: dict[SettingCodes, int] | None = None) -> Client:
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        client.h2.initiate_connection()
        if settings:
            client.h2.update_settings(settings)
        await client.flush()
        await client.until(lambda: any(isinstance(e, h2.events.SettingsAcknowledged) for e in client.events))
        return client

    async def flush(self) -> None:
        self.writer.write(self.h2.data_to_send())
        await self.writer.drain()

    async def request(
        self, path: str = "/", method: str = "GET", body: bytes | None = None, extra: list | None = None
    ) -> int:
        stream_id = self.h2.get_next_available_stream_id()
        headers = [(b":method", method.encode()), (b":scheme", b"http"), (b":authority", b"example.test:6443")]
        headers += [(b":path", path.encode()), *(extra or [])]
        self.h2.send_headers(stream_id, headers, end_stream=body is None)
        if body is not None:
            self.h2.send_data(stream_id, body, end_stream=True)
        await self.flush()
        return stream_id

    async def read(self, timeout: float = 10) -> bool:
        """Read once; False at EOF."""
        data = await asyncio.wait_for(self.reader.read(1 << 16), timeout)
        if not data:
            return False
        for event in self.h2.receive_data(data):
            self.events.append(event)
            if isinstance(event, h2.events.DataReceived) and self.auto_acknowledge:
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        await self.flush()
        return True

    async def until(self, done: Callable[[], bool], timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if not await self.read(max(0.01, deadline - time.monotonic())):
                raise ConnectionError("the server closed the connection")

    async def response(self, stream_id: int) -> tuple[dict[bytes, bytes], bytes]:
        await self.until(lambda: self.ended(stream_id))
        headers: dict[bytes, bytes] = {}
        body = b""
        for event in self.events:
            if getattr(event, "stream_id", None) == stream_id:
                if isinstance(event, h2.events.ResponseReceived):
                    headers = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
        return headers, body

    def ended(self, stream_id: int) -> bool:
        return any(
            isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) and e.stream_id == stream_id
            for e in self.events
        )

    def reset_code(self, stream_id: int) -> int | None:
        for event in self.events:
            if isinstance(event, h2.events.StreamReset) and event.stream_id == stream_id:
                return event.error_code
        return None

    def close(self) -> None:
        self.writer.close()


async def raw_frames(reader: asyncio.StreamReader, timeout: float = 10, until_silent: bool = False) -> list[Frame]:
    """Every frame the server sends until it closes the connection (h2's client state machine
    stops at a GOAWAY, a graceful shutdown's frames come after it), or, ``until_silent``, until it
    has sent nothing for ``timeout`` seconds."""
    data = b""
    while True:
        try:
            chunk = await asyncio.wait_for(reader.read(1 << 16), timeout)
        except TimeoutError:
            if until_silent:
                break
            raise
        if not chunk:
            break
        data += chunk
    frames = []
    while data:
        frame, length = Frame.parse_frame_header(memoryview(data[:9]))
        frame.parse_body(memoryview(data[9 : 9 + length]))
        frames.append(frame)
        data = data[9 + length :]
    return frames


async def echo(scope: Scope, receive: Any, send: Any) -> None:
    """Answers with what it saw: method, path, query, headers, and the body's size and digest."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    seen = {
        "http_version": scope["http_version"],
        "method": scope["method"],
        "path": scope["path"],
        "raw_path": scope["raw_path"],
        "query": scope["query_string"],
        "root_path": scope["root_path"],
        "headers": scope["headers"],
        "scheme": scope["scheme"],
        "extensions": {name: value for name, value in scope["extensions"].items() if name != FOLLOW_BODY},
        "follows": FOLLOW_BODY in scope["extensions"],
    }
    digest = hashlib.sha256(body).hexdigest().encode()
    text = repr(seen).encode() + b"\n" + b"%d " % len(body) + digest
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": text})


async def ok(scope: Scope, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_get_scope_and_response() -> None:
    async def scenario() -> None:
        async with serving(echo) as server:
            client = await Client.connect(server.port)
            stream = await client.request("/api/v1/namespaces/a%2Fb/pods?watch=1&x=%20", extra=[(b"x-Trace", b"1")])
            headers, body = await client.response(stream)
            assert headers[b":status"] == b"200"
            assert headers[b"content-type"] == b"text/plain"
            seen = eval(body.split(b"\n")[0])
            assert seen["http_version"] == "2"
            assert seen["method"] == "GET"
            assert seen["path"] == "/api/v1/namespaces/a/b/pods"
            assert seen["raw_path"] == b"/api/v1/namespaces/a%2Fb/pods"
            assert seen["query"] == b"watch=1&x=%20"
            assert seen["root_path"] == ""
            assert seen["scheme"] == "http"
            assert seen["extensions"] == {}
            assert seen["follows"]
            assert seen["headers"][0] == (b"host", b"example.test:6443")  # from :authority
            assert (b"x-trace", b"1") in seen["headers"]  # h2 lowercases on the wire
            assert not any(name.startswith(b":") for name, _ in seen["headers"])
            # the connection serves more requests, several at once
            streams = [await client.request(f"/{i}") for i in range(20)]
            for i, stream in enumerate(streams):
                _, body = await client.response(stream)
                assert f"'path': '/{i}'".encode() in body
            client.close()

    run(scenario)


def test_a_large_body_is_acknowledged_as_the_app_reads_it() -> None:
    """The client can send a stream's window and no more until the app reads; then all of it."""
    reading = asyncio.Event()

    async def slow_reader(scope: Scope, receive: Any, send: Any) -> None:
        await reading.wait()
        await echo(scope, receive, send)

    async def scenario() -> None:
        async with serving(slow_reader) as server:
            client = await Client.connect(server.port)
            payload = bytes(range(256)) * (5 * MiB // 256)
            stream = client.h2.get_next_available_stream_id()
            client.h2.send_headers(stream, [*HEAD, (b":method", b"POST"), (b":path", b"/upload")])
            sent = 0

            async def send_what_the_windows_allow() -> None:
                nonlocal sent
                while (window := client.h2.local_flow_control_window(stream)) > 0 and sent < len(payload):
                    size = min(window, client.h2.max_outbound_frame_size, len(payload) - sent)
                    client.h2.send_data(stream, payload[sent : sent + size], end_stream=sent + size == len(payload))
                    sent += size
                await client.flush()

            await send_what_the_windows_allow()
            assert sent == http2.STREAM_WINDOW  # the server's stream window, as advertised
            await asyncio.sleep(0.3)  # the app has not read: no WINDOW_UPDATE for the stream
            with pytest.raises(TimeoutError):
                await client.read(timeout=0.2)
            assert not any(isinstance(e, h2.events.WindowUpdated) and e.stream_id == stream for e in client.events)
            assert client.h2.local_flow_control_window(stream) == 0

            reading.set()
            while sent < len(payload):
                await client.read()
                await send_what_the_windows_allow()
            _, body = await client.response(stream)
            assert body.endswith(b"%d " % len(payload) + hashlib.sha256(payload).hexdigest().encode())
            client.close()

    run(scenario)


def test_a_streamed_response_waits_for_the_clients_window() -> None:
    """100 chunks of 1,000 bytes to a client with a 4,096-byte stream window that acknowledges
    nothing: send blocks after the window; WINDOW_UPDATEs let the rest through."""
    chunks_sent = 0

    async def stream_chunks(scope: Scope, receive: Any, send: Any) -> None:
        nonlocal chunks_sent
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for i in range(100):
            await send({"type": "http.response.body", "body": bytes([i % 256]) * 1000, "more_body": True})
            chunks_sent += 1
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        async with serving(stream_chunks) as server:
            client = await Client.connect(server.port, {SettingCodes.INITIAL_WINDOW_SIZE: 4096})
            client.auto_acknowledge = False
            stream = await client.request("/watch")

            def received() -> int:
                return sum(len(e.data) for e in client.events if isinstance(e, h2.events.DataReceived))

            await client.until(lambda: received() == 4096)
            await asyncio.sleep(0.3)
            assert received() == 4096
            assert chunks_sent <= 5  # 4 chunks fit in the window, the 5th send waits
            client.h2.acknowledge_received_data(4096, stream)  # then every frame as it arrives
            client.auto_acknowledge = True
            await client.flush()
            _, body = await client.response(stream)
            assert body == b"".join(bytes([i % 256]) * 1000 for i in range(100))
            assert chunks_sent == 100
            client.close()

    run(scenario)


def test_a_send_waiting_for_the_window_returns_when_the_client_leaves() -> None:
    finished = asyncio.Event()

    async def stream_chunks(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(100):
            await send({"type": "http.response.body", "body": b"x" * 1000, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        finished.set()

    async def scenario() -> None:
        async with serving(stream_chunks) as server:
            client = await Client.connect(server.port, {SettingCodes.INITIAL_WINDOW_SIZE: 4096})
            client.auto_acknowledge = False
            await client.request("/watch")
            await asyncio.sleep(0.3)
            assert not finished.is_set()  # waiting for a WINDOW_UPDATE
            client.writer.transport.abort()
            await asyncio.wait_for(finished.wait(), 10)  # the sends after it return at once

    run(scenario)


def test_the_headers_go_out_before_the_first_body_message() -> None:
    """A watch sends its start and then nothing until an event: the client has the headers."""
    event = asyncio.Event()

    async def watch(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"Content-Type", b"x/y")]})
        await event.wait()
        await send({"type": "http.response.body", "body": b"event", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        async with serving(watch) as server:
            client = await Client.connect(server.port)
            stream = await client.request("/watch")
            await client.until(lambda: any(isinstance(e, h2.events.ResponseReceived) for e in client.events))
            event.set()
            headers, body = await client.response(stream)
            assert (headers[b":status"], headers[b"content-type"], body) == (b"200", b"x/y", b"event")
            client.close()

    run(scenario)


def test_a_reset_stream_is_a_disconnect_and_the_connection_goes_on() -> None:
    messages: list[dict] = []
    started = asyncio.Event()

    async def waits_for_disconnect(scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == "/plain":
            await echo(scope, receive, send)
            return
        messages.append(await receive())  # the (empty) body
        started.set()
        messages.append(await receive())  # http.disconnect when the client resets

    async def scenario() -> None:
        async with serving(waits_for_disconnect) as server:
            client = await Client.connect(server.port)
            stream = await client.request("/watch")
            await asyncio.wait_for(started.wait(), 10)
            client.h2.reset_stream(stream, ErrorCodes.CANCEL)
            await client.flush()
            for _ in range(100):
                if len(messages) == 2:
                    break
                await asyncio.sleep(0.01)
            assert messages == [
                {"type": "http.request", "body": b"", "more_body": False},
                {"type": "http.disconnect"},
            ]
            headers, _ = await client.response(await client.request("/plain"))
            assert headers[b":status"] == b"200"
            client.close()

    run(scenario)


def test_a_followed_stream_hears_its_body_and_its_reset_but_not_its_answer() -> None:
    """The follow_body extension: the body as it arrives, ``gone`` once when the client resets the
    stream; a stream answered completely is never told ``gone``."""
    heard: dict[str, list[object]] = {"/reset": [], "/answered": []}
    started, reset = asyncio.Event(), asyncio.Event()

    async def follows(scope: Scope, receive: Any, send: Any) -> None:
        path = scope["path"]
        notes = heard[path]

        def gone() -> None:
            notes.append("gone")
            reset.set()

        scope["extensions"][FOLLOW_BODY](lambda data, more: notes.append((data, more)), gone)
        if path == "/reset":
            started.set()
            await reset.wait()
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    async def scenario() -> None:
        async with serving(follows) as server:
            client = await Client.connect(server.port)
            headers, body = await client.response(await client.request("/answered"))
            assert (headers[b":status"], body) == (b"200", b"done")
            stream = await client.request("/reset")
            await asyncio.wait_for(started.wait(), 10)
            client.h2.reset_stream(stream, ErrorCodes.CANCEL)
            await client.flush()
            await asyncio.wait_for(reset.wait(), 10)
            client.close()

    run(scenario)
    assert heard["/answered"] == [(b"", False)]
    assert heard["/reset"] == [(b"", False), "gone"]


def test_a_lost_connection_is_a_disconnect() -> None:
    disconnected = asyncio.Event()
    started = asyncio.Event()

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        started.set()
        while (await receive())["type"] != "http.disconnect":
            pass
        disconnected.set()
        await send({"type": "http.response.body", "body": b"ignored"})  # no error: nobody listens

    async def scenario() -> None:
        async with serving(app) as server:
            client = await Client.connect(server.port)
            await client.request("/watch")
            await asyncio.wait_for(started.wait(), 10)
            client.writer.transport.abort()
            await asyncio.wait_for(disconnected.wait(), 10)

    run(scenario)


def test_rapid_reset_ends_the_connection_with_enhance_your_calm() -> None:
    """CVE-2023-44487: streams reset at once keep their tasks' slots while the tasks run (this app
    ignores the disconnect); requests beyond 100 running wait, and more than 400 waiting end the
    connection. The app never runs more than 100 times."""
    calls = 0
    release = asyncio.Event()

    async def stubborn(scope: Scope, receive: Any, send: Any) -> None:
        nonlocal calls
        calls += 1
        await release.wait()

    async def scenario() -> None:
        async with serving(stubborn) as server:
            client = await Client.connect(server.port)
            streams = [await client.request(f"/{i}") for i in range(http2.MAX_CONCURRENT_STREAMS)]
            for _ in range(200):
                if calls == http2.MAX_CONCURRENT_STREAMS:
                    break
                await asyncio.sleep(0.01)
            assert calls == http2.MAX_CONCURRENT_STREAMS
            for stream in streams:
                client.h2.reset_stream(stream, ErrorCodes.CANCEL)
            await client.flush()
            goaway, opened = None, 0
            while goaway is None and opened < 1000:
                opened += 50
                for _ in range(50):
                    stream = client.h2.get_next_available_stream_id()
                    client.h2.send_headers(stream, [*HEAD, (b":method", b"GET"), (b":path", b"/")], end_stream=True)
                    client.h2.reset_stream(stream, ErrorCodes.CANCEL)
                try:
                    await client.flush()
                    await client.read(timeout=0.1)
                except (TimeoutError, ConnectionError):
                    pass
                goaway = next((e for e in client.events if isinstance(e, h2.events.ConnectionTerminated)), None)
            assert goaway is not None and goaway.error_code == ErrorCodes.ENHANCE_YOUR_CALM
            assert opened > http2.MAX_QUEUED_HANDLERS
            assert calls == http2.MAX_CONCURRENT_STREAMS
            release.set()

    run(scenario)


def _literal(name: bytes, value: bytes, indexed: bool = False) -> bytes:
    """An HPACK literal field, without Huffman coding (hpack's encoder takes minutes to Huffman-code
    a value of a megabyte), added to the dynamic table if ``indexed``."""

    def length(n: int, prefix: int = 127) -> bytes:
        if n < prefix:
            return bytes([n])
        encoded, n = bytearray([prefix]), n - prefix
        while n >= 128:
            encoded.append(n % 128 + 128)
            n //= 128
        return bytes(encoded + bytes([n]))

    return (b"\x40" if indexed else b"\x00") + length(len(name)) + name + length(len(value)) + value


def _request_frames(stream_id: int, block: bytes) -> bytes:
    """HEADERS and CONTINUATION frames of 16 KiB carrying ``block``."""
    pieces = [block[i : i + (1 << 14)] for i in range(0, len(block), 1 << 14)]
    frames = [HeadersFrame(stream_id, data=pieces[0], flags=["END_STREAM"])]
    frames += [ContinuationFrame(stream_id, data=piece) for piece in pieces[1:]]
    frames[-1].flags.add("END_HEADERS")
    return b"".join(frame.serialize() for frame in frames)


def test_a_header_list_too_large_gets_431_on_its_stream() -> None:
    """A list over the limit gets its 431 and the connection goes on; a list beyond four times
    the limit ends the connection (h2's decoder stops, its table is lost)."""
    request = b"".join(
        _literal(name, value)
        for name, value in ((b":method", b"GET"), (b":scheme", b"http"), (b":path", b"/"), (b":authority", b"x"))
    )
    large = _literal(b"x-big", b"x" * 4000, indexed=True)  # dynamic table entry 62: 4,037 bytes of list

    def block(references: int) -> bytes:
        return request + bytes([0x80 | 62]) * references  # each reference repeats the field

    async def scenario() -> None:
        async with serving(ok) as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(PREFACE + SettingsFrame(0).serialize())
            writer.write(_request_frames(1, request + _literal(b"x-one", b"x" * 100_000) + large))
            writer.write(_request_frames(3, block(300)))  # 1.2 MB of list in 300 bytes
            writer.write(_request_frames(5, request))
            frames = await raw_frames(reader, timeout=1, until_silent=True)
            decoder, status, bodies = Decoder(), {}, {}
            for frame in frames:
                if isinstance(frame, HeadersFrame):
                    status[frame.stream_id] = dict(decoder.decode(frame.data, raw=True))[b":status"]
                elif isinstance(frame, DataFrame):
                    bodies[frame.stream_id] = bodies.get(frame.stream_id, b"") + frame.data
            assert status == {1: b"200", 3: b"431", 5: b"200"}
            assert bodies[3] == b"<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>"
            writer.write(_request_frames(7, block(1100)))  # 4.4 MB
            last = (await raw_frames(reader))[-1]
            assert isinstance(last, GoAwayFrame) and last.error_code == ErrorCodes.ENHANCE_YOUR_CALM
            writer.close()

    run(scenario)


def test_app_errors_are_a_500_or_a_reset_and_the_connection_goes_on() -> None:
    async def failing(scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == "/late":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        elif scope["path"] == "/silent":
            return  # returns without a response
        elif scope["path"] == "/ok":
            await echo(scope, receive, send)
            return
        raise RuntimeError("boom")

    async def scenario() -> None:
        async with serving(failing) as server:
            client = await Client.connect(server.port)
            early, late, silent = [await client.request(path) for path in ("/early", "/late", "/silent")]
            assert (await client.response(early))[0][b":status"] == b"500"
            assert (await client.response(silent))[0][b":status"] == b"500"
            await client.until(lambda: client.ended(late))
            assert client.reset_code(late) == ErrorCodes.INTERNAL_ERROR
            assert (await client.response(await client.request("/ok")))[0][b":status"] == b"200"
            client.close()

    run(scenario)


def test_shutdown_lets_the_stream_in_flight_finish() -> None:
    """GOAWAY naming the last stream; a stream opened after it is refused; the one in flight is
    answered; then the connection closes."""
    release = asyncio.Event()

    async def slow(scope: Scope, receive: Any, send: Any) -> None:
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"done"})

    async def scenario() -> None:
        async with serving(slow) as server:
            client = await Client.connect(server.port)
            first = await client.request("/slow")
            await asyncio.sleep(0.1)
            shutdown = asyncio.create_task(server.protocols[0].shutdown())
            await asyncio.sleep(0.1)
            late = await client.request("/late")  # sent before the client has read the GOAWAY
            await asyncio.sleep(0.1)
            assert not shutdown.done()
            release.set()
            frames = await raw_frames(client.reader)
            await asyncio.wait_for(shutdown, 10)
            goaways = [f for f in frames if isinstance(f, GoAwayFrame)]
            assert goaways[0].last_stream_id == first and goaways[0].error_code == ErrorCodes.NO_ERROR
            refused = [f for f in frames if isinstance(f, RstStreamFrame)]
            assert [(f.stream_id, f.error_code) for f in refused] == [(late, ErrorCodes.REFUSED_STREAM)]
            head = next(f for f in frames if isinstance(f, HeadersFrame) and f.stream_id == first)
            assert dict(Decoder().decode(head.data, raw=True))[b":status"] == b"200"
            data = [f for f in frames if isinstance(f, DataFrame) and f.stream_id == first]
            assert b"".join(f.data for f in data) == b"done" and "END_STREAM" in data[-1].flags

    run(scenario)


def test_protocol_errors_end_the_connection_with_a_goaway(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(echo) as server:
            for garbage, goaway in (
                (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", False),  # not HTTP/2: closed, as Go does
                (PREFACE + b"\x00\x00\x01\x00\x00\x00\x00\x00\x00x", True),  # DATA on stream 0
                (PREFACE + b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00", True),  # WINDOW_UPDATE of 0
                (PREFACE + HeadersFrame(1, data=b"\xff\xff\xff\xff", flags=["END_HEADERS"]).serialize(), True),
            ):
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(garbage)
                frames = await raw_frames(reader)  # until the server closes
                last = frames[-1]
                if goaway:
                    assert isinstance(last, GoAwayFrame) and last.error_code in (
                        ErrorCodes.PROTOCOL_ERROR,
                        ErrorCodes.COMPRESSION_ERROR,
                    )
                else:
                    assert not any(isinstance(frame, GoAwayFrame) for frame in frames)
                writer.close()

    with caplog.at_level(logging.DEBUG):
        run(scenario)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


def test_an_idle_connection_is_closed_a_busy_one_is_not() -> None:
    release = asyncio.Event()

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"] == "/slow":
            await release.wait()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        async with serving(app, idle_timeout=0.3) as server:
            busy = await Client.connect(server.port)
            slow = await busy.request("/slow")
            idle = await Client.connect(server.port)
            started = time.monotonic()
            await idle.response(await idle.request("/"))
            frames = await raw_frames(idle.reader)
            assert isinstance(frames[-1], GoAwayFrame) and frames[-1].error_code == ErrorCodes.NO_ERROR
            assert 0.25 < time.monotonic() - started < 5
            await asyncio.sleep(0.5)
            release.set()
            assert (await busy.response(slow))[0][b":status"] == b"204"

    run(scenario)


@pytest.mark.parametrize("frame", [PingFrame(0, opaque_data=b"12345678"), SettingsFrame(0)], ids=["PING", "SETTINGS"])
def test_a_control_frame_flood_from_a_client_that_does_not_read_stays_bounded(frame: Frame) -> None:
    """The server stops reading while its answers (h2's acknowledgements) cannot be written."""

    async def scenario() -> None:
        async with serving(echo) as server:
            client = await Client.connect(server.port)
            client.writer.write(frame.serialize() * 2_000_000)  # 34 MB of PINGs, 18 MB of SETTINGS
            flooding = asyncio.create_task(client.writer.drain())
            await asyncio.sleep(1)
            assert not flooding.done()  # the server has stopped reading
            transport = server.protocols[0].transport
            assert transport is not None and transport.get_write_buffer_size() < 1 * MiB
            flooding.cancel()
            client.close()

    run(scenario)


def _certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    cert_file, key_file = directory / "tls.crt", directory / "tls.key"
    cert_file.write_bytes(self_signed_pem(name, key))
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_file.write_bytes(key_bytes)
    return cert_file, key_file


def test_httpx_over_tls(tmp_path: Path) -> None:
    cert_file, key_file = _certificate(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    context.set_alpn_protocols(["h2"])

    async def scenario() -> None:
        async with (
            serving(echo, ssl=context) as server,
            httpx.AsyncClient(http2=True, verify=False, base_url=f"https://127.0.0.1:{server.port}") as client,
        ):
            response = await client.get("/version", params={"a": "b"})
            assert response.status_code == 200 and response.http_version == "HTTP/2"
            assert "'scheme': 'https'" in response.text
            assert "'tls': {'client_cert_chain': []}" in response.text
            payload = b"y" * (3 * MiB)
            posts = [client.post(f"/upload/{i}", content=payload) for i in range(5)]
            gets = [client.get(f"/get/{i}") for i in range(50)]
            responses = await asyncio.gather(*posts, *gets)
            assert all(r.status_code == 200 for r in responses)
            digest = hashlib.sha256(payload).hexdigest()
            assert all(r.text.endswith(f"{len(payload)} {digest}") for r in responses[:5])
            assert len(server.protocols) == 1  # all on one connection

    run(scenario)
