"""Several gateways on one storage: the controllers run in the one holding the controllers' Lease;
when it dies another takes over, and work it started (a namespace deletion) finishes; compaction
of an external storage happens once per interval between them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc as pb_grpc
from tests.storage.helpers import StorageProcess

from .helpers import NO_ROOT_CA_PUBLISHER, GatewayProcess, etcd_process

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/protokube-controller-manager"
FAST = (
    "--leader-elect-lease-duration",
    "3",
    "--leader-elect-renew-deadline",
    "2",
    "--leader-elect-retry-period",
    "0.5",
)


def holder(client: httpx.Client) -> str:
    return client.get(LEASE).json()["spec"].get("holderIdentity", "")


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_one_gateway_runs_the_controllers_and_another_takes_over(tmp_path: Path) -> None:
    storage = StorageProcess(tmp_path / "storage").start()
    a = GatewayProcess(tmp_path / "a", "--storage", storage.address, *FAST).start()
    b = GatewayProcess(tmp_path / "b", "--storage", storage.address, *FAST).start()
    try:
        with a.client() as client_a, b.client() as client_b:
            wait_for(lambda: holder(client_a) != "", 10, "nobody took the Lease")
            leader, other = (a, b) if holder(client_a).endswith(f":{a.secure_port}") else (b, a)
            assert holder(client_b).endswith(f":{leader.secure_port}")
            spec = client_a.get(LEASE).json()["spec"]
            assert spec["leaseDurationSeconds"] == 3 and spec["leaseTransitions"] == 0
            time.sleep(1.5)  # several retry periods: the holder renews, the other does not take over
            assert holder(client_a).endswith(f":{leader.secure_port}")

            # A namespace whose deletion waits on a finalizer; the leader dies meanwhile.
            survivor = other.client()
            assert survivor.post("/api/v1/namespaces", json={"metadata": {"name": "handover"}}).status_code == 201
            cm = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
            assert survivor.post("/api/v1/namespaces/handover/configmaps", json=cm).status_code == 201
            assert survivor.delete("/api/v1/namespaces/handover").status_code == 200
            os.killpg(leader.proc.pid, signal.SIGKILL)  # no release: the Lease must expire
            leader.proc.wait(10)

            wait_for(lambda: holder(survivor).endswith(f":{other.secure_port}"), 15, "no takeover")
            lease = survivor.get(LEASE).json()["spec"]
            assert lease["leaseTransitions"] == 1
            patch = {"metadata": {"finalizers": None}}
            headers = {"Content-Type": "application/merge-patch+json"}
            survivor.patch("/api/v1/namespaces/handover/configmaps/held", json=patch, headers=headers)
            wait_for(
                lambda: survivor.get("/api/v1/namespaces/handover").status_code == 404,
                15,
                "the new leader's namespace controller did not finish the deletion",
            )
            survivor.close()
    finally:
        a.kill()
        b.kill()
        storage.kill()


def test_a_stopping_leader_releases_the_lease(tmp_path: Path) -> None:
    storage = StorageProcess(tmp_path / "storage").start()
    a = GatewayProcess(tmp_path / "a", "--storage", storage.address).start()  # default 15 s lease
    try:
        with a.client() as client:
            wait_for(lambda: holder(client).endswith(f":{a.secure_port}"), 10, "no leader")
        a.kill()  # SIGTERM: a graceful stop gives the Lease up
        b = GatewayProcess(tmp_path / "b", "--storage", storage.address).start()
        try:
            with b.client() as client:
                wait_for(lambda: holder(client).endswith(f":{b.secure_port}"), 5, "the Lease was not released")
        finally:
            b.kill()
    finally:
        a.kill()
        storage.kill()


@contextlib.contextmanager
def external_storage(kind: str, tmp_path: Path) -> Iterator[str]:
    """Our storage service without its own compaction, or Debian's etcd: its address."""
    if kind == "etcd":
        if shutil.which("etcd") is None:
            pytest.skip("etcd is not installed (Debian package etcd-server)")
        with etcd_process(tmp_path / "etcd") as address:
            yield address
        return
    storage = StorageProcess(tmp_path / "storage", "--compaction-retention", "0").start()
    try:
        yield storage.address
    finally:
        storage.kill()


@pytest.mark.parametrize("kind", ["ours", "etcd"])
def test_gateways_compact_external_storage_once_per_interval(tmp_path: Path, kind: str) -> None:
    """upstream's compact_rev_key protocol: each interval one gateway takes the turn and compacts
    to the revision seen one interval earlier; two gateways never compact twice for one interval."""
    with external_storage(kind, tmp_path) as address:
        compaction_scenario(tmp_path, address)


def compaction_scenario(tmp_path: Path, address: str) -> None:
    flags = ("--storage", address, "--etcd-compaction-interval", "1s")
    started = time.monotonic()  # the first gateway's compactor starts after this
    a = GatewayProcess(tmp_path / "a", *flags).start()
    b = GatewayProcess(tmp_path / "b", *flags).start()
    try:
        with a.client() as client:
            for i in range(5):
                body = {"metadata": {"name": f"c{i}"}}
                assert client.post("/api/v1/namespaces/default/configmaps", json=body).status_code == 201
            first = int(client.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"])
            with grpc.insecure_channel(address) as channel:
                kv = pb_grpc.KVStub(channel)

                def compacted_past(revision: int) -> bool:
                    try:
                        kv.Range(pb.RangeRequest(key=b"a", revision=revision), timeout=2)
                    except grpc.RpcError as err:
                        return "compacted" in (err.details() or "")
                    return False

                wait_for(lambda: compacted_past(first), 10, "storage was never compacted")
                turns = kv.Range(pb.RangeRequest(key=b"compact_rev_key"), timeout=2).kvs[0].version
                elapsed = time.monotonic() - started
                assert turns <= elapsed / 1.0 + 1  # one turn per interval, not one per gateway
            # An old watch start is gone (410), the current one works.
            old = client.get("/api/v1/namespaces/default/configmaps", params={"watch": "1", "resourceVersion": "1"})
            assert '"code":410' in old.text or old.status_code == 410
    finally:
        a.kill()
        b.kill()


def test_two_gateways_serve_one_storage_as_one_server(tmp_path: Path) -> None:
    """A write through A is seen by a watch on B; a continue token from A works on B; a watch on A
    killed mid-stream resumes on B from its last resourceVersion, with no gap and no duplicate."""
    storage = StorageProcess(tmp_path / "storage").start()
    a = GatewayProcess(tmp_path / "a", "--storage", storage.address, NO_ROOT_CA_PUBLISHER).start()
    b = GatewayProcess(tmp_path / "b", "--storage", storage.address, NO_ROOT_CA_PUBLISHER).start()
    path = "/api/v1/namespaces/default/configmaps"  # only the test's: no kube-root-ca.crt
    try:
        with a.client() as on_a, b.client() as on_b:
            start = on_a.get(path).json()["metadata"]["resourceVersion"]
            for i in range(6):
                assert on_a.post(path, json={"metadata": {"name": f"shared-{i}"}}).status_code == 201
            page = on_a.get(path, params={"limit": "2"}).json()
            rest = on_b.get(path, params={"limit": "10", "continue": page["metadata"]["continue"]}).json()
            names = [i["metadata"]["name"] for i in page["items"] + rest["items"]]
            assert names == [f"shared-{i}" for i in range(6)]

            seen: list[str] = []
            params = {"watch": "1", "resourceVersion": start, "timeoutSeconds": "30"}
            with on_b.stream("GET", path, params=params) as stream:
                for line in stream.iter_lines():
                    seen.append(json.loads(line)["object"]["metadata"]["name"])
                    if len(seen) == 3:
                        break
            last_rv = on_b.get(f"{path}/{seen[-1]}").json()["metadata"]["resourceVersion"]

            with on_a.stream("GET", path, params={**params, "resourceVersion": last_rv}) as stream:
                lines = stream.iter_lines()
                seen.append(json.loads(next(lines))["object"]["metadata"]["name"])
                os.killpg(a.proc.pid, signal.SIGKILL)  # the gateway dies mid-watch
                with contextlib.suppress(httpx.HTTPError):
                    for _ in lines:
                        pass
            a.proc.wait(10)
            resume = on_b.get(f"{path}/{seen[-1]}").json()["metadata"]["resourceVersion"]
            params = {"watch": "1", "resourceVersion": resume, "timeoutSeconds": "2"}
            with on_b.stream("GET", path, params=params) as stream:
                seen += [json.loads(line)["object"]["metadata"]["name"] for line in stream.iter_lines()]
            assert seen == [f"shared-{i}" for i in range(6)]
    finally:
        a.kill()
        b.kill()
        storage.kill()
