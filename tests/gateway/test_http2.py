"""HTTP/2 end to end on the gateway's own server (gateway/serving/http2.py, chosen by ALPN over TLS):
httpx with ``http2=True`` and kubectl, whose Go transport speaks HTTP/2 by default."""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import httpx
import pytest
from h2.errors import ErrorCodes

from .helpers import GatewayProcess, kubectl_path, skip_on_hypercorn

TIMEOUT = 30
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture(autouse=True)
def _native_server(server: GatewayProcess) -> None:
    skip_on_hypercorn(server, "its HTTP/2 is not the tested one")


def admin_context(server: GatewayProcess) -> ssl.SSLContext:
    pki = server.data_dir / "pki"
    context = ssl.create_default_context(cafile=pki / "ca.crt")
    context.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    return context


def h2_client(server: GatewayProcess) -> httpx.Client:
    return httpx.Client(base_url=server.secure_url, verify=admin_context(server), http2=True, timeout=TIMEOUT)


def test_the_verbs_over_http2(server: GatewayProcess, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    with h2_client(server) as h2:
        review = h2.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=REVIEW)
        assert review.http_version == "HTTP/2"
        assert "system:masters" in review.json()["status"]["userInfo"]["groups"]  # the client certificate
        created = h2.post(path, json={"metadata": {"name": "one"}, "data": {"k": "v"}})
        assert (created.http_version, created.status_code) == ("HTTP/2", 201), created.text
        patched = h2.patch(
            f"{path}/one", json={"data": {"k": "w"}}, headers={"Content-Type": "application/merge-patch+json"}
        )
        assert (patched.status_code, patched.json()["data"]) == (200, {"k": "w"})
        listed = h2.get(path)
        assert "one" in [item["metadata"]["name"] for item in listed.json()["items"]]
        assert h2.get(f"{path}/nope").json()["reason"] == "NotFound"
        assert h2.delete(f"{path}/one").status_code == 200
        assert h2.head(path).status_code == 200


def test_a_large_object_flows_within_the_windows(server: GatewayProcess, namespace: str) -> None:
    """900 KB each way: the client's 64 KiB windows (h2's default) are refilled many times."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    data = {f"k{i}": chr(ord("a") + i % 26) * 9000 for i in range(100)}
    with h2_client(server) as h2:
        created = h2.post(path, json={"metadata": {"name": "large"}, "data": data})
        assert created.status_code == 201, created.text[:300]
        read = h2.get(f"{path}/large")
        assert (read.http_version, read.json()["data"]) == ("HTTP/2", data)


def test_many_streams_on_one_connection(server: GatewayProcess) -> None:
    async def scenario() -> list[httpx.Response]:
        async with httpx.AsyncClient(
            base_url=server.secure_url, verify=admin_context(server), http2=True, timeout=TIMEOUT
        ) as h2:
            return await asyncio.gather(*(h2.get("/api/v1/namespaces/default") for _ in range(150)))

    responses = asyncio.run(scenario())
    assert {(r.http_version, r.status_code) for r in responses} == {("HTTP/2", 200)}


def test_a_watch_over_http2(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    with h2_client(server) as h2:
        with h2.stream("GET", path, params={"watch": "1", "resourceVersion": rv}) as watch:
            assert watch.http_version == "HTTP/2"
            for name in ("a", "b", "c"):
                assert client.post(path, json={"metadata": {"name": name}}).status_code == 201
            lines = watch.iter_lines()
            seen = [next(lines) for _ in range(3)]
        assert all('"type":"ADDED"' in line for line in seen)
        # other requests go on on the connection (httpx leaves the watch's stream open: see RawClient)
        assert h2.get(path).json()["metadata"]["resourceVersion"] != rv


def kubectl(server: GatewayProcess, home: Path) -> tuple[list[str], dict[str, str]]:
    """kubectl with the server's admin kubeconfig, logging its HTTP/2 transport (GODEBUG)."""
    path = kubectl_path()
    if path is None:
        pytest.skip("kubectl is not installed")
    env = {**os.environ, "HOME": str(home), "GODEBUG": "http2debug=1"}
    return [path, "--kubeconfig", str(server.kubeconfig)], env


def test_kubectl_over_http2(server: GatewayProcess, namespace: str, tmp_path: Path) -> None:
    command, env = kubectl(server, tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "http2: Transport" in done.stderr  # Go's transport spoke HTTP/2
        return done

    run("create", "configmap", "settings", "-n", namespace, "--from-literal=color=blue")
    assert run("get", "configmap", "settings", "-n", namespace, "-o", "jsonpath={.data.color}").stdout == "blue"

    watch = subprocess.Popen(
        [*command, "get", "configmaps", "-n", namespace, "-w", "-o", "name"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.strip() for line in watch.stdout or []), daemon=True)
    reader.start()

    def until_seen(*names: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not {f"configmap/{name}" for name in names} <= set(lines) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert {f"configmap/{name}" for name in names} <= set(lines), lines

    try:
        until_seen("settings")  # the list
        for name in ("w1", "w2", "w3"):
            run("create", "configmap", name, "-n", namespace)
            until_seen(name)  # its event
    finally:
        watch.terminate()
        _, stderr = watch.communicate(timeout=10)
    assert "http2: Transport" in stderr


def registered_watchers(client: httpx.Client) -> float:
    text = client.get("/metrics").text
    pattern = r'^apiserver_registered_watchers\{[^}]*kind="ConfigMap"[^}]*\} (\S+)$'
    return sum(float(v) for v in re.findall(pattern, text, re.M))


def until(check: Callable[[], bool], timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while not check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()


class RawClient:
    """h2's client connection over TLS: what httpx does not do (its early-closed responses are never
    reset, the server is not told)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
        self.events: list[h2.events.Event] = []

    @classmethod
    async def connect(cls, server: GatewayProcess) -> RawClient:
        context = admin_context(server)
        context.set_alpn_protocols(["h2"])
        client = cls(*await asyncio.open_connection("127.0.0.1", server.secure_port, ssl=context))
        assert client.writer.get_extra_info("ssl_object").selected_alpn_protocol() == "h2"
        client.h2.initiate_connection()
        await client.flush()
        return client

    async def flush(self) -> None:
        self.writer.write(self.h2.data_to_send())
        await self.writer.drain()

    async def get(self, path: str) -> int:
        stream = self.h2.get_next_available_stream_id()
        headers = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"127.0.0.1")]
        headers.append((b":path", path.encode()))
        self.h2.send_headers(stream, headers, end_stream=True)
        await self.flush()
        return stream

    async def until(self, done: Callable[[], bool]) -> None:
        while not done():
            data = await asyncio.wait_for(self.reader.read(1 << 16), TIMEOUT)
            assert data, "the server closed the connection"
            for event in self.h2.receive_data(data):
                self.events.append(event)
                if isinstance(event, h2.events.DataReceived):
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            await self.flush()

    def status(self, stream: int) -> bytes | None:
        for event in self.events:
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                return dict(event.headers)[b":status"]
        return None


@pytest.mark.parametrize("drop", ["streams reset", "connection lost"])
def test_dropped_watches_are_released(server: GatewayProcess, client: httpx.Client, namespace: str, drop: str) -> None:
    """50 watches on one HTTP/2 connection: resetting their streams, or losing the connection, is
    their client's disconnect (the watchers are released)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    before = registered_watchers(client)

    async def open_and_drop() -> None:
        raw = await RawClient.connect(server)
        streams = [await raw.get(f"{path}?watch=1&resourceVersion={rv}") for _ in range(50)]
        await raw.until(lambda: all(raw.status(stream) for stream in streams))
        assert {raw.status(stream) for stream in streams} == {b"200"}
        assert await asyncio.to_thread(until, lambda: registered_watchers(client) >= before + 50)
        if drop == "streams reset":
            for stream in streams:
                raw.h2.reset_stream(stream, ErrorCodes.CANCEL)
            await raw.flush()
            assert await asyncio.to_thread(until, lambda: registered_watchers(client) <= before)
            after = await raw.get(path)  # the connection goes on
            await raw.until(lambda: raw.status(after) is not None)
            assert raw.status(after) == b"200"
        raw.writer.transport.abort()

    asyncio.run(open_and_drop())
    assert until(lambda: registered_watchers(client) <= before)
