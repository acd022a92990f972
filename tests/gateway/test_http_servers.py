"""The HTTP layer on each server (--http-server native, the default, and hypercorn): what Go's
net/http does on the wire — reason phrases, client certificates over TLS, its plain-text 400,
pipelining, Expect: 100-continue, chunked bodies both ways, HEAD — and HTTP/2 by ALPN."""

from __future__ import annotations

import json
import re
import socket
import ssl
import subprocess
import time

import httpx
import pytest

from .helpers import GatewayProcess, http_server, kubectl_path, skip_on_hypercorn

ON_EVERY_HTTP_SERVER = True
TIMEOUT = 30
GO_400 = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
)


def exchange(server: GatewayProcess, data: bytes, until: bytes | None = None) -> bytes:
    """Send ``data`` on a new plain-HTTP connection; what comes back until the server closes (or
    until ``until`` has come)."""
    answer = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        while chunk := sock.recv(65536):
            answer += chunk
            if until is not None and answer.count(until) >= 1:
                break
    return answer


def admin_context(server: GatewayProcess) -> ssl.SSLContext:
    pki = server.data_dir / "pki"
    context = ssl.create_default_context(cafile=pki / "ca.crt")
    context.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    return context


def test_status_lines_carry_go_reason_phrases(server: GatewayProcess, client: httpx.Client) -> None:
    skip_on_hypercorn(server, "no reason phrase in its status lines")
    assert client.get("/api/v1/namespaces/default/configmaps/none").reason_phrase == "Not Found"
    created = client.post("/api/v1/namespaces", json={"metadata": {"name": "Bad_Name"}})
    assert (created.status_code, created.reason_phrase) == (422, "Unprocessable Entity")
    answer = exchange(server, b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nDate: " in answer


def test_a_client_certificate_identifies_its_user(server: GatewayProcess) -> None:
    skip_on_hypercorn(server, "client certificates do not reach the application")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    with httpx.Client(base_url=server.secure_url, verify=admin_context(server), timeout=TIMEOUT) as admin:
        answer = admin.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review)
    assert answer.status_code == 201, answer.text
    assert "system:masters" in answer.json()["status"]["userInfo"]["groups"]


def test_without_a_certificate_the_client_is_anonymous(server: GatewayProcess) -> None:
    with server.secure_client() as anonymous:
        answer = anonymous.get("/api/v1/namespaces/default")
    assert answer.status_code == 403
    assert 'User "system:anonymous"' in answer.json()["message"]


def test_a_malformed_request_gets_go_s_400(server: GatewayProcess) -> None:
    answer = exchange(server, b"GARBAGE\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400")
    if http_server(server) == "native":
        assert answer == GO_400


def test_pipelined_requests_are_answered_in_order(server: GatewayProcess) -> None:
    paths = ["/version", "/api/v1/namespaces/default", "/api/v1/namespaces/nope", "/version"]
    requests = b"".join(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode() for path in paths[:-1])
    requests += f"GET {paths[-1]} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    answer = exchange(server, requests)
    assert [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)] == [200, 200, 404, 200]


def test_expect_continue_then_a_chunked_body(server: GatewayProcess, namespace: str) -> None:
    body = json.dumps({"metadata": {"name": "chunked"}, "data": {"k": "v"}}).encode()
    head = (
        f"POST /api/v1/namespaces/{namespace}/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        sock.sendall(head)
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 ")
        half = len(body) // 2
        for part in (body[:half], body[half:]):
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        sock.sendall(b"0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 201"), answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["data"] == {"k": "v"}


def test_an_h2c_upgrade_is_ignored_as_go_ignores_it(server: GatewayProcess, namespace: str) -> None:
    """Java's HTTP client asks plain-HTTP servers for h2c (``Upgrade: h2c``); Go's server ignores it
    and answers in HTTP/1.1, body included (the native server dropped the body of such a POST)."""
    skip_on_hypercorn(server, "it switches to h2c")
    upgrade = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"
    body = json.dumps({"metadata": {"name": "over-h2c"}, "data": {"k": "v"}}).encode()
    second = json.dumps({"metadata": {"name": "chunked-h2c"}}).encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(second), second)
    configmaps = f"/api/v1/namespaces/{namespace}/configmaps"
    requests = (
        f"GET /version HTTP/1.1\r\nHost: x\r\n{upgrade}\r\n"
        f"POST {configmaps} HTTP/1.1\r\nHost: x\r\n{upgrade}Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    requests += (
        f"POST {configmaps} HTTP/1.1\r\nHost: x\r\n{upgrade}Content-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode() + chunked
    answer = exchange(server, requests)
    assert [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)] == [200, 201, 201], answer[:2000]
    assert b"101 Switching" not in answer


def test_a_chunk_size_that_overflows_gets_go_s_400_at_once(server: GatewayProcess) -> None:
    """A body whose chunk size does not fit 64 bits cannot be read: Go's 400 at once (the handler
    waiting for that body is stopped), not a 504 when the request times out."""
    skip_on_hypercorn(server, "it waits for the body until the request times out")
    head = (
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as sock:
        sock.sendall(head + b"1000000000000000000\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer == GO_400


def test_a_head_not_complete_within_32_s_ends_the_connection(server: GatewayProcess) -> None:
    """kube-apiserver's ReadHeaderTimeout (32 s): a client that sends a request's head slowly is
    cut off, unanswered, as Go's server does (it waited for the 75 s keep-alive timeout)."""
    skip_on_hypercorn(server, "it waits for its keep-alive timeout")
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n")
        began = time.monotonic()
        answer = sock.recv(4096)
        waited = time.monotonic() - began
    assert answer == b""
    assert 30 < waited < 60, f"closed after {waited:.0f} s"


def test_head_has_the_length_and_no_body(server: GatewayProcess, client: httpx.Client) -> None:
    length = len(client.get("/version").content)
    answer = exchange(server, b"HEAD /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and rest == b""
    assert f"content-length: {length}".encode() in head.lower()


def test_a_watch_streams_in_chunks(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    with client.stream("GET", path, params={"watch": "1", "resourceVersion": rv}) as response:
        assert response.headers["transfer-encoding"] == "chunked"
        assert client.post(path, json={"metadata": {"name": "w"}}).status_code == 201
        event = json.loads(next(response.iter_lines()))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "w")


def test_http2_by_alpn(server: GatewayProcess) -> None:
    """kubectl and client-go negotiate HTTP/2 over TLS; the native server speaks it."""
    skip_on_hypercorn(server, "its HTTP/2 is not the tested one")
    pytest.importorskip("protokube.gateway.serving.http2")
    with httpx.Client(base_url=server.secure_url, verify=admin_context(server), http2=True, timeout=TIMEOUT) as h2:
        answer = h2.get("/api/v1/namespaces/default")
        assert (answer.http_version, answer.status_code) == ("HTTP/2", 200)
        assert h2.get("/api/v1/namespaces/nope").json()["reason"] == "NotFound"
    kubectl = kubectl_path()
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    done = subprocess.run(
        [kubectl, "--kubeconfig", str(server.kubeconfig), "get", "namespace", "default", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "namespace/default"), done.stderr
