"""A watch whose client goes away before its first byte is written still ends: its watcher is released.

The handler registers the watcher and returns the streamed response; the client may be gone before
the server writes the response's start, so the body (which ends the watch when it ends) is never
read. Driven through the ASGI app with a client that leaves at that moment.
"""

from __future__ import annotations

import asyncio
from typing import Any

from protokube.gateway.app import create_app

from .stack import run, running_server

WATCH = "/api/v1/namespaces/default/configmaps"


def scope(path: str, query: bytes = b"") -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"test")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "extensions": {},
    }


async def registered_watchers(app: Any) -> float:
    messages: list[dict[str, Any]] = []
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Future()  # this client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    await app(scope("/metrics"), receive, send)
    text = b"".join(m.get("body", b"") for m in messages[1:]).decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("apiserver_registered_watchers{") and 'kind="ConfigMap"' in line
    )


async def watch_left_before_its_start(app: Any) -> None:
    """A watch request whose client disconnects while the response's start is being written."""
    left = asyncio.Event()
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            left.set()  # the client is gone: the socket never takes the write
            await asyncio.Future()

    await asyncio.wait_for(app(scope(WATCH, b"watch=1"), receive, send), 10)


def test_a_watch_left_before_its_first_byte_releases_its_watcher() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            app = create_app(server)
            before = await registered_watchers(app)
            for _ in range(5):
                await watch_left_before_its_start(app)
            for _ in range(100):  # the release runs as the request ends; a few loop turns at most
                if await registered_watchers(app) == before:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"watchers registered: {await registered_watchers(app)}, before: {before}")

    run(scenario)
