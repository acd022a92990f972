"""gateway/serving/http1.py on a real socket, in this process: reading pauses while a body the
application does not read piles up, and pipelined requests are answered in order."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvloop

from protokube.gateway.lanes import LaneLoop
from protokube.gateway.serving import listen_socket, serve_app

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
