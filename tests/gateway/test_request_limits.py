"""Request size limits as kube-apiserver's: bodies beyond 3 MiB are refused as they arrive (a
declared Content-Length beyond it unread), never buffered whole; headers up to Go's MaxHeaderBytes
(1 MiB) are accepted, beyond them 431."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx

from .helpers import GatewayProcess

ON_EVERY_HTTP_SERVER = True

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
LIMIT_MESSAGE = "Request entity too large: limit is 3145728"


def test_a_declared_huge_body_is_refused_unread(server: GatewayProcess) -> None:
    """Content-Length of 1 GiB, 1 MiB sent: the 413 comes without waiting for the rest."""
    head = (
        f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {1 << 30}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head + b"x" * (1 << 20))
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection after its answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert LIMIT_MESSAGE.encode() in answer
    assert b"connection: close" in answer.lower()


def test_a_chunked_body_is_cut_at_the_limit(client: httpx.Client) -> None:
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(100):  # 100 MiB offered
            sent += 1
            yield b"x" * (1 << 20)

    started = time.monotonic()
    try:
        response = client.post(CONFIGMAPS, content=chunks(), headers={"Content-Type": "application/json"})
    except httpx.TransportError:  # the server may close before the client has written everything
        response = None
    if response is not None:
        assert response.status_code == 413, response.text
        assert response.json()["message"] == LIMIT_MESSAGE
    assert sent < 100 or time.monotonic() - started < 10


def test_header_sizes(client: httpx.Client) -> None:
    assert client.get("/version", headers={"X-Big": "x" * 100_000}).status_code == 200
    try:
        refused = client.get("/version", headers={"X-Big": "x" * 1_100_000})
    except httpx.TransportError:
        return  # the server may close before the client has written everything
    assert refused.status_code == 431
