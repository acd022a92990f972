"""Live watch changes written by the fan-out's round itself (gateway/watchcache/watcher.py's
``push``, gateway/serving/http1.py's ``protokube.write_now``): while its stream waits and its
connection takes bytes, a watcher's batch goes out without waking the stream; otherwise the stream
is woken and writes it as before, in order; a push that fails ends its own watch. The server writes
a chunk from outside the response's task only while the client reads: one that stops reading gets
no more that way."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.serving.http1 import WRITE_NOW
from protokube.gateway.watchcache.entries import CacheEvent, Entry
from protokube.gateway.watchcache.watcher import CacheWatcher, Item

from .test_http1_protocol import run, serving


def _change(revision: int) -> tuple[CacheEvent, str]:
    view = SimpleNamespace(size=1)  # what a watcher reads of a cached object: its size
    entry = Entry(f"ns/o{revision}", "ns", {}, (), (), view)  # type: ignore[arg-type]
    return CacheEvent("ADDED", revision, entry, None), "ADDED"


def _revisions(batch: list[Item]) -> list[int]:
    return [item[0].revision for item in batch]  # type: ignore[index]


async def _pushes() -> tuple[list[list[int]], list[int], list[list[int]]]:
    watcher = CacheWatcher(Filter("", EVERYTHING, NO_FIELDS), deadline=1e18, start_revision=0)
    pushed: list[list[int]] = []
    takes = True

    def push(take: Callable[[], list[Item]]) -> bool:
        if takes:
            pushed.append(_revisions(take()))
        return takes

    watcher.push = push
    stream = watcher.batches()
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)  # the stream waits
    for revision in (1, 2):
        watcher.offer(_change(revision))
    assert watcher.wake()
    await asyncio.sleep(0)
    assert not waiting.done()  # written by push: the stream was not woken
    takes = False
    watcher.offer(_change(3))
    assert watcher.wake()
    woken = _revisions(await asyncio.wait_for(waiting, 5))
    takes = True
    watcher.offer(_change(4))
    assert watcher.wake()  # the stream is not waiting now (it holds its batch): it is left to take this
    after = [_revisions(await asyncio.wait_for(anext(stream), 5))]
    await stream.aclose()
    return pushed, woken, after


def test_a_waiting_stream_is_written_by_push_and_woken_when_push_declines() -> None:
    pushed, woken, after = asyncio.run(_pushes())
    assert pushed == [[1, 2]]
    assert woken == [3]
    assert after == [[4]]


async def _failed_push() -> bool:
    """A push that raises ends its own watch, not the round that called it."""
    watcher = CacheWatcher(Filter("", EVERYTHING, NO_FIELDS), deadline=1e18, start_revision=0)

    def push(take: Callable[[], list[Item]]) -> bool:
        take()
        raise ValueError("cannot encode")

    watcher.push = push
    stream = watcher.batches()
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    watcher.offer(_change(1))
    watcher.offer(_change(2))
    assert watcher.wake()
    try:
        await asyncio.wait_for(waiting, 5)
    except StopAsyncIteration:
        return watcher.closed and not watcher.queue
    return False


def test_a_push_that_fails_ends_its_watch() -> None:
    assert asyncio.run(_failed_push())


async def _written_now() -> tuple[bytes, int, bool]:
    """A streamed response: one chunk sent, one written by write_now from a loop callback; then,
    with the client not reading, write_now until it declines."""
    done = asyncio.Event()
    outcome: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        write_now = scope["extensions"][WRITE_NOW]
        assert not write_now(lambda: b"too early")  # the response has not started
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        written = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(lambda: written.set_result(write_now(lambda: b"second")))
        assert await written
        await done.wait()
        made, chunk = 0, b"x" * 65536

        def make() -> bytes:
            nonlocal made
            made += 1
            return chunk

        while write_now(make) and made < 4096:  # 256 MiB at most: far beyond the socket buffers
            pass
        outcome["made"] = made
        outcome["declined"] = not write_now(make) and made == outcome["made"]  # make() not called
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async with serving(app) as port:
        loop = asyncio.get_running_loop()
        client = socket.create_connection(("127.0.0.1", port))
        client.setblocking(False)
        await loop.sock_sendall(client, b"GET /w HTTP/1.1\r\nHost: x\r\n\r\n")
        received = b""
        while b"6\r\nsecond\r\n" not in received:
            received += await asyncio.wait_for(loop.sock_recv(client, 65536), 5)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        done.set()  # the client reads no more
        for _ in range(500):
            if "declined" in outcome:
                break
            await asyncio.sleep(0.01)
        client.close()
    return received, outcome["made"], outcome["declined"]


def test_write_now_writes_while_the_client_reads_and_declines_once_it_stops() -> None:
    received, made, declined = run(_written_now)
    assert received.startswith(b"HTTP/1.1 200 OK\r\n")
    assert received.endswith(b"\r\n\r\n5\r\nfirst\r\n6\r\nsecond\r\n")
    assert 0 < made < 4096  # the transport's buffer filled: write_now stopped taking chunks
    assert declined  # and declines without making one
