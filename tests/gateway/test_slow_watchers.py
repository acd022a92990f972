"""A watch client that stops reading (robustness: bounded queues): the gateway closes its watch once
MAX_QUEUED live events wait for it (apiserver_terminated_watchers_total), a reading watcher of the
same resource sees every event meanwhile, and what the slow one got is an unbroken prefix.

The events are written straight to storage, a hundred per transaction, so that more than
MAX_QUEUED of them arrive within seconds: copies of a configmap the gateway stored, renamed in place.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx

from protokube.gateway.watchcache.watcher import MAX_QUEUED

from .helpers import NO_ROOT_CA_PUBLISHER, GatewayProcess, store_copies

WRITES = MAX_QUEUED + 3_000
PATH = "/api/v1/namespaces/default/configmaps"


def _name(i: int) -> str:
    return f"cm-{i:05d}"  # all the same length: renaming keeps the protobuf lengths valid


def _terminated(client: httpx.Client) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith('apiserver_terminated_watchers_total{group="",resource="configmaps"}'):
            return float(line.split()[-1])
    return 0.0


class StalledWatch:
    """A watch over a raw socket with a tiny receive buffer, read only when asked to."""

    def __init__(self, port: int, resource_version: str) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect(("127.0.0.1", port))
        request = f"GET {PATH}?watch=1&resourceVersion={resource_version} HTTP/1.1\r\nHost: x\r\n\r\n"
        self.sock.sendall(request.encode())
        self.data = b""
        while b"\r\n\r\n" not in self.data:
            self.data += self.sock.recv(4096)
        assert self.data.startswith(b"HTTP/1.1 200"), self.data[:200]

    def read_to_end(self, timeout: float = 30) -> list[dict]:
        """Everything the server sent until it ended the response: the watch events."""
        self.sock.settimeout(timeout)
        while not self.data.endswith(b"\r\n0\r\n\r\n"):
            chunk = self.sock.recv(1 << 20)
            assert chunk, "the connection closed before the response ended"
            self.data += chunk
        self.sock.close()
        return _events(self.data.split(b"\r\n\r\n", 1)[1])


def _events(chunked: bytes) -> list[dict]:
    body, rest = b"", chunked
    while True:
        size_line, rest = rest.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            break
        body, rest = body + rest[:size], rest[size + 2 :]
    return [json.loads(line) for line in body.splitlines()]


def test_a_watcher_that_stops_reading_is_closed_and_others_go_on(tmp_path: Path) -> None:
    gateway = GatewayProcess(tmp_path, NO_ROOT_CA_PUBLISHER).start()
    try:
        with gateway.client() as client:
            # 3 kB objects: the bytes that leave the queue before it overflows (the socket's buffers and
            # the transport's, ~3 MB) are ~1,000 events, well under the 3,000 the closing allows
            template = client.post(PATH, json={"metadata": {"name": _name(0)}, "data": {"k": "v" * 3000}})
            assert template.status_code == 201, template.text
            start = template.json()["metadata"]["resourceVersion"]

            stalled = StalledWatch(gateway.port, start)
            seen: list[str] = []

            def read_everything() -> None:
                with httpx.Client(base_url=gateway.url, timeout=60) as reader:
                    params = {"watch": "1", "resourceVersion": start}
                    with reader.stream("GET", PATH, params=params) as response:
                        for line in response.iter_lines():
                            seen.append(json.loads(line)["object"]["metadata"]["name"])
                            if len(seen) == WRITES:
                                return

            fast = threading.Thread(target=read_everything, daemon=True)
            fast.start()
            time.sleep(0.5)  # both watches registered
            store_copies(gateway, "/registry/configmaps/default/" + _name(0), WRITES + 1)
            fast.join(60)
            assert seen == [_name(i) for i in range(1, WRITES + 1)]  # the reading watcher: all, in order

            deadline = time.monotonic() + 10
            while _terminated(client) != 1:
                assert time.monotonic() < deadline, "the stalled watcher was never closed"
                time.sleep(0.2)
            got = [event["object"]["metadata"]["name"] for event in stalled.read_to_end()]
            assert got == [_name(i) for i in range(1, len(got) + 1)]  # what it got: a prefix, no gap
            assert len(got) < WRITES
    finally:
        gateway.kill()
