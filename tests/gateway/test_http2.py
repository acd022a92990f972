"""HTTP/2 end to end on the gateway's own server (gateway/serving/http2.py, chosen by ALPN over TLS):
httpx with ``http2=True`` and kubectl, whose Go transport speaks HTTP/2 by default."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

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
        # the stream is reset, the connection goes on
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
