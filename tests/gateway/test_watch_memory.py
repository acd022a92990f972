"""Watchers whose clients stop reading hold little memory of their own (issue 34, item 11): what
waits for one is the cache's shared events, and at most one write of about a MiB is encoded for it
at a time — a batch of hundreds of large events was joined into one write per watcher before
(20 stalled watchers behind 20 MiB of events held some 400 MiB more)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import GatewayProcess, eventually

WATCHERS = 20
OBJECTS = 20
OBJECT_BYTES = 1 << 20
MIB = 1 << 20


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """A server of its own: its memory is measured."""
    process = GatewayProcess(tmp_path_factory.mktemp("watch-memory")).start()
    yield process
    process.kill()


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def stalled_watch(port: int, path: str) -> socket.socket:
    """A watch whose client never reads: a small receive buffer, the request, then nothing."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def test_stalled_watchers_hold_no_copy_of_the_events(own: GatewayProcess) -> None:
    assert own.proc is not None
    with own.client() as client:
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": "mem"}}).status_code == 201
        configmaps = "/api/v1/namespaces/mem/configmaps"
        rv = client.get(configmaps).json()["metadata"]["resourceVersion"]
        for i in range(OBJECTS):
            body = {"metadata": {"name": f"big{i}"}, "data": {"v": "x" * OBJECT_BYTES}}
            assert client.post(configmaps, json=body).status_code == 201
        time.sleep(1)
        before = rss(own.proc.pid)
        # Watches from before the writes: every event waits for them at once.
        watches = [
            stalled_watch(own.port, f"{configmaps}?watch=1&resourceVersion={rv}&timeoutSeconds=300")
            for _ in range(WATCHERS)
        ]
        try:
            assert eventually(lambda: _watchers(client) >= WATCHERS, timeout=30)
            time.sleep(3)  # the watchers take their batches and block on their clients
            grown = rss(own.proc.pid) - before
            # The events and their JSON frames are the cache's, shared; a watcher adds about one
            # write in flight (a MiB, and the kernel's socket buffer). A batch of every waiting
            # event joined into one write held OBJECTS MiB per watcher.
            assert grown < 4 * WATCHERS * MIB, f"RSS grew {grown / MIB:.0f} MiB"
        finally:
            for sock in watches:
                sock.close()


def _watchers(client) -> float:  # type: ignore[no-untyped-def]
    metrics = client.get("/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("apiserver_registered_watchers{") and 'kind="ConfigMap"' in line
    )
