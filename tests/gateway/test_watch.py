"""Watch (Kubernetes API Concepts: "Efficient detection of changes"): ordering, resume, timeouts, no leaked watches."""

from __future__ import annotations

import asyncio
import json
import re
import time

import httpx

from .helpers import GatewayProcess, watch_lines

ON_ETCD_TOO = True  # the tests using the shared server run against a real etcd as well


def _rv(event: dict) -> int:
    return int(event["object"]["metadata"]["resourceVersion"])


def test_initial_state_then_changes(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    client.post(path, json={"metadata": {"name": "before"}})
    events = watch_lines(client, path, stop_after=4, timeoutSeconds=10)
    first = next(events)
    assert first["type"] == "ADDED" and first["object"]["metadata"]["name"] == "before"
    assert first["object"]["kind"] == "ConfigMap"  # watch objects carry kind/apiVersion
    created = client.post(path, json={"metadata": {"name": "after"}}).json()
    client.put(f"{path}/after", json={**created, "data": {"a": "b"}})
    client.delete(f"{path}/after")
    rest = list(events)
    assert [e["type"] for e in rest] == ["ADDED", "MODIFIED", "DELETED"]
    assert all(e["object"]["metadata"]["name"] == "after" for e in rest)
    assert _rv(rest[0]) < _rv(rest[1]) < _rv(rest[2])


def test_burst_from_8_writers_arrives_in_order_without_gaps(server: GatewayProcess, namespace: str) -> None:
    """1,000 writes from 8 concurrent clients: every one arrives once, in resourceVersion order."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"

    async def scenario() -> tuple[list[dict], list[int]]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            start = (await http.get(path)).json()["metadata"]["resourceVersion"]
            events: list[dict] = []
            done = asyncio.Event()

            async def watcher() -> None:
                params = {"watch": "1", "resourceVersion": start, "timeoutSeconds": "120"}
                async with http.stream("GET", path, params=params) as response:
                    async for line in response.aiter_lines():
                        if line:
                            events.append(json.loads(line))
                            if len(events) == 1000:
                                done.set()
                                return

            async def writer(worker: int) -> list[int]:
                revisions = []
                for i in range(125):
                    name = f"w{worker}-{i // 2}"
                    if i % 2 == 0:
                        r = await http.post(path, json={"metadata": {"name": name}, "data": {"v": "0"}})
                    else:
                        r = await http.put(f"{path}/{name}", json={"metadata": {"name": name}, "data": {"v": "1"}})
                    assert r.status_code in (200, 201), r.text
                    revisions.append(int(r.json()["metadata"]["resourceVersion"]))
                return revisions

            watch_task = asyncio.create_task(watcher())
            await asyncio.sleep(0.5)
            written = await asyncio.gather(*(writer(w) for w in range(8)))
            await asyncio.wait_for(done.wait(), 60)
            watch_task.cancel()
            return events, sorted(r for revs in written for r in revs)

    events, written = asyncio.run(scenario())
    received = [_rv(e) for e in events]
    assert received == sorted(received)
    assert received == written  # each acknowledged write exactly once: no gap, no duplicate
    # (the revisions need not be consecutive: the server's own writes, Lease renewals, take some)


def test_resume_from_resource_version(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = client.get(path).json()["metadata"]["resourceVersion"]
    written = [client.post(path, json={"metadata": {"name": f"r{i}"}}).json() for i in range(10)]
    first = list(watch_lines(client, path, stop_after=4, resourceVersion=start, timeoutSeconds=10))
    resumed = list(watch_lines(client, path, stop_after=6, resourceVersion=str(_rv(first[-1])), timeoutSeconds=10))
    names = [e["object"]["metadata"]["name"] for e in first + resumed]
    assert names == [w["metadata"]["name"] for w in written]


def test_timeout_seconds_ends_the_stream(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    began = time.monotonic()
    response = client.get(path, params={"watch": "true", "timeoutSeconds": "1", "resourceVersion": rv})
    assert response.status_code == 200 and response.content == b""
    assert 0.9 <= time.monotonic() - began < 10


def _registered_watchers(client: httpx.Client) -> float:
    """Registered ConfigMap watchers (the server's own informers among them: the garbage collector's)."""
    text = client.get("/metrics").text
    pattern = r'^apiserver_registered_watchers\{[^}]*kind="ConfigMap"[^}]*\} (\S+)$'
    return sum(float(v) for v in re.findall(pattern, text, re.M))


def test_dropped_watches_are_released(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    """Open 200 watches, drop them: the server's count of registered watchers returns to what it was."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    before = _registered_watchers(client)

    async def open_and_drop() -> None:
        limits = httpx.Limits(max_connections=250)
        async with httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as http:
            streams = [http.stream("GET", path, params={"watch": "1", "resourceVersion": rv}) for _ in range(200)]
            responses = await asyncio.gather(*(s.__aenter__() for s in streams))
            assert all(r.status_code == 200 for r in responses)
            deadline = time.monotonic() + 20
            while _registered_watchers(client) < before + 200 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert _registered_watchers(client) >= before + 200
            await asyncio.gather(*(s.__aexit__(None, None, None) for s in streams))

    asyncio.run(open_and_drop())
    deadline = time.monotonic() + 20
    while _registered_watchers(client) > before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _registered_watchers(client) == before
