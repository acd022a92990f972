"""The `protokube` command: serve with a ready kubeconfig, the gateway alone, clean SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .helpers import ROOT, GatewayProcess, free_port, kubectl_path


def test_serve_writes_a_kubeconfig_kubectl_uses_as_is(tmp_path: Path) -> None:
    server = GatewayProcess(tmp_path).start()
    try:
        deadline = time.monotonic() + 10
        while not any(line.startswith("export KUBECONFIG=") for line in server.log) and time.monotonic() < deadline:
            time.sleep(0.05)  # printed just after the "serving on" line start() waits for
        line = next(line for line in server.log if line.startswith("export KUBECONFIG="))
        kubeconfig = line.strip().split("=", 1)[1]
        assert Path(kubeconfig) == tmp_path / "kubeconfig"
        if kubectl_path() is None:
            pytest.skip("kubectl is not installed")
        env = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}
        out = subprocess.run(
            [kubectl_path(), "get", "namespaces", "-o", "name"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert "namespace/default" in out.split()
        assert Path(kubeconfig).stat().st_mode & 0o777 == 0o600
        assert tmp_path.stat().st_mode & 0o777 == 0o700
        assert sorted(p.name for p in (tmp_path / "pki").iterdir() if p.stat().st_mode & 0o077) == [
            "admin.crt",
            "ca.crt",
            "serving.crt",
        ]  # keys are owner-only
        assert server.secure_url in Path(kubeconfig).read_text()
    finally:
        server.kill()


# `protokube` with its default data dir moved to argv[1] (the real default is the repository's data/).
DEFAULT_MOVED = (
    "import pathlib, sys; import protokube.cliargs as a; a.DEFAULT_DATA_DIR = pathlib.Path(sys.argv[1]); "
    "from protokube.cli import main; sys.exit(main(sys.argv[2:]))"
)


@pytest.mark.parametrize(
    ("command", "made", "ready"),
    [
        (["serve", "--listen", "127.0.0.1:{}", "--insecure-listen", "127.0.0.1:{}"], "", "export KUBECONFIG="),
        (["storage", "--listen", "127.0.0.1:{}"], "storage", "storage listening on"),
    ],
)
def test_the_default_data_dir_is_made_on_first_start(tmp_path: Path, command: list[str], made: str, ready: str) -> None:
    """`make run` on a fresh clone: no --data-dir, and no data/ yet."""
    fresh = tmp_path / "fresh" / "data"
    argv = [arg.format(free_port()) for arg in command]
    proc = subprocess.Popen(
        [sys.executable, "-c", DEFAULT_MOVED, str(fresh), *argv],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # it ends when the process does
            lines.append(line)
            if line.startswith(ready):
                break
        assert lines and lines[-1].startswith(ready), "".join(lines)
        assert (fresh / made).is_dir() and (fresh / made).stat().st_mode & 0o777 == 0o700
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)


def test_the_installed_command_serves(tmp_path: Path) -> None:
    """`make run` starts the console script `protokube`, not `python -m protokube`."""
    script = Path(sys.executable).parent / "protokube"
    server = GatewayProcess(tmp_path, command=(str(script),)).start()
    try:
        with server.client() as client:
            assert client.get("/api/v1/namespaces/default").json()["metadata"]["name"] == "default"
    finally:
        server.kill()


def test_gateway_alone_against_running_storage(tmp_path: Path) -> None:
    storage_port = free_port()
    storage = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "protokube",
            "storage",
            "--listen",
            f"127.0.0.1:{storage_port}",
            "--data-dir",
            str(tmp_path / "storage"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert storage.stdout is not None and "listening" in storage.stdout.readline()
        port = free_port()
        gateway = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "protokube",
                "gateway",
                "--listen",
                f"127.0.0.1:{port}",
                "--storage",
                f"127.0.0.1:{storage_port}",
                "--data-dir",
                str(tmp_path),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert gateway.stdout is not None and "serving on https://" in gateway.stdout.readline()
            pki = tmp_path / "pki"
            ca = ssl.create_default_context(cafile=pki / "ca.crt")
            url = f"https://127.0.0.1:{port}/api/v1/namespaces/default"
            anonymous = httpx.get(url, timeout=10, verify=ca)
            assert anonymous.status_code == 403
            assert anonymous.json()["message"] == (
                'namespaces "default" is forbidden: User "system:anonymous" cannot get resource "namespaces" '
                'in API group "" in the namespace "default"'
            )
            ca.load_cert_chain(pki / "admin.crt", pki / "admin.key")
            assert httpx.get(url, timeout=10, verify=ca).status_code == 200
        finally:
            gateway.terminate()
            gateway.wait(15)
        missing = subprocess.run(
            [sys.executable, "-m", "protokube", "gateway"], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert missing.returncode == 2 and "--storage HOST:PORT is required" in missing.stderr
    finally:
        storage.terminate()
        storage.wait(15)


def test_sigterm_closes_watches_and_exits(tmp_path: Path) -> None:
    server = GatewayProcess(tmp_path).start()
    assert server.proc is not None
    with server.client() as client:
        rv = client.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"]
        with client.stream("GET", "/api/v1/namespaces", params={"watch": "1", "resourceVersion": rv}) as response:
            assert response.status_code == 200
            began = time.monotonic()
            os.kill(server.proc.pid, signal.SIGTERM)
            assert response.read() == b""  # the stream ends instead of hanging
            assert time.monotonic() - began < 10
    assert server.proc.wait(20) == 0


def test_runtime_config_turns_group_versions_off(tmp_path: Path) -> None:
    """--runtime-config as upstream's: api/all=false then single group versions back on."""
    server = GatewayProcess(tmp_path, "--runtime-config", "api/all=false,api/v1=true,apps/v1").start()
    try:
        with server.client() as client:
            groups = [g["name"] for g in client.get("/apis").json()["groups"]]
            assert groups == ["apps"]
            assert client.get("/apis/rbac.authorization.k8s.io/v1").status_code == 404
            assert client.get("/apis/apps/v1/namespaces/default/deployments").status_code == 200
            assert client.get("/readyz").status_code == 200  # no RBAC informers to wait for
            created = client.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}})
            assert created.status_code == 201  # admission runs without the plugins whose resources are off
        log = "".join(server.log)
        assert "admission plugin ValidatingAdmissionWebhook does not run" in log
        assert "admission plugin ValidatingAdmissionPolicy does not run" in log
    finally:
        server.kill()


def test_runtime_config_refuses_bad_entries(tmp_path: Path) -> None:
    for flag, message in [
        ("apps/v1=maybe", "invalid value of apps/v1: maybe"),
        ("api/v1=false", "api/v1 cannot be turned off"),
        ("nonsense", "unknown runtime-config key 'nonsense'"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "protokube", "serve", "--data-dir", str(tmp_path), "--runtime-config", flag],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        assert message in result.stderr


def test_certs_issue_writes_a_kubeconfig_for_a_user(tmp_path: Path) -> None:
    """`protokube certs issue USER --group G --kubeconfig F`: kubectl acts as that user."""
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed")
    server = GatewayProcess(tmp_path / "data").start()
    try:
        config = tmp_path / "alice.kubeconfig"
        issued = subprocess.run(
            [sys.executable, "-m", "protokube", "certs", "issue", "alice", "--group", "devs", "--days", "2",
             "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(config), "--server", server.secure_url],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert issued.returncode == 0, issued.stderr
        assert config.stat().st_mode & 0o777 == 0o600
        env = {**os.environ, "HOME": str(tmp_path)}
        pods = subprocess.run(
            [kubectl_path(), "--kubeconfig", str(config), "get", "--raw", "/api/v1/namespaces/default/pods"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert 'User "alice" cannot list resource "pods"' in pods.stderr  # authenticated, not authorized
        missing_ca = subprocess.run(
            [sys.executable, "-m", "protokube", "certs", "issue", "bob", "--data-dir", str(tmp_path / "nowhere")],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert missing_ca.returncode == 1 and "no CA in" in missing_ca.stderr
    finally:
        server.kill()


def test_several_gateway_processes_share_the_addresses(tmp_path: Path) -> None:
    """`serve --gateways 2`: a worker process binds the same ports (SO_REUSEPORT); connections reach
    both (each has its own /metrics counters); the worker goes when the server stops."""
    server = GatewayProcess(tmp_path, "--gateways", "2").start()
    try:
        children = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text().split()
        workers = [p for p in children if b"--gateway-index" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(workers) == 1, "".join(server.log)
        posts, counts = 0, [0.0]
        deadline = time.monotonic() + 60  # the worker may still be starting when the first one is ready
        while min(counts) >= posts:
            assert time.monotonic() < deadline, f"one process answered every connection: {counts}"
            for _ in range(20):
                with httpx.Client(base_url=server.url, timeout=10) as fresh:  # a new connection each time
                    body = {"metadata": {"generateName": "spread-"}}
                    assert fresh.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
                posts += 1
            counts = []
            for _ in range(10):
                with httpx.Client(base_url=server.url, timeout=10) as fresh:
                    text = fresh.get("/metrics").text
                counts.append(
                    sum(
                        float(v)
                        for v in re.findall(r'^apiserver_request_total\{[^}]*verb="POST"[^}]*\} (\S+)$', text, re.M)
                    )
                )
    finally:
        server.kill()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{workers[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{workers[0]}").exists()


def test_gateway_waits_for_storage_then_says_why(tmp_path: Path) -> None:
    """A gateway whose storage does not answer tries again, logging why, for
    --storage-initialization-timeout; then it stops naming the storage (it printed nothing)."""
    nobody = free_port()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "protokube",
            "gateway",
            "--storage",
            f"127.0.0.1:{nobody}",
            "--storage-initialization-timeout=6s",
            "--data-dir",
            str(tmp_path),
            "--listen",
            f"127.0.0.1:{free_port()}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"storage 127.0.0.1:{nobody} not reachable yet" in result.stderr
    assert f"protokube gateway: storage 127.0.0.1:{nobody} not reachable after 6 s" in result.stderr


def test_help_is_help() -> None:
    """`protokube gateway --help` prints the help (not the --storage error); defaults are shown
    only where they are plain values."""
    for command in ("gateway", "serve"):
        shown = subprocess.run(
            [sys.executable, "-m", "protokube", command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert shown.returncode == 0 and shown.stdout.startswith(f"usage: protokube {command}")
        assert "--storage-initialization-timeout" in shown.stdout
        for noise in (
            "(default: None)",
            "RuntimeConfig(",
            "{'",
            "(default: False)",
            "(default: made in --data-dir) (default",
        ):
            assert noise not in " ".join(shown.stdout.split()), noise
