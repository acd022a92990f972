"""A keep-alive connection survives an answer given before the request body arrived (as Go's
net/http: up to 256 KiB of unread body is waited for; beyond that the answer says Connection: close)."""

from __future__ import annotations

import socket
import time

import httpx

from .helpers import GatewayProcess, skip_on_hypercorn

ON_EVERY_HTTP_SERVER = True


def _responses(sock: socket.socket, count: int, timeout: float = 10) -> list[bytes]:
    """Read ``count`` HTTP/1.1 responses (with Content-Length bodies) from the socket."""
    sock.settimeout(timeout)
    data, found = b"", []
    while len(found) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode("latin-1")
            length = next(
                (
                    int(line.split(":", 1)[1])
                    for line in head.split("\r\n")
                    if line.lower().startswith("content-length:")
                ),
                0,
            )
            if len(data) >= head_end + 4 + length:
                found.append(data[: head_end + 4 + length])
                data = data[head_end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return found


def test_an_early_answer_keeps_the_connection(server: GatewayProcess) -> None:
    body = b'{"a": 1}'
    head = (
        "PATCH /api/v1/namespaces/default/configmaps/none HTTP/1.1\r\n"
        f"Host: x\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head)
        time.sleep(0.3)  # the 415 needs no body: the handler is done before it arrives
        sock.sendall(body)
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        answers = _responses(sock, 2)
    assert len(answers) == 2, answers
    assert answers[0].startswith(b"HTTP/1.1 415"), answers[0]
    assert b"connection: close" not in answers[0].lower()
    assert answers[1].startswith(b"HTTP/1.1 200"), answers[1]


def test_a_large_unread_body_closes_the_connection_with_notice(server: GatewayProcess) -> None:
    head = (
        "PATCH /api/v1/namespaces/default/configmaps/none HTTP/1.1\r\n"
        f"Host: x\r\nContent-Type: text/plain\r\nContent-Length: {1024 * 1024}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(head + b"x" * 1000)
        answers = _responses(sock, 1)
    assert answers and answers[0].startswith(b"HTTP/1.1 415"), answers
    assert b"connection: close" in answers[0].lower()


def _open_fds(client: httpx.Client) -> float:
    text = client.get("/metrics").text
    return next(float(line.split()[1]) for line in text.splitlines() if line.startswith("process_open_fds "))


def test_connections_closed_by_clients_are_let_go(server: GatewayProcess) -> None:
    """hypercorn keeps an idle connection the client had closed for its 75 s keep-alive timeout."""
    skip_on_hypercorn(server, "an idle connection its client closed is kept until the keep-alive timeout")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        before = _open_fds(client)
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
                assert _responses(sock, 1)[0].startswith(b"HTTP/1.1 200")
        deadline = time.monotonic() + 5
        while _open_fds(client) > before + 2:
            assert time.monotonic() < deadline, f"{_open_fds(client)} open fds, {before} before"
            time.sleep(0.1)
