"""What APF adds to a GET, without the network: ``python -m bench.apf_inprocess REQUESTS ROUNDS``.

Two gateway apps (APF on, and off) built in this process over the in-memory storage backend, on the
gateway's own loop (LaneLoop); GETs of one configmap from the watch cache, as a user the suggested
configuration classifies to global-default, are handed to each app as ASGI calls — no HTTP server,
no socket, no client sharing the CPU. Prints the best CPU time per GET of each (µs) as JSON.

The figure moves far less than the wrk rounds of bench/apf.py, which also count hypercorn and the
kernel's part of every request; it is what a change to the APF filter changes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from typing import Any

import uvloop
from quart import Quart

from protokube.gateway.app import APIServer, Settings, create_app
from protokube.gateway.lanes import LaneLoop, open_connection
from protokube.gateway.runtimeconfig import RuntimeConfig
from protokube.gateway.storage.memory import MemoryBackend
from protokube.schema import descriptors
from protokube.schema.registry import build

COLLECTION = "/api/v1/namespaces/default/configmaps"
GET = (f"{COLLECTION}/bench", b"resourceVersion=0", [(b"impersonate-user", b"bench-user")])


async def call(app: Quart, method: str, path: str, query: bytes, headers: list, body: bytes = b"") -> int:
    """One request through the app's ASGI interface; its status."""
    if body:
        headers = [*headers, (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",  # the plain-HTTP port: system:masters, who may impersonate
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"bench"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "extensions": {},
    }
    messages: list[dict[str, Any]] = []
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never goes away
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    await app(scope, receive, send)
    return messages[0]["status"]


async def app_with(priority_and_fairness: bool) -> tuple[APIServer, Quart]:
    registry = build(descriptors.all_messages())
    RuntimeConfig().apply(registry)
    settings = Settings(priority_and_fairness=priority_and_fairness, authorization_modes=("AlwaysAllow",))
    server = APIServer(MemoryBackend(), "bench:0", registry, settings)
    await server.start()
    await server.bootstrapped.wait()
    app = create_app(server)
    await app.startup()
    created = await call(app, "POST", COLLECTION, b"", [], json.dumps({"metadata": {"name": "bench"}}).encode())
    if created != 201:
        raise RuntimeError(f"create: {created}")
    for _ in range(100):  # until the watch cache has it
        if await call(app, "GET", *GET) == 200:
            return server, app
        await asyncio.sleep(0.01)
    raise RuntimeError("the configmap never reached the watch cache")


async def measure(requests: int, rounds: int) -> dict[str, float]:
    open_connection()
    apps = {"on": await app_with(True), "off": await app_with(False)}
    best: dict[str, float] = {}
    for _ in range(rounds):  # alternating, each keeping its best
        for name, (_, app) in apps.items():
            gc.collect()
            started = time.process_time()
            for _ in range(requests):
                await call(app, "GET", *GET)
            per_get = (time.process_time() - started) / requests * 1e6
            best[name] = min(best.get(name, per_get), per_get)
    for server, app in apps.values():
        await app.shutdown()
        await server.stop()
    return {"on_us": best["on"], "off_us": best["off"], "requests": requests, "rounds": rounds}


def main() -> None:
    requests, rounds = int(sys.argv[1]), int(sys.argv[2])
    print(json.dumps(uvloop.run(measure(requests, rounds), loop_factory=LaneLoop)))


if __name__ == "__main__":
    main()
