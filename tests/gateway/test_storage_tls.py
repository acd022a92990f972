"""Storage over mutual TLS: `protokube storage` and a real etcd with etcd's TLS flags, the gateway
with kube-apiserver's --etcd-cafile/--etcd-certfile/--etcd-keyfile, certificates from `protokube certs`."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from protokube.gateway.security import certs

from .helpers import ROOT, GatewayProcess, free_port

ETCDCTL, ETCD = shutil.which("etcdctl"), shutil.which("etcd")
PROTOKUBE = (sys.executable, "-m", "protokube")


def protokube(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PROTOKUBE, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, Path]:
    """A CA (as `protokube serve` makes it), a storage serving certificate and a gateway client one."""
    data = tmp_path_factory.mktemp("data")
    certs.ensure(data / "pki")
    out = data / "issued"
    assert (
        protokube(
            "certs", "serving", "storage", "--san", "127.0.0.1", "--data-dir", str(data), "--out", str(out)
        ).returncode
        == 0
    )
    assert protokube("certs", "issue", "protokube-gateway", "--data-dir", str(data), "--out", str(out)).returncode == 0
    return {
        "ca": data / "pki" / "ca.crt",
        "server_cert": out / "storage.crt",
        "server_key": out / "storage.key",
        "client_cert": out / "protokube-gateway.crt",
        "client_key": out / "protokube-gateway.key",
    }


@contextmanager
def running(argv: list[str], ready: str, timeout: float = 30) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + timeout
        assert proc.stdout is not None
        for line in proc.stdout:
            if re.search(ready, line):
                break
            assert time.monotonic() < deadline, "did not start"
        else:
            raise AssertionError(f"{argv[0]} exited: {proc.wait()}")
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def gateway_over_tls(tmp: Path, address: str, pki: dict[str, Path]) -> GatewayProcess:
    return GatewayProcess(
        tmp,
        "--storage",
        address,
        "--etcd-cafile",
        str(pki["ca"]),
        "--etcd-certfile",
        str(pki["client_cert"]),
        "--etcd-keyfile",
        str(pki["client_key"]),
    ).start()


def check_gateway(server: GatewayProcess) -> None:
    with server.client() as client:
        body = {"metadata": {"name": "over-tls"}, "data": {"k": "v"}}
        assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
        assert client.get("/api/v1/namespaces/default/configmaps/over-tls").json()["data"] == {"k": "v"}


def test_storage_refuses_other_hosts_without_mutual_tls(tmp_path: Path, pki: dict[str, Path]) -> None:
    plain = protokube("storage", "--listen", "0.0.0.0:0", "--data-dir", str(tmp_path))
    assert plain.returncode == 2
    assert "is not a loopback address" in plain.stderr and "mutual TLS" in plain.stderr
    one_way = protokube(
        "storage", "--listen", "0.0.0.0:0", "--data-dir", str(tmp_path),
        "--cert-file", str(pki["server_cert"]), "--key-file", str(pki["server_key"]),
    )  # fmt: skip
    assert one_way.returncode == 2 and "mutual TLS" in one_way.stderr


@pytest.mark.skipif(ETCDCTL is None, reason="etcdctl not installed (Debian package etcd-client)")
def test_storage_service_over_mutual_tls(tmp_path: Path, pki: dict[str, Path]) -> None:
    address = f"127.0.0.1:{free_port()}"
    argv = [
        *PROTOKUBE, "storage", "--listen", address, "--data-dir", str(tmp_path / "storage"),
        "--cert-file", str(pki["server_cert"]), "--key-file", str(pki["server_key"]),
        "--trusted-ca-file", str(pki["ca"]), "--client-cert-auth",
    ]  # fmt: skip
    with running(argv, r"storage listening on"):
        tls = ["--cacert", str(pki["ca"]), "--endpoints", f"https://{address}"]
        mutual = [*tls, "--cert", str(pki["client_cert"]), "--key", str(pki["client_key"])]
        ctl = subprocess.run([ETCDCTL, *mutual, "put", "/x", "y"], capture_output=True, text=True, timeout=30)
        assert ctl.returncode == 0, ctl.stderr
        no_cert = subprocess.run(
            [ETCDCTL, *tls, "--command-timeout=3s", "get", "/x"], capture_output=True, text=True, timeout=30
        )
        assert no_cert.returncode != 0  # the handshake needs a client certificate
        server = gateway_over_tls(tmp_path / "gw", address, pki)
        try:
            check_gateway(server)
        finally:
            server.kill()


@pytest.mark.skipif(ETCD is None, reason="etcd not installed (Debian package etcd-server)")
def test_the_same_flags_work_against_a_real_etcd(tmp_path: Path, pki: dict[str, Path]) -> None:
    client, peer = free_port(), free_port()
    address = f"127.0.0.1:{client}"
    argv = [
        ETCD, "--name=tls", f"--data-dir={tmp_path / 'etcd'}",
        f"--listen-client-urls=https://{address}", f"--advertise-client-urls=https://{address}",
        f"--listen-peer-urls=http://127.0.0.1:{peer}", f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
        f"--initial-cluster=tls=http://127.0.0.1:{peer}",
        f"--cert-file={pki['server_cert']}", f"--key-file={pki['server_key']}",
        f"--trusted-ca-file={pki['ca']}", "--client-cert-auth",
    ]  # fmt: skip
    with running(argv, r"serving client traffic securely|ready to serve client requests"):
        server = gateway_over_tls(tmp_path / "gw", address, pki)
        try:
            check_gateway(server)
        finally:
            server.kill()
