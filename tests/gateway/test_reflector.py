"""A list-then-watch client, written here as client-go's reflector does it, keeps an exact mirror.

10,000 mixed writes (create, update, delete) land while it watches; midway its watch is dropped
and only resumed after the server's watch cache has moved past it, so the resume is answered with
410 Gone and the reflector relists — and still ends with exactly the server's state.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable

import httpx
import pytest

from .helpers import GatewayProcess

pytestmark = pytest.mark.slow_module  # minutes: taken first by parallel workers (tests/conftest.py)

ON_ETCD_TOO = True  # the tests using the shared server run against a real etcd as well

WRITES = 10_000
WINDOW = 300  # the server's watch cache window, small so that a dropped watch falls out of it
NAMES = [f"obj-{i:03d}" for i in range(300)]


class Reflector:
    def __init__(self, http: httpx.AsyncClient, path: str) -> None:
        self.http = http
        self.path = path
        self.mirror: dict[str, dict] = {}
        self.revision = 0
        self.relists = 0
        self.expired = 0
        self.drop_requested = asyncio.Event()
        self.dropped = asyncio.Event()
        self.resume = asyncio.Event()

    async def relist(self) -> None:
        items: dict[str, dict] = {}
        params = {"limit": "100"}
        while True:
            page = (await self.http.get(self.path, params=params)).json()
            items.update({i["metadata"]["name"]: i for i in page["items"]})
            if not page["metadata"].get("continue"):
                break
            params = {"limit": "100", "continue": page["metadata"]["continue"]}
        self.mirror = items
        self.revision = int(page["metadata"]["resourceVersion"])
        self.relists += 1

    async def watch(self) -> str:
        """Watch from the last revision; returns why it ended: timeout, dropped or expired."""
        params = {
            "watch": "1",
            "resourceVersion": str(self.revision),
            "allowWatchBookmarks": "true",
            "timeoutSeconds": "5",
        }
        async with self.http.stream("GET", self.path, params=params) as response:
            async for line in response.aiter_lines():
                if not line:
                    continue
                event = json.loads(line)
                kind, obj = event["type"], event["object"]
                if kind == "ERROR":
                    assert obj["code"] == 410, obj
                    self.expired += 1
                    return "expired"
                if kind in ("ADDED", "MODIFIED"):
                    self.mirror[obj["metadata"]["name"]] = obj
                elif kind == "DELETED":
                    self.mirror.pop(obj["metadata"]["name"], None)
                self.revision = int(obj["metadata"]["resourceVersion"])
                if self.drop_requested.is_set() and not self.dropped.is_set():
                    self.dropped.set()  # the connection goes away mid-stream
                    return "dropped"
        return "timeout"

    async def run(self, stop: asyncio.Event) -> None:
        await self.relist()
        while not stop.is_set():
            ended = await self.watch()
            if ended == "dropped":
                await self.resume.wait()
            elif ended == "expired":
                await self.relist()


async def writer(http: httpx.AsyncClient, path: str, count: int, written: list[int], seed: int) -> None:
    """``count`` random writes; ``written`` counts them, and those that changed something (an event each)."""
    rng = random.Random(seed)
    for _ in range(count):
        name = rng.choice(NAMES)
        action = rng.random()
        if action < 0.45:
            r = await http.post(path, json={"metadata": {"name": name}, "data": {"v": str(rng.random())}})
        elif action < 0.85:
            r = await http.put(f"{path}/{name}", json={"metadata": {"name": name}, "data": {"v": str(rng.random())}})
        else:
            r = await http.delete(f"{path}/{name}")
        assert r.status_code in (200, 201, 404, 409), r.text
        written[0] += 1
        written[1] += r.status_code in (200, 201)


STALL = 60.0  # seconds without progress after which a wait gives up (no bound on the whole wait)


async def wait_until(condition: Callable[[], bool], progress: Callable[[], object], what: str) -> None:
    """Wait until ``condition()``, as long as ``progress()`` keeps changing: on a slow machine the
    scenario takes longer, but a stuck one still ends, naming what it waited for and what it saw."""
    seen, since = progress(), time.monotonic()
    while not condition():
        await asyncio.sleep(0.05)
        if (now := progress()) != seen:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since > STALL:
            raise AssertionError(f"waited for {what}; no progress in {STALL:.0f} s, last seen: {seen}")


@pytest.mark.timeout(900)  # 10,000 writes: minutes on a loaded 2-core machine; the waits end on a stall
def test_reflector_mirror_survives_10000_writes_a_drop_and_a_410(tmp_path) -> None:
    server = GatewayProcess(tmp_path, "--watch-cache-window", str(WINDOW)).start()
    path = "/api/v1/namespaces/default/configmaps"

    async def scenario() -> tuple[Reflector, dict]:
        limits = httpx.Limits(max_connections=32)
        async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as http:
            reflector = Reflector(http, path)
            stop = asyncio.Event()
            running = asyncio.create_task(reflector.run(stop))
            await wait_until(lambda: reflector.relists == 1, lambda: reflector.relists, "the first list")
            written = [0, 0]  # writes sent, writes that made an event
            writers = asyncio.gather(*(writer(http, path, WRITES // 8, written, seed) for seed in range(8)))
            await wait_until(lambda: written[0] > WRITES // 3, lambda: written[0], f"{WRITES // 3} writes")
            reflector.drop_requested.set()
            await wait_until(reflector.dropped.is_set, lambda: reflector.revision, "the reflector's drop")
            mark = written[1]
            # the cache's window moves past the dropped reflector: more events than it holds
            await wait_until(
                lambda: written[1] > mark + 2 * WINDOW, lambda: written[0], f"{2 * WINDOW} events after the drop"
            )
            reflector.resume.set()
            await writers
            final = (await http.get(path)).json()
            last_write = max(int(i["metadata"]["resourceVersion"]) for i in final["items"])
            await wait_until(
                lambda: reflector.revision >= last_write and reflector.relists >= 2,
                lambda: (reflector.revision, reflector.relists, reflector.expired),
                f"the reflector at revision {last_write} after a relist (seen: revision, relists, 410s)",
            )
            stop.set()
            await asyncio.wait_for(running, 30)
            assert written[0] == WRITES
            return reflector, final

    try:
        reflector, final = asyncio.run(scenario())
        state = {i["metadata"]["name"]: i for i in final["items"]}
        assert reflector.expired >= 1 and reflector.relists >= 2
        assert set(reflector.mirror) == set(state)
        for name, obj in state.items():
            assert reflector.mirror[name]["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
            assert reflector.mirror[name].get("data") == obj.get("data")
    finally:
        server.kill()
