"""The gateway on a three-member etcd cluster (Debian's etcd-server): members given as a list,
a member (the raft leader) killed under write load — no acknowledged write lost, the watch
resumes without gaps or duplicates, the member catches up when it returns; and the version check
that sends consistent reads to storage on an etcd without ordered progress notifications."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc as pb_grpc

from .helpers import NO_ROOT_CA_PUBLISHER, GatewayProcess, free_port

ETCD = shutil.which("etcd")
pytestmark = pytest.mark.skipif(ETCD is None, reason="etcd not installed (Debian package etcd-server)")
NAMES = ("m1", "m2", "m3")


class Member:
    def __init__(self, name: str, data: Path, cluster: str, client: int, peer: int) -> None:
        self.name, self.data, self.cluster, self.client, self.peer = name, data, cluster, client, peer
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.client}"

    def start(self, state: str = "new") -> None:
        argv = [
            ETCD, f"--name={self.name}", f"--data-dir={self.data}",
            f"--listen-client-urls=http://{self.address}", f"--advertise-client-urls=http://{self.address}",
            f"--listen-peer-urls=http://127.0.0.1:{self.peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{self.peer}",
            f"--initial-cluster={self.cluster}", f"--initial-cluster-state={state}",
            "--initial-cluster-token=protokube-test",
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def status(self, timeout: float = 1.0) -> pb.StatusResponse:
        with grpc.insecure_channel(self.address) as channel:
            return pb_grpc.MaintenanceStub(channel).Status(pb.StatusRequest(), timeout=timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[Member]]:
    ports = [(free_port(), free_port()) for _ in NAMES]
    spec = ",".join(f"{n}=http://127.0.0.1:{p}" for n, (_, p) in zip(NAMES, ports, strict=True))
    members = [Member(n, tmp_path / n, spec, c, p) for n, (c, p) in zip(NAMES, ports, strict=True)]
    for member in members:
        member.start()
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if all(m.status().leader for m in members):
                    break
            except grpc.RpcError:
                pass
            assert time.monotonic() < deadline, "the etcd cluster did not form"
            time.sleep(0.2)
        yield members
    finally:
        for member in members:
            member.kill()


def test_a_member_dies_under_load_and_nothing_is_lost(tmp_path: Path, cluster: list[Member]) -> None:
    leader_id = cluster[0].status().leader
    leader = next(m for m in cluster if m.status().header.member_id == leader_id)
    # The raft leader first: it is the member the gateway talks to, so its death also tests failover.
    storage = ",".join(m.address for m in [leader, *(m for m in cluster if m is not leader)])
    # Without the root CA publisher: its kube-root-ca.crt, written once the gateway is elected (later on
    # an etcd cluster), would be one more ADDED in the watched namespace than the test's own writes.
    server = GatewayProcess(tmp_path / "gw", "--storage", storage, NO_ROOT_CA_PUBLISHER).start()
    try:
        assert any("consistent reads go to storage" in line for line in server.log) == (
            cluster[0].status().version < "3.4.31"  # Debian's etcd 3.4.23: no ordered progress notifications
        )
        client = server.client()
        path = "/api/v1/namespaces/default/configmaps"
        rv = client.get(path).json()["metadata"]["resourceVersion"]
        seen: list[tuple[str, str, int]] = []
        stop = threading.Event()

        def watch() -> None:
            with httpx.Client(base_url=server.url, timeout=60) as http:
                resume = rv
                while not stop.is_set():
                    try:
                        params = {"watch": "1", "resourceVersion": resume, "timeoutSeconds": "20"}
                        with http.stream("GET", path, params=params) as stream:
                            for line in stream.iter_lines():
                                event = json.loads(line)
                                meta = event["object"]["metadata"]
                                if event["type"] == "ERROR":
                                    raise AssertionError(event)
                                seen.append((event["type"], meta["name"], int(meta["resourceVersion"])))
                                resume = meta["resourceVersion"]
                    except httpx.HTTPError:
                        time.sleep(0.2)  # the gateway is there; only its stream broke: resume

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        acknowledged: list[str] = []
        failures = 0
        for i in range(60):
            if i == 20:
                leader.kill()
            name = f"cm-{i}"
            deadline = time.monotonic() + 30
            while True:
                response = client.post(path, json={"metadata": {"name": name}, "data": {"i": str(i)}})
                if response.status_code in (201, 409):  # 409: an earlier try was applied after all
                    acknowledged.append(name)
                    break
                assert response.status_code in (500, 503, 504), response.text
                failures += 1
                assert time.monotonic() < deadline, f"writes did not resume: {response.text}"
                time.sleep(0.2)

        print(f"writes that failed while the cluster elected a new leader: {failures}")
        listed = {i["metadata"]["name"] for i in client.get(path).json()["items"]}
        assert set(acknowledged) <= listed
        deadline = time.monotonic() + 20
        while len({name for _, name, _ in seen}) < len(acknowledged) and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        names = [name for kind, name, _ in seen if kind == "ADDED"]
        assert sorted(names) == sorted(set(names)) and set(names) == set(acknowledged)  # no gap, no duplicate
        revisions = [r for _, _, r in seen]
        assert revisions == sorted(revisions)

        leader.start(state="existing")  # back: it catches up from the others
        deadline = time.monotonic() + 30
        while True:
            try:
                if leader.status().header.revision >= int(client.get(path).json()["metadata"]["resourceVersion"]):
                    break
            except grpc.RpcError:
                pass
            assert time.monotonic() < deadline, "the returning member did not catch up"
            time.sleep(0.2)
        client.close()
    finally:
        server.kill()
