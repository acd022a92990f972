"""gateway/serving/http1.py on a real socket, in this process: reading pauses while a body the
application does not read piles up, pipelined requests are answered in order, and the follow_body
extension hands a body over and says when its client leaves."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvloop

from protokube.gateway.lanes import LaneLoop
from protokube.gateway.serving import listen_socket, serve_app
from protokube.gateway.serving.follow import FOLLOW_BODY
from protokube.gateway.serving.http1 import Http1Protocol

App = Callable[[dict[str, Any], Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


@contextlib.asynccontextmanager
async def serving(app: App) -> AsyncIterator[int]:
    """``app`` on the native server on a free port (its number), stopped afterwards."""

    async def with_lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await app(scope, receive, send)

    sock = listen_socket("127.0.0.1:0")
    shutdown = asyncio.Event()
    server = asyncio.get_running_loop().create_task(serve_app(with_lifespan, sock, shutdown))
    try:
        yield sock.getsockname()[1]
    finally:
        shutdown.set()
        await server
        sock.close()


async def answer(send: Any, body: bytes) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return uvloop.run(scenario(), loop_factory=LaneLoop)


def test_a_body_the_app_does_not_read_stops_the_reading() -> None:
    """64 MiB announced while the app waits: the client cannot send it all (the server's reading
    is paused, the socket buffers fill); once the app reads, all of it arrives."""
    size = 64 << 20
    start_reading = asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await start_reading.wait()
        received, more = 0, True
        while more:
            message = await receive()
            received += len(message.get("body", b""))
            more = message.get("more_body", False)
        await answer(send, str(received).encode())

    async def scenario() -> tuple[bool, bytes]:
        async with serving(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)
            writer.write(b"x" * size)
            try:
                await asyncio.wait_for(writer.drain(), 1.0)
                blocked = False
            except TimeoutError:
                blocked = True
            start_reading.set()
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            body = await reader.readexactly(int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]))
            writer.close()
            return blocked, body

    blocked, body = run(scenario)
    assert blocked
    assert body == str(size).encode()


def test_many_pipelined_requests_are_answered_in_order() -> None:
    """More requests in one write than the server parses ahead (it pauses, then goes on)."""
    count = 100

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await asyncio.sleep(0.001)
        await answer(send, scope["path"].encode())

    async def scenario() -> bytes:
        async with serving(app) as port:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.setblocking(False)
                loop = asyncio.get_running_loop()
                requests = b"".join(b"GET /%d HTTP/1.1\r\nHost: x\r\n\r\n" % i for i in range(count))
                await loop.sock_sendall(sock, requests + b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := await asyncio.wait_for(loop.sock_recv(sock, 65536), 30):
                    data += chunk
                return data

    data = run(scenario)
    bodies = [part.split(b"\r\n\r\n", 1)[1] for part in data.split(b"HTTP/1.1 200 OK\r\n")[1:]]
    assert bodies == [f"/{i}".encode() for i in range(count)] + [b"/last"]


def test_a_followed_body_arrives_in_order_and_a_leaving_client_is_told() -> None:
    """The follow_body extension: the body reaches ``arrived`` chunk by chunk as the client sends it
    (no ``receive``), and a client that leaves mid-body makes ``gone`` be called, once."""
    arrived: list[tuple[bytes, bool]] = []
    gone: list[bool] = []
    first_chunk, left = asyncio.Event(), asyncio.Event()

    def on_body(data: bytes, more: bool) -> None:
        arrived.append((data, more))
        if data:
            first_chunk.set()

    def on_gone() -> None:
        gone.append(True)
        left.set()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["extensions"][FOLLOW_BODY](on_body, on_gone)
        await left.wait()

    async def scenario() -> None:
        async with serving(app) as port:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcd")
            await asyncio.wait_for(first_chunk.wait(), 10)
            writer.close()
            await asyncio.wait_for(left.wait(), 10)

    run(scenario)
    assert b"".join(data for data, _ in arrived) == b"abcd"
    assert all(more for _, more in arrived)
    assert gone == [True]


def test_a_followed_request_ends_without_gone_and_expect_continue_is_answered() -> None:
    """A whole body (after the server's 100 Continue) ends with more_body False; once the app is done
    the follower hears nothing more, even of the client leaving."""
    arrived: list[tuple[bytes, bool]] = []
    gone: list[bool] = []
    whole = asyncio.Event()

    def on_body(data: bytes, more: bool) -> None:
        arrived.append((data, more))
        if not more:
            whole.set()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["extensions"][FOLLOW_BODY](on_body, lambda: gone.append(True))
        await whole.wait()
        await answer(send, b"".join(data for data, _ in arrived))

    async def scenario() -> bytes:
        async with serving(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            assert interim.startswith(b"HTTP/1.1 100 Continue")
            writer.write(b"hello")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            body = await reader.readexactly(5)
            writer.close()
            await asyncio.sleep(0.2)  # the server notices the close: nobody may be told any more
            assert head.startswith(b"HTTP/1.1 200")
            return body

    assert run(scenario) == b"hello"
    assert [more for _, more in arrived][-1] is False
    assert gone == []


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout_and_a_busy_one_is_not() -> None:
    """The idle deadline moves with every request (the timer is made anew only when needed): a
    connection used more often than the timeout stays open for longer than it, an idle one closes."""
    timeout = 0.3

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await answer(send, b"ok")

    async def get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        return head + await reader.readexactly(2)

    async def scenario() -> tuple[int, float]:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: Http1Protocol(
                app,
                scheme="http",
                server=None,
                client=None,
                tls=None,
                context=contextvars.copy_context(),
                keep_alive_timeout=timeout,
            ),
            "127.0.0.1",
            0,
        )
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answered = 0
        began = loop.time()
        while loop.time() - began < 3 * timeout:  # a request every third of the timeout
            assert (await get(reader, writer)).endswith(b"ok")
            answered += 1
            await asyncio.sleep(timeout / 3)
        idle_since = loop.time()
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the server
        closed_after = loop.time() - idle_since
        writer.close()
        server.close()
        return answered, closed_after

    answered, closed_after = run(scenario)
    assert answered >= 6
    assert timeout * 0.5 <= closed_after < timeout * 10


def test_a_header_value_with_line_breaks_goes_out_on_one_line() -> None:
    """Carriage returns and line feeds in a response header's value are written as spaces (as Go's
    server writes them): the value cannot end the head or start a header of its own."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-length", b"2"), (b"x-note", b"a\r\nx-injected: 1\nb\rc"), (b"x-plain", b"ok")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"hi"})

    async def scenario() -> bytes:
        async with serving(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            body = await reader.readexactly(2)
            writer.close()
            assert body == b"hi"
            return head

    lines = run(scenario).split(b"\r\n")
    assert b"X-Note: a  x-injected: 1 b c" in lines
    assert b"X-Plain: ok" in lines
    assert not any(line.lower().startswith(b"x-injected") for line in lines)
