"""Robustness: the memory stalled watchers leave behind (issue 34, item 11).

ConfigMaps of about a MiB each (50 MiB in all; quick run: 20) are written, then as many watchers
as the issue names (40; quick run: 20) watch them from before the writes on connections whose
clients never read. Once they are blocked, the clients disconnect. The gateway's RSS after they
went is compared with its RSS before they came (goal: at most 1.2x): what waits for a watcher is
the cache's shared events, and what was encoded for one is freed with it.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Callable

from bench.common import Gateway, Row, at_most, fmt_bytes, ratio_row, rss_bytes
from bench.loadgen import Connection

GOAL = 1.2
SIZES = {True: (20, 20), False: (50, 40)}  # quick: (objects of ~1 MiB, watchers)
OBJECT_BYTES = 1_000_000
NAMESPACE = "stalled"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
REGISTERED = re.compile(r'^apiserver_registered_watchers\{[^}]*kind="ConfigMap"[^}]*\} (\S+)$', re.MULTILINE)
WAIT_SECONDS = 60.0


async def _write(port: int, objects: int) -> str:
    """The namespace and its objects; returns the resourceVersion from before the objects."""
    conn = Connection("127.0.0.1", port)
    namespace = json.dumps({"metadata": {"name": NAMESPACE}}).encode()
    status, body = await conn.request("POST", "/api/v1/namespaces", namespace)
    assert status == 201, body[:300]
    status, body = await conn.request("GET", CONFIGMAPS)
    assert status == 200, body[:300]
    before = json.loads(body)["metadata"]["resourceVersion"]
    for n in range(objects):
        obj = {"metadata": {"name": f"big{n}"}, "data": {"v": "x" * OBJECT_BYTES}}
        status, body = await conn.request("POST", CONFIGMAPS, json.dumps(obj).encode())
        assert status == 201, body[:300]
    conn.close()
    return before


async def _registered(port: int) -> float:
    conn = Connection("127.0.0.1", port)
    status, body = await conn.request("GET", "/metrics")
    conn.close()
    assert status == 200, status
    return sum(float(value) for value in REGISTERED.findall(body.decode()))


def _wait_for(port: int, done: Callable[[float], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not done(asyncio.run(_registered(port))):
        if time.monotonic() > deadline:
            raise TimeoutError(f"stalled watchers: {what} not within {WAIT_SECONDS:.0f} s")
        time.sleep(0.2)


def _stalled_watch(port: int, resource_version: str) -> socket.socket:
    """A watch whose client never reads: a small receive buffer, the request, then nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    path = f"{CONFIGMAPS}?watch=1&resourceVersion={resource_version}&timeoutSeconds=600"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return sock


def measure(gw: Gateway, quick: bool) -> dict:
    objects, watchers = SIZES[quick]
    resource_version = asyncio.run(_write(gw.port, objects))
    baseline = asyncio.run(_registered(gw.port))
    time.sleep(1)
    before = rss_bytes(gw.pid)
    sockets = [_stalled_watch(gw.port, resource_version) for _ in range(watchers)]
    try:
        _wait_for(gw.port, lambda n: n >= baseline + watchers, f"{watchers} watchers registered")
        time.sleep(3)  # they take their first writes and block on their clients
        stalled = rss_bytes(gw.pid)
    finally:
        for sock in sockets:
            sock.close()
    _wait_for(gw.port, lambda n: n <= baseline, "the watchers gone")
    time.sleep(2)
    after = rss_bytes(gw.pid)
    return {
        "objects": objects,
        "watchers": watchers,
        "rss_before": before,
        "rss_stalled": stalled,
        "rss_after": after,
        "ratio": after / before,
    }


def row(results: dict) -> Row:
    return ratio_row(
        "robustness",
        f"gateway RSS after {results['watchers']} watchers stalled behind {results['objects']} MiB disconnect",
        fmt_bytes(results["rss_after"]),
        f"before {fmt_bytes(results['rss_before'])}; stalled {fmt_bytes(results['rss_stalled'])}",
        results["ratio"],
        at_most,
        GOAL,
    )
