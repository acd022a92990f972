"""protokube.testing.Server against real `protokube serve` processes."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import grpc
import httpx
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.etcdserverpb import rpc_pb2_grpc as rpc_grpc
from protokube.testing import Server, ServerError
from tests.gateway.helpers import etcd_process

from .procs import gone

KUBECTL = next((p for p in ("/usr/lib/google-cloud-sdk/bin/kubectl.1.32", "/usr/bin/kubectl") if shutil.which(p)), None)


def kubectl(server: Server, *args: str) -> str:
    assert KUBECTL is not None, "kubectl is not installed"
    done = subprocess.run(
        [KUBECTL, "--kubeconfig", str(server.kubeconfig), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_server_is_ready_on_entry_and_gone_after_exit() -> None:
    with Server(insecure=True) as api:
        with api.client() as client:
            assert client.get("/readyz").status_code == 200  # ready on entry, no waiting here
            assert client.get("/apis/authentication.k8s.io/v1/selfsubjectreviews").status_code == 405
            review = client.post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            ).json()
        assert "system:masters" in review["status"]["userInfo"]["groups"]  # the admin's certificate
        assert "default" in kubectl(api, "get", "namespaces", "-o", "name").split("namespace/")[1:][0]
        assert api.insecure_url is not None
        assert httpx.get(f"{api.insecure_url}/api/v1/namespaces/default").json()["metadata"]["name"] == "default"
        assert api.admin.ca.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
        data_dir, port = api.data_dir, api.port
    assert not data_dir.exists()
    assert gone(data_dir, port) == ([], False)


def test_insecure_url_only_when_asked() -> None:
    with Server(storage="memory") as api:
        assert api.insecure_url is None
        assert api.url.startswith("https://127.0.0.1:")


def test_in_memory_storage_keeps_objects_and_writes_no_database() -> None:
    with Server(storage="memory") as api:
        kubectl(api, "create", "configmap", "settings", "--from-literal=color=blue")
        assert kubectl(api, "get", "configmap", "settings", "-o", "jsonpath={.data.color}") == "blue"
        assert not list((api.data_dir / "storage").glob("storage.db*"))  # SQLite in memory, not in the dir
        assert "--in-memory" in Path(f"/proc/{storage_child(api)}/cmdline").read_text()


def storage_child(api: Server) -> int:
    assert api.process is not None
    children = Path(f"/proc/{api.process.pid}/task/{api.process.pid}/children").read_text().split()
    return int(children[0])


def test_a_bad_flag_fails_at_once_with_the_servers_own_words() -> None:
    started = time.monotonic()
    with pytest.raises(ServerError) as caught:
        Server(args=["--no-such-flag"]).start()
    assert "protokube serve: unrecognized arguments: --no-such-flag" in str(caught.value)
    assert time.monotonic() - started < 20  # not the start timeout (60 s)


def test_a_taken_port_fails_with_the_servers_own_words() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ServerError) as caught:
            Server(port=taken.getsockname()[1]).start()
    assert "Address already in use" in str(caught.value)


def test_a_fixed_data_dir_is_kept_for_inspection(tmp_path: Path) -> None:
    with Server(data_dir=tmp_path / "kept", feature_gates={"CBORServingAndStorage": True}) as api:
        with api.client() as client:
            response = client.get("/api/v1/namespaces/default", headers={"Accept": "application/cbor"})
        assert response.headers["content-type"] == "application/cbor"  # the feature gate reached the server
    assert (tmp_path / "kept" / "kubeconfig").exists()
    assert "protokube serving on" in (tmp_path / "kept" / "serve.log").read_text()
    assert (tmp_path / "kept" / "storage" / "storage.db").exists()


def test_runtime_config_reaches_the_server() -> None:
    with Server(storage="memory", runtime_config={"api/all": False, "api/v1": True}) as api, api.client() as client:
        assert client.get("/apis/apps/v1").status_code == 404
        assert client.get("/api/v1").status_code == 200


@pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd not installed (Debian package etcd-server)")
def test_an_etcd_endpoint_as_storage(tmp_path: Path) -> None:
    with etcd_process(tmp_path / "etcd") as address, Server(storage=address) as api:
        kubectl(api, "create", "configmap", "on-etcd", "--from-literal=a=b")
        with grpc.insecure_channel(address) as channel:
            stored = rpc_grpc.KVStub(channel).Range(rpc.RangeRequest(key=b"/registry/configmaps/default/on-etcd"))
        assert stored.count == 1  # in etcd itself
        assert not (api.data_dir / "storage").exists()  # no embedded storage
