"""WebSocket requests with a real WebSocket client (``websockets``): watches over a WebSocket, one
message per event, and the errors kube-apiserver answers before any handshake — Status JSON for
exec, attach and portforward on this server without kubelets, for authentication and authorization."""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect as connect_async
from websockets.exceptions import ConnectionClosedOK, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import envelope

from .helpers import GatewayProcess
from .test_subresources import make_pod

ON_EVERY_HTTP_SERVER = True

TIMEOUT = 60  # seconds, for every handshake and every message awaited (a ceiling: each ends on its event)
ORIGIN = "http://localhost"  # upstream's WebSocket library refuses a watch without an Origin


def ws_url(base: str, path: str) -> str:
    return base.replace("http", "ws", 1) + path


@contextmanager
def websocket(base: str, path: str, **kwargs: Any) -> Iterator[ClientConnection]:
    kwargs.setdefault("origin", ORIGIN)
    with connect(ws_url(base, path), open_timeout=TIMEOUT, close_timeout=TIMEOUT, **kwargs) as ws:
        yield ws


def refusal(base: str, path: str, **kwargs: Any) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a handshake the server answers with a plain HTTP response.

    With the library's asyncio client: its threaded client, refused, closes its socket under its
    receiving thread, which now and then (1 in ~700 over TLS, measured) took the next connection's
    answer with it (python-websockets/websockets#1596 describes that race)."""
    kwargs.setdefault("origin", ORIGIN)

    async def refused() -> InvalidStatus:
        with pytest.raises(InvalidStatus) as refused:
            async with connect_async(ws_url(base, path), open_timeout=TIMEOUT, close_timeout=TIMEOUT, **kwargs):
                pass
        return refused.value

    response = asyncio.run(refused()).response
    return response.status_code, {k.lower(): v for k, v in response.headers.raw_items()}, bytes(response.body)


def status(base: str, path: str, **kwargs: Any) -> tuple[int, str, str]:
    """The code, reason and message of a Status refusing the handshake, which has an Audit-Id."""
    code, headers, body = refusal(base, path, **kwargs)
    assert headers["content-type"] == "application/json" and headers["audit-id"]
    found = orjson.loads(body)
    assert found["kind"] == "Status" and found["code"] == code
    return code, found.get("reason", ""), found["message"]


def configmaps(client: httpx.Client, namespace: str) -> tuple[str, str]:
    """The namespace's configmaps path and its list's resourceVersion (to watch changes only)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    return path, client.get(path).json()["metadata"]["resourceVersion"]


def script(client: httpx.Client, path: str) -> list[tuple[str, str]]:
    """Writes whose events a watch of ``path`` gets, in order: (type, name) of each."""
    assert client.post(path, json={"metadata": {"name": "a"}}).status_code == 201
    patch = client.patch(
        f"{path}/a", json={"data": {"k": "v"}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert patch.status_code == 200
    assert client.post(path, json={"metadata": {"name": "b"}}).status_code == 201
    assert client.delete(f"{path}/a").status_code == 200
    return [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]


def test_json_watch_sends_each_event_as_one_text_message(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    path, rv = configmaps(client, namespace)
    with websocket(server.url, f"{path}?watch=true&resourceVersion={rv}") as ws:
        assert ws.subprotocol is None
        expected = script(client, path)
        messages = [ws.recv(timeout=TIMEOUT) for _ in expected]
    assert all(isinstance(m, str) and m.endswith("}\n") and m.count("\n") == 1 for m in messages)
    events = [orjson.loads(m) for m in messages]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == expected
    assert events[1]["object"]["data"] == {"k": "v"} and events[0]["object"]["kind"] == "ConfigMap"


@pytest.mark.parametrize("subprotocol", [None, "base64.binary.k8s.io"])
def test_protobuf_watch_sends_each_event_as_one_binary_message(
    server: GatewayProcess, client: httpx.Client, namespace: str, subprotocol: str | None
) -> None:
    """Binary messages, each a metav1.WatchEvent without the stream's length prefix; a single
    subprotocol offered is echoed and changes nothing (upstream's watch ignores it)."""
    path, rv = configmaps(client, namespace)
    headers = {"Accept": "application/vnd.kubernetes.protobuf"}
    offered = [subprotocol] if subprotocol else None
    with websocket(
        server.url, f"{path}?watch=1&resourceVersion={rv}", additional_headers=headers, subprotocols=offered
    ) as ws:
        assert ws.subprotocol == subprotocol
        expected = script(client, path)
        messages = [ws.recv(timeout=TIMEOUT) for _ in expected]
    assert all(isinstance(m, bytes) for m in messages)
    events = [meta.WatchEvent.FromString(m) for m in messages]
    objects = [envelope.decode(e.object.raw, core.ConfigMap, "v1", "ConfigMap") for e in events]
    assert [(e.type, o.metadata.name) for e, o in zip(events, objects, strict=True)] == expected


def test_initial_events_and_the_end_of_the_watch(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    """Without a resourceVersion the state comes first; at timeoutSeconds the server closes (1000)."""
    path, _ = configmaps(client, namespace)
    assert client.post(path, json={"metadata": {"name": "there"}}).status_code == 201
    with websocket(server.url, f"{path}?watch=true&timeoutSeconds=1") as ws:
        first = orjson.loads(ws.recv(timeout=TIMEOUT))
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "there")
        with pytest.raises(ConnectionClosedOK):
            ws.recv(timeout=TIMEOUT)
        assert ws.close_code == 1000


def _metric(client: httpx.Client, name: str, **labels: str) -> float:
    text = client.get("/metrics").text
    selected = "".join(f'(?=[^}}]*{key}="{value}")' for key, value in labels.items())
    return sum(float(v) for v in re.findall(rf"^{name}\{{{selected}[^}}]*\}} (\S+)$", text, re.M))


def _watches(client: httpx.Client) -> tuple[float, float]:
    """Registered ConfigMap watchers, and long-running configmaps watch requests."""
    return (
        _metric(client, "apiserver_registered_watchers", kind="ConfigMap"),
        _metric(client, "apiserver_longrunning_requests", resource="configmaps", verb="WATCH"),
    )


def _until(condition: Any, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def test_closing_the_socket_ends_the_watch(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    """Watches closed by their clients, and watches refused after the chain made them, are released."""
    path, rv = configmaps(client, namespace)
    before = _watches(client)

    def beyond() -> list[float]:
        """How many more watchers and watch requests there are than before."""
        return [now - then for now, then in zip(_watches(client), before, strict=True)]

    with ExitStack() as open_watches:
        for _ in range(5):
            open_watches.enter_context(websocket(server.url, f"{path}?watch=true&resourceVersion={rv}"))
        assert _until(lambda: min(beyond()) >= 5)
    refusal(server.url, f"{path}?watch=true", origin=None)
    assert _until(lambda: max(beyond()) <= 0)  # others' watches may have ended meanwhile: not above


def test_handshakes_upstreams_websocket_library_refuses(server: GatewayProcess, client: httpx.Client) -> None:
    """No Origin: 403; more than one subprotocol: 400; both with no body (x/net/websocket)."""
    path = "/api/v1/namespaces/default/configmaps?watch=true"
    for kwargs, code in (
        ({"origin": None}, 403),
        ({"subprotocols": ["v4.channel.k8s.io", "base64.binary.k8s.io"]}, 400),
    ):
        found, headers, body = refusal(server.url, path, **kwargs)
        assert (found, body, headers["content-length"]) == (code, b"", "0")


def test_exec_attach_portforward_answer_before_the_handshake(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/pods"
    assert status(server.url, f"{base}/ghost/exec?command=ls") == (404, "NotFound", 'pods "ghost" not found')
    make_pod(client, namespace, "unscheduled")
    for sub in ("exec?command=ls&stdout=true", "attach?stdout=true", "portforward?ports=80"):
        assert status(server.url, f"{base}/unscheduled/{sub}", subprotocols=["v4.channel.k8s.io"]) == (
            400,
            "BadRequest",
            "pod unscheduled does not have a host assigned",
        )


def test_other_answers_go_out_as_they_are(server: GatewayProcess) -> None:
    """A request that is no watch gets its ordinary HTTP answer (Go's server ignores the Upgrade)."""
    code, headers, body = refusal(server.url, "/api/v1/namespaces/default")
    assert code == 200 and headers["audit-id"] and orjson.loads(body)["kind"] == "Namespace"
    assert status(server.url, "/api/v1/nothing?watch=true") == (
        404,
        "NotFound",
        "the server could not find the requested resource",
    )


def test_authentication_and_authorization_on_the_secure_port(server: GatewayProcess) -> None:
    tls = ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")
    path = "/api/v1/namespaces/default/configmaps?watch=true"
    bad_token = {"Authorization": "Bearer not-a-token"}
    assert status(server.secure_url, path, ssl=tls, additional_headers=bad_token) == (
        401,
        "Unauthorized",
        "Unauthorized",
    )
    assert status(server.secure_url, path, ssl=tls) == (
        403,
        "Forbidden",
        'configmaps is forbidden: User "system:anonymous" cannot watch resource "configmaps" in API group "" '
        'in the namespace "default"',
    )


@pytest.mark.parametrize(
    "headers",
    [
        b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n",  # no key
        b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 8\r\n",
    ],
)
def test_malformed_handshakes_get_a_400(server: GatewayProcess, headers: bytes) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(
            b"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n"
        )
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400 ")
