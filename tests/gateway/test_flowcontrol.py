"""API Priority and Fairness against real servers
(kubernetes.io/docs/concepts/cluster-administration/flow-control/; issue 16).

Most tests share a server with 6 seats (--max-requests-inflight 4, --max-mutating-requests-inflight
2) and a priority level of their own, ``apf-test``: 3 seats that it neither lends nor borrows,
16 queues, hands of 4, 4 requests per queue. Requests that hold a seat for a known time are writes
whose body the client sends slowly: the handler reads the body while it executes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import socket
import ssl
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from .helpers import NO_ROOT_CA_PUBLISHER, ROOT, GatewayProcess, Kubectl, kubectl_path, store_copies

FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
TOKENS = ["elephant", "mouse", "burst", "flooder", "watcher", "lister", "writer", "system:kube-controller-manager"]
TOO_MANY = "Too many requests, please try again later.\n"
SMALL_LIMITS = ("--max-requests-inflight", "4", "--max-mutating-requests-inflight", "2")
TEST_LEVEL = {
    "metadata": {"name": "apf-test"},
    "spec": {
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": 245,  # half the shares: ceil(6 × 245 / 490) = 3 seats
            "lendablePercent": 0,
            "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 4}},
        },
    },
}
ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": True}


def flow_schema(name: str, level: str, users: list[str], precedence: int = 500) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "priorityLevelConfiguration": {"name": level},
            "matchingPrecedence": precedence,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": u}} for u in users],
                    "resourceRules": [dict(ALL_RESOURCES)],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                }
            ],
        },
    }


def start(data: Path, *args: str) -> GatewayProcess:
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f"{name}-token,{name},uid-{i}\n" for i, name in enumerate(TOKENS)))
    return GatewayProcess(data, "--token-auth-file", str(tokens), "--authorization-mode", "AlwaysAllow", *args).start()


def token(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {user}-token"}


def tls(server: GatewayProcess) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")


def as_user(server: GatewayProcess, user: str | None, **kwargs: Any) -> httpx.Client:
    headers = token(user) if user else {}
    return httpx.Client(base_url=server.secure_url, verify=tls(server), headers=headers, timeout=30, **kwargs)


def async_user(server: GatewayProcess, user: str, **kwargs: Any) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
    kwargs.setdefault("timeout", 30)
    return httpx.AsyncClient(
        base_url=server.secure_url, verify=tls(server), headers=token(user), limits=limits, **kwargs
    )


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    text: str


async def slow_create(
    server: GatewayProcess, user: str, namespace: str, hold: float, release: asyncio.Event | None = None
) -> Answer:
    """A ConfigMap create as ``user`` (impersonated on the plain-HTTP port) whose body takes
    ``hold`` seconds to arrive (or until ``release`` is set). A raw HTTP/1.1 exchange: the server may
    answer (429) before the body is complete, which HTTP clients that send first and read after
    cannot see."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    first, rest = b'{"metadata": {"generateName": "slow-"},', b'"data": {}}'
    head = (
        f"POST /api/v1/namespaces/{namespace}/configmaps HTTP/1.1\r\nHost: apf\r\n"
        f"Impersonate-User: {user}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(first) + len(rest)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + first)
    await writer.drain()
    answered = asyncio.ensure_future(reader.readuntil(b"\r\n\r\n"))
    released = asyncio.ensure_future(release.wait() if release is not None else asyncio.sleep(hold))
    await asyncio.wait([answered, released], timeout=hold, return_when=asyncio.FIRST_COMPLETED)
    released.cancel()
    if not answered.done():
        with contextlib.suppress(ConnectionError):
            writer.write(rest)
            await writer.drain()
    lines = (await answered).decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()
    return Answer(int(lines[0].split()[1]), headers, body.decode())


async def flood(server: GatewayProcess, user: str, width: int, hold: float, until: float) -> list[Answer]:
    """``width`` clients creating slowly in a loop; after a 429 a client pauses (as client-go does)."""
    answers: list[Answer] = []

    async def one() -> None:
        while time.monotonic() < until:
            response = await slow_create(server, user, "apf", hold)
            answers.append(response)
            if response.status_code == 429:
                await asyncio.sleep(0.2)

    await asyncio.gather(*(one() for _ in range(width)))
    return answers


def families(server: GatewayProcess) -> dict[str, list]:
    with server.client() as client:
        text = client.get("/metrics").text
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def metric(server: GatewayProcess, family: str, sample: str, **labels: str) -> float:
    samples = families(server).get(family, [])
    return sum(s.value for s in samples if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()))


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def uid_of(client: httpx.Client, plural: str, name: str) -> str:
    response = client.get(f"{FC}/{plural}/{name}")
    assert response.status_code == 200, response.text
    return response.json()["metadata"]["uid"]


async def seats_taken(server: GatewayProcess, level: str, seats: int) -> None:
    """Until ``seats`` requests of ``level`` execute: slow creates hold their seats once the server
    has read their heads, which a loaded machine may take long to do."""
    family = "apiserver_flowcontrol_current_executing_requests"
    deadline = time.monotonic() + 30
    while (running := await asyncio.to_thread(metric, server, family, family, priority_level=level)) < seats:
        assert time.monotonic() < deadline, f"{level}: {running:.0f} of {seats} seats taken after 30 s"
        await asyncio.sleep(0.02)


def waited_in_queue(server: GatewayProcess, level: str) -> tuple[float, float]:
    """The server's own count and sum of queue waits of ``level``'s requests that did not execute."""
    family = "apiserver_flowcontrol_request_wait_duration_seconds"
    labels = {"priority_level": level, "execute": "false"}
    return metric(server, family, family + "_count", **labels), metric(server, family, family + "_sum", **labels)


def eventually(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def apf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = start(tmp_path_factory.mktemp("apf"), *SMALL_LIMITS)
    with process.client() as admin:
        assert admin.post(f"{FC}/prioritylevelconfigurations", json=TEST_LEVEL).status_code == 201
        users = ["elephant", "mouse", "burst", "watcher"]
        assert admin.post(f"{FC}/flowschemas", json=flow_schema("apf-test", "apf-test", users)).status_code == 201
        assert admin.post("/api/v1/namespaces", json={"metadata": {"name": "apf"}}).status_code == 201
    with as_user(process, "mouse") as mouse:  # the configuration is in force once the headers say so
        level = uid_of(process.client(), "prioritylevelconfigurations", "apf-test")
        eventually(
            lambda: mouse.get("/api/v1/namespaces/apf").headers.get("X-Kubernetes-PF-PriorityLevel-UID") == level
        )
    yield process
    process.kill()


# ---- objects, kubectl, classification -------------------------------------------------------------


def test_kubectl_shows_the_configuration_and_the_debug_dumps(apf: GatewayProcess, tmp_path: Path) -> None:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed")
    kubectl = Kubectl(apf.url, tmp_path)
    schemas = kubectl.run("get", "flowschemas").stdout.splitlines()
    assert schemas[0].split() == [
        "NAME",
        "PRIORITYLEVEL",
        "MATCHINGPRECEDENCE",
        "DISTINGUISHERMETHOD",
        "AGE",
        "MISSINGPL",
    ]
    rows = {line.split()[0]: line.split() for line in schemas[1:]}
    assert set(rows) >= {
        "exempt", "probes", "system-leader-election", "endpoint-controller", "workload-leader-election",
        "system-node-high", "system-nodes", "kube-controller-manager", "kube-scheduler",
        "kube-system-service-accounts", "service-accounts", "global-default", "catch-all",
    }  # fmt: skip
    assert rows["exempt"][1:4] == ["exempt", "1", "<none>"]
    assert rows["kube-scheduler"][1:4] == ["workload-high", "800", "ByNamespace"]
    assert rows["global-default"][-1] == "False"  # MISSINGPL: the Dangling condition
    levels = kubectl.run("get", "prioritylevelconfigurations").stdout.splitlines()
    assert levels[0].split() == [
        "NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE",
    ]  # fmt: skip
    by_name = {line.split()[0]: line.split() for line in levels[1:]}
    assert by_name["workload-low"][1:6] == ["Limited", "100", "128", "6", "50"]
    assert by_name["leader-election"][1:6] == ["Limited", "10", "16", "4", "50"]
    assert by_name["catch-all"][1:3] == ["Limited", "5"]

    for kind in ("flowschemas", "prioritylevelconfigurations"):  # the documentation's UID → name maps
        out = kubectl.run("get", kind, "-o", "custom-columns=uid:{metadata.uid},name:{metadata.name}").stdout
        lines = out.splitlines()
        assert lines[0].split() == ["uid", "name"]
        with apf.client() as admin:
            assert lines[1].split() == [uid_of(admin, kind, lines[1].split()[1]), lines[1].split()[1]]

    dump = "/debug/api_priority_and_fairness/"
    levels_dump = kubectl.run("get", "--raw", dump + "dump_priority_levels").stdout.splitlines()
    assert levels_dump[0] == (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests,"
    )
    assert "exempt,            <none>,       <none>, <none>,      <none>,          <none>," in levels_dump
    queues = kubectl.run("get", "--raw", dump + "dump_queues").stdout.splitlines()
    assert queues[0] == "PriorityLevelName, Index,  PendingRequests, ExecutingRequests, VirtualStart,"
    assert sum(1 for q in queues if q.startswith("leader-election,")) == 16
    requests = kubectl.run("get", "--raw", dump + "dump_requests").stdout.splitlines()
    assert requests[0].split() == [
        "PriorityLevelName,", "FlowSchemaName,", "QueueIndex,", "RequestIndexInQueue,", "FlowDistingsher,",
        "ArriveTime,",
    ]  # fmt: skip
    detailed = kubectl.run("get", "--raw", dump + "dump_requests?includeRequestDetails=1").stdout.splitlines()
    assert detailed[0].split()[6:] == [
        "UserName,", "Verb,", "APIPath,", "Namespace,", "Name,", "APIVersion,", "Resource,", "SubResource,",
    ]  # fmt: skip


def test_responses_name_the_flow_schema_and_level_by_uid(apf: GatewayProcess) -> None:
    with apf.client() as admin:
        uids = {
            (kind, name): uid_of(admin, kind, name)
            for kind, names in (
                ("flowschemas", ("exempt", "global-default", "apf-test", "system-leader-election", "probes")),
                ("prioritylevelconfigurations", ("exempt", "global-default", "apf-test", "leader-election")),
            )
            for name in names
        }
        answer = admin.get("/api/v1/namespaces")  # the insecure port acts as system:masters
        assert answer.headers["X-Kubernetes-PF-FlowSchema-UID"] == uids[("flowschemas", "exempt")]
        assert answer.headers["X-Kubernetes-PF-PriorityLevel-UID"] == uids[("prioritylevelconfigurations", "exempt")]

    def classified(user: str | None, method: str, path: str) -> tuple[str, str]:
        with as_user(apf, user) as client:
            response = client.request(method, path)
        return response.headers["X-Kubernetes-PF-FlowSchema-UID"], response.headers["X-Kubernetes-PF-PriorityLevel-UID"]

    fs, pl = classified("flooder", "GET", "/api/v1/namespaces")
    assert (fs, pl) == (
        uids[("flowschemas", "global-default")],
        uids[("prioritylevelconfigurations", "global-default")],
    )
    assert classified("mouse", "GET", "/api/v1/namespaces")[1] == uids[("prioritylevelconfigurations", "apf-test")]
    leases = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"
    kcm = classified("system:kube-controller-manager", "GET", leases)  # a 404, classified all the same
    assert kcm == (
        uids[("flowschemas", "system-leader-election")],
        uids[("prioritylevelconfigurations", "leader-election")],
    )
    assert classified(None, "GET", "/healthz")[0] == uids[("flowschemas", "probes")]  # anonymous probes: exempt


def test_the_documented_health_for_strangers_schema_works_as_written(apf: GatewayProcess) -> None:
    """HEAD is not one of the probes schema's verbs; the documentation's schema (verbs "*") exempts it."""
    schema = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": "health-for-strangers"},
        "spec": {
            "matchingPrecedence": 1000,
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": [
                {
                    "nonResourceRules": [{"nonResourceURLs": ["/healthz", "/livez", "/readyz"], "verbs": ["*"]}],
                    "subjects": [{"kind": "Group", "group": {"name": "system:unauthenticated"}}],
                }
            ],
        },
    }
    with apf.client() as admin, as_user(apf, None) as stranger:
        assert stranger.head("/livez").headers["X-Kubernetes-PF-PriorityLevel-UID"] == uid_of(
            admin, "prioritylevelconfigurations", "global-default"
        )
        assert admin.post(f"{FC}/flowschemas", json=schema).status_code == 201
        uid = uid_of(admin, "flowschemas", "health-for-strangers")
        eventually(lambda: stranger.head("/livez").headers["X-Kubernetes-PF-FlowSchema-UID"] == uid)
        assert stranger.head("/readyz/etcd").headers["X-Kubernetes-PF-FlowSchema-UID"] == uid  # below /readyz too
        assert admin.delete(f"{FC}/flowschemas/health-for-strangers").status_code == 200


def test_a_schema_pointing_at_a_missing_level_is_dangling_and_ignored(apf: GatewayProcess) -> None:
    with apf.client() as admin, as_user(apf, "flooder") as flooder:
        assert (
            admin.post(f"{FC}/flowschemas", json=flow_schema("dangler", "no-such-level", ["flooder"], 100)).status_code
            == 201
        )

        def condition() -> dict[str, Any] | None:
            conditions = admin.get(f"{FC}/flowschemas/dangler").json().get("status", {}).get("conditions", [])
            return next((c for c in conditions if c["type"] == "Dangling"), None)

        eventually(lambda: condition() is not None)
        dangling = condition()
        assert dangling is not None
        assert (dangling["status"], dangling["reason"]) == ("True", "NotFound")
        assert dangling["message"] == (
            'This FlowSchema references the PriorityLevelConfiguration object named "no-such-level" '
            "but there is no such object"
        )
        response = flooder.get("/api/v1/namespaces")  # matched by global-default instead
        assert response.status_code == 200
        assert response.headers["X-Kubernetes-PF-FlowSchema-UID"] == uid_of(admin, "flowschemas", "global-default")
        admin.delete(f"{FC}/flowschemas/dangler")


# ---- fairness, isolation, bursts ------------------------------------------------------------------


def test_an_elephant_is_refused_while_a_mouse_of_the_same_level_is_served(apf: GatewayProcess) -> None:
    """Elephant: 60 clients (20× the level's 3 seats) holding a seat 0.6 s each; mouse: one quick
    request every 0.3 s (10% of the level)."""
    rejected_before = metric(
        apf, "apiserver_flowcontrol_rejected_requests", "apiserver_flowcontrol_rejected_requests_total",
        flow_schema="apf-test", priority_level="apf-test", reason="queue-full",
    )  # fmt: skip

    async def scenario() -> tuple[list[Answer], list[tuple[int, float]]]:
        async with async_user(apf, "mouse") as mouse:
            until = time.monotonic() + 5
            flooding = asyncio.create_task(flood(apf, "elephant", 60, 0.6, until))
            await asyncio.sleep(0.5)
            mice = []
            while time.monotonic() < until - 0.3:
                started = time.monotonic()
                response = await mouse.get("/api/v1/namespaces/apf/configmaps", params={"limit": "1"})
                mice.append((response.status_code, time.monotonic() - started))
                await asyncio.sleep(0.3)
            return await flooding, mice

    elephants, mice = asyncio.run(scenario())
    assert len(mice) >= 6
    assert all(code == 200 for code, _ in mice), mice
    assert max(latency for _, latency in mice) < 1.5, mice  # at most about one elephant's hold
    refused = [r for r in elephants if r.status_code == 429]
    assert refused and any(r.status_code == 201 for r in elephants)
    assert refused[0].text == TOO_MANY
    assert refused[0].headers["content-type"] == "text/plain; charset=utf-8"
    assert int(refused[0].headers["retry-after"]) >= 1
    assert refused[0].headers["x-kubernetes-pf-prioritylevel-uid"]
    rejected = metric(
        apf, "apiserver_flowcontrol_rejected_requests", "apiserver_flowcontrol_rejected_requests_total",
        flow_schema="apf-test", priority_level="apf-test", reason="queue-full",
    )  # fmt: skip
    assert rejected - rejected_before >= len(refused)
    dispatched = metric(
        apf, "apiserver_flowcontrol_dispatched_requests", "apiserver_flowcontrol_dispatched_requests_total",
        flow_schema="apf-test", priority_level="apf-test",
    )  # fmt: skip
    assert dispatched >= len(mice)


def test_a_flow_held_back_runs_in_the_background_lane(apf: GatewayProcess) -> None:
    """The event loop's lanes: while APF holds the elephant back, its requests' steps run only when
    no other request's step is ready; a flow that never waits behind itself stays in the foreground."""
    family = "protokube_event_loop_background_callbacks"
    before = metric(apf, family, family + "_total")
    with as_user(apf, "mouse") as mouse:
        for _ in range(20):
            assert mouse.get("/api/v1/namespaces/apf/configmaps").status_code == 200
    assert metric(apf, family, family + "_total") == before
    answers = asyncio.run(flood(apf, "elephant", 20, 0.3, time.monotonic() + 2))
    assert any(a.status_code == 201 for a in answers)
    assert metric(apf, family, family + "_total") > before
    waiting = "protokube_event_loop_background_callbacks_waiting"
    assert metric(apf, waiting, waiting) == 0  # nothing left behind once the flood is over


@pytest.mark.timeout(600)  # up to three rounds of 200 timed requests; minutes on a loaded machine
def test_a_flood_in_global_default_does_not_slow_leader_election_or_exempt(apf: GatewayProcess) -> None:
    """16 clients holding global-default's seats for 1 s each: leader election's requests never
    wait for a seat (the server's wait histogram), and neither they nor exempt ones wait anything
    like a held seat. Their latencies idle and under the flood are not compared: other
    processes share this machine's CPU, and the gateway's one event loop serves the flood too."""
    lease = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    hold = 1.0
    with apf.client() as admin:
        admin.post(lease, json={"metadata": {"name": "isolation"}, "spec": {"holderIdentity": "x"}})

    async def latencies(client: httpx.AsyncClient, path: str, count: int = 50) -> list[float]:
        found = []
        for _ in range(count):
            started = time.monotonic()
            response = await client.get(path)
            assert response.status_code == 200, response.text
            found.append(time.monotonic() - started)
            await asyncio.sleep(0.02)
        return found

    def waits(level: str) -> tuple[float, float]:
        """How many of ``level``'s requests have executed, and how many of them without waiting."""
        samples = families(apf).get("apiserver_flowcontrol_request_wait_duration_seconds", [])
        mine = [s for s in samples if s.labels.get("priority_level") == level and s.labels.get("execute") == "true"]
        total = sum(s.value for s in mine if s.name.endswith("_count"))
        at_once = sum(s.value for s in mine if s.name.endswith("_bucket") and float(s.labels["le"]) == 0)
        return total, at_once

    async def scenario() -> tuple[tuple[float, float], dict[str, float]]:
        async with (
            async_user(apf, "system:kube-controller-manager") as kcm,
            httpx.AsyncClient(base_url=apf.url, timeout=30) as masters,
        ):
            # the flood lasts until the measurements under it are done, however long they take
            flooding = asyncio.create_task(flood(apf, "flooder", 16, hold, time.monotonic() + 300))
            await asyncio.sleep(0.5)
            total_before, at_once_before = waits("leader-election")
            loaded = {"leader-election": p99(await latencies(kcm, f"{lease}/isolation"))}
            loaded["exempt"] = p99(await latencies(masters, f"{lease}/isolation"))
            total, at_once = waits("leader-election")
            levels = (await masters.get("/debug/api_priority_and_fairness/dump_priority_levels")).text
            flooding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flooding
            row = next(line for line in levels.splitlines() if line.startswith("global-default,"))
            assert int(row.split(",")[4]) > 0  # the flood does saturate its level: requests wait
            return (total - total_before, at_once - at_once_before), loaded

    executed, loaded = asyncio.run(scenario())
    assert executed == (50, 50)  # none of leader election's requests waited for a seat
    assert all(p < hold / 4 for p in loaded.values()), loaded  # a request queued behind the flood waits ~1 s


def test_a_burst_within_queue_capacity_is_queued_not_rejected(apf: GatewayProcess) -> None:
    """3 seats and a hand of 4 queues of 4: a burst of 12 holding their seats (until the queued ones
    are seen, 30 s at most; then 0.5 s each) waits its turn."""

    async def scenario() -> tuple[list[Answer], str]:
        release = asyncio.Event()
        sent = [asyncio.create_task(slow_create(apf, "burst", "apf", 30, release)) for _ in range(12)]
        await seats_taken(apf, "apf-test", 3)
        deadline = time.monotonic() + 30
        async with httpx.AsyncClient(base_url=apf.url) as admin:
            while True:  # until the server has read the others' heads and queued them
                dump = (await admin.get("/debug/api_priority_and_fairness/dump_requests")).text
                if any(line.startswith("apf-test,") for line in dump.splitlines()) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.02)
        release.set()
        return list(await asyncio.gather(*sent)), dump

    responses, dump = asyncio.run(scenario())
    assert [r.status_code for r in responses] == [201] * 12
    queued = [line for line in dump.splitlines() if line.startswith("apf-test,")]
    assert queued and all(line.split(",")[4].strip() == "burst" for line in queued)  # flow distinguisher: the user
    current_r = "apiserver_flowcontrol_current_r"
    assert metric(apf, current_r, current_r, priority_level="apf-test") > 0  # virtual time ran while they waited


def test_a_client_that_leaves_while_queued_frees_its_place(apf: GatewayProcess) -> None:
    cancelled = {"flow_schema": "apf-test", "priority_level": "apf-test", "reason": "cancelled"}
    family, sample = "apf-test", "apiserver_flowcontrol_rejected_requests_total"
    before = metric(apf, "apiserver_flowcontrol_rejected_requests", sample, **cancelled)

    def waiting() -> int:
        with apf.client() as admin:
            dump = admin.get("/debug/api_priority_and_fairness/dump_requests").text
        return sum(1 for line in dump.splitlines() if line.startswith(f"{family},"))

    async def scenario() -> None:
        async with async_user(apf, "mouse", timeout=0.6) as mouse:
            release = asyncio.Event()  # the seats are held until the mouse has given up, however long that takes
            holders = [asyncio.create_task(slow_create(apf, "elephant", "apf", 30, release)) for _ in range(3)]
            await seats_taken(apf, "apf-test", 3)
            with pytest.raises(httpx.TimeoutException):
                await mouse.get("/api/v1/namespaces/apf/configmaps")  # queued, then abandoned
            await asyncio.to_thread(eventually, lambda: waiting() == 0)
            release.set()
            await asyncio.gather(*holders)

    asyncio.run(scenario())
    assert metric(apf, "apiserver_flowcontrol_rejected_requests", sample, **cancelled) == before + 1


def test_a_request_waits_at_most_a_quarter_of_its_timeout(apf: GatewayProcess) -> None:
    async def scenario() -> tuple[httpx.Response, float]:
        async with async_user(apf, "mouse") as mouse:
            release = asyncio.Event()  # the seats are held until the mouse is answered, however loaded the machine
            holders = [asyncio.create_task(slow_create(apf, "elephant", "apf", 30, release)) for _ in range(3)]
            await seats_taken(apf, "apf-test", 3)
            started = time.monotonic()
            response = await mouse.get("/api/v1/namespaces/apf/configmaps", params={"timeout": "2s"})
            waited = time.monotonic() - started
            release.set()
            await asyncio.gather(*holders)
            return response, waited

    count, total = waited_in_queue(apf, "apf-test")
    response, waited = asyncio.run(scenario())
    assert response.status_code == 429
    assert waited > 0.4  # the client's view: at least the quarter (2 s / 4)
    count_after, total_after = waited_in_queue(apf, "apf-test")
    assert count_after == count + 1
    assert 0.45 < total_after - total < 1.0  # the server's own clock: about the quarter, far from the 2 s
    timed_out = metric(
        apf, "apiserver_flowcontrol_rejected_requests", "apiserver_flowcontrol_rejected_requests_total",
        flow_schema="apf-test", reason="time-out",
    )  # fmt: skip
    assert timed_out >= 1


def test_a_reject_level_answers_429_at_once(apf: GatewayProcess) -> None:
    """catch-all is a Reject level of 1 seat (ceil(6 × 5 / 490)), at most 7 with what it may borrow;
    a schema sends "lister" there."""
    with apf.client() as admin:
        assert (
            admin.post(f"{FC}/flowschemas", json=flow_schema("to-catch-all", "catch-all", ["lister"], 600)).status_code
            == 201
        )
        uid = uid_of(admin, "flowschemas", "to-catch-all")

    async def scenario() -> list[Answer]:
        async with async_user(apf, "lister") as lister:
            probe = await lister.get("/api/v1/namespaces/apf")
            while probe.headers.get("X-Kubernetes-PF-FlowSchema-UID") != uid:
                await asyncio.sleep(0.05)
                probe = await lister.get("/api/v1/namespaces/apf")
        return list(await asyncio.gather(*(slow_create(apf, "lister", "apf", 0.5) for _ in range(12))))

    answers = asyncio.run(scenario())
    created = sum(1 for r in answers if r.status_code == 201)
    assert 1 <= created <= 7 and created + sum(1 for r in answers if r.status_code == 429) == 12
    refused = metric(
        apf, "apiserver_flowcontrol_rejected_requests", "apiserver_flowcontrol_rejected_requests_total",
        flow_schema="to-catch-all", priority_level="catch-all", reason="concurrency-limit",
    )  # fmt: skip
    assert refused == 12 - created
    with apf.client() as admin:
        admin.delete(f"{FC}/flowschemas/to-catch-all")


def test_watches_give_their_seat_back_once_initialized(apf: GatewayProcess) -> None:
    """Five watches in a 3-seat level all start, and the level is free for a quick request."""

    async def scenario() -> float:
        async with async_user(apf, "watcher") as watcher, async_user(apf, "mouse") as mouse:
            streams = []
            async with contextlib.AsyncExitStack() as stack:
                for _ in range(5):
                    params = {"watch": "true", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
                              "resourceVersionMatch": "NotOlderThan"}  # fmt: skip
                    response = await stack.enter_async_context(
                        watcher.stream("GET", "/api/v1/namespaces/apf/configmaps", params=params)
                    )
                    assert response.status_code == 200
                    lines = response.aiter_lines()
                    async for line in lines:  # up to the initial-events-end bookmark
                        if line and json.loads(line)["type"] == "BOOKMARK":
                            break
                    streams.append(response)
                started = time.monotonic()
                assert (await mouse.get("/api/v1/namespaces/apf")).status_code == 200
                return time.monotonic() - started

    # a seat still held by the watches would queue it up to a quarter of the 60 s request timeout
    assert asyncio.run(scenario()) < 5
    executing = metric(
        apf, "apiserver_flowcontrol_current_executing_requests", "apiserver_flowcontrol_current_executing_requests",
        priority_level="apf-test",
    )  # fmt: skip
    assert executing == 0


def test_invalid_objects_are_refused_with_upstreams_messages(apf: GatewayProcess) -> None:
    def refused(kind: str, body: dict[str, Any]) -> list[str]:
        with apf.client() as admin:
            response = admin.post(f"{FC}/{kind}", json=body)
        assert response.status_code == 422, response.text
        return [f"{c['field']}: {c['message']}" for c in response.json()["details"]["causes"]]

    schema = flow_schema("bad", "apf-test", ["x"])
    schema["spec"]["matchingPrecedence"] = 20000
    schema["spec"]["distinguisherMethod"] = {"type": "ByColour"}
    schema["spec"]["rules"][0]["resourceRules"][0]["verbs"] = []
    schema["spec"]["rules"][0]["nonResourceRules"][0]["nonResourceURLs"] = ["/a*b"]
    assert refused("flowschemas", schema) == [
        "spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000",
        'spec.distinguisherMethod.type: Unsupported value: "ByColour": supported values: "ByNamespace", "ByUser"',
        "spec.rules[0].resourceRules[0].verbs: Required value: verbs must contain at least one value",
        'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a*b": '
        "wildcard can only do suffix matching",
    ]
    precedence_one = flow_schema("bad", "apf-test", ["x"], 1)
    assert refused("flowschemas", precedence_one) == [
        "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"
    ]
    level = json.loads(json.dumps(TEST_LEVEL))
    level["metadata"]["name"] = "bad"
    # (queues 0 would be defaulted to 64 before validation, as upstream defaults it)
    level["spec"]["limited"]["limitResponse"]["queuing"] = {"queues": -1, "handSize": 8, "queueLengthLimit": 50}
    level["spec"]["limited"]["nominalConcurrencyShares"] = -1
    level["spec"]["limited"]["lendablePercent"] = 101
    assert refused("prioritylevelconfigurations", level) == [
        "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
        "spec.limited.limitResponse.queuing.queues: Invalid value: -1: must be positive",
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (-1)",
        "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
    ]
    level["spec"]["limited"] = dict(TEST_LEVEL["spec"]["limited"])
    level["spec"]["limited"]["limitResponse"] = {
        "type": "Queue",
        "queuing": {"queues": 4, "handSize": 8, "queueLengthLimit": 5},
    }
    assert refused("prioritylevelconfigurations", level) == [
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (4)"
    ]
    catch_all = {"metadata": {"name": "catch-all"}, "spec": {"type": "Limited", "limited": {
        "nominalConcurrencyShares": 50, "lendablePercent": 0, "limitResponse": {"type": "Reject"}}}}  # fmt: skip
    with apf.client() as admin:
        current = admin.get(f"{FC}/prioritylevelconfigurations/catch-all").json()
        catch_all["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        response = admin.put(f"{FC}/prioritylevelconfigurations/catch-all", json=catch_all)
    assert response.status_code == 422
    assert "spec of 'catch-all' must equal the fixed value" in response.json()["message"]


def test_shares_split_the_server_limit(apf: GatewayProcess) -> None:
    """6 seats over 490 shares: apf-test ceil(6 × 245 / 490) = 3, workload-low ceil(6 × 100 / 490) = 2."""
    samples = families(apf)["apiserver_flowcontrol_nominal_limit_seats"]
    nominal = {s.labels["priority_level"]: s.value for s in samples}
    assert nominal["apf-test"] == 3 and nominal["workload-low"] == 2 and nominal["exempt"] == 0
    upper = {s.labels["priority_level"]: s.value for s in families(apf)["apiserver_flowcontrol_upper_limit_seats"]}
    assert upper["apf-test"] == 3  # borrowingLimitPercent 0
    assert upper["global-default"] == 1 + 6  # no borrowing limit: the server's seats
    names = families(apf)
    for family in (
        "apiserver_flowcontrol_current_inqueue_requests",
        "apiserver_flowcontrol_current_executing_requests",
        "apiserver_flowcontrol_request_concurrency_in_use",
        "apiserver_flowcontrol_request_concurrency_limit",
        "apiserver_flowcontrol_read_vs_write_request_count_samples",
        "apiserver_flowcontrol_read_vs_write_request_count_watermarks",
        "apiserver_flowcontrol_priority_level_request_count_samples",
        "apiserver_flowcontrol_priority_level_request_count_watermarks",
        "apiserver_flowcontrol_request_queue_length_after_enqueue",
        "apiserver_flowcontrol_request_wait_duration_seconds",
        "apiserver_flowcontrol_request_execution_seconds",
        "apiserver_flowcontrol_current_limit_seats",
        "apiserver_flowcontrol_lower_limit_seats",
        "apiserver_flowcontrol_demand_seats",
    ):
        assert family in names, family


# ---- seats ------------------------------------------------------------------------------------------


def test_a_list_of_10000_objects_costs_more_seats_than_a_get(tmp_path: Path) -> None:
    """Default limits (600 seats): workload-low's largest request is the estimator's 10 seats."""
    server = start(tmp_path, NO_ROOT_CA_PUBLISHER)  # the namespace holds the 10,000 copies only
    try:
        with server.client() as admin:
            assert (
                admin.post(f"{FC}/flowschemas", json=flow_schema("seats", "workload-low", ["lister"])).status_code
                == 201
            )
            assert admin.post("/api/v1/namespaces", json={"metadata": {"name": "many"}}).status_code == 201
            assert (
                admin.post("/api/v1/namespaces/many/configmaps", json={"metadata": {"name": "cm-00000"}}).status_code
                == 201
            )
        store_copies(server, "/registry/configmaps/many/cm-00000", 10_000)
        with as_user(server, "lister") as lister:
            eventually(lambda: len(lister.get("/api/v1/namespaces/many/configmaps").json()["items"]) == 10_000, 30)
            before = _seat_sums(server)
            assert lister.get("/api/v1/namespaces/many/configmaps/cm-00001").status_code == 200
            after_get = _seat_sums(server)
            assert lister.get("/api/v1/namespaces/many/configmaps", params={"limit": "10"}).status_code == 200
            after_list = _seat_sums(server)
        assert after_get[1] - before[1] == 1 and after_get[0] - before[0] == 1  # one request, one seat
        assert after_list[1] - after_get[1] == 10  # ceil(10000 / 100) capped at 10
    finally:
        server.kill()


def _seat_sums(server: GatewayProcess, flow_schema: str = "seats") -> tuple[float, float]:
    return _histogram_sums(server, "apiserver_flowcontrol_work_estimated_seats", flow_schema)


def _histogram_sums(server: GatewayProcess, name: str, flow_schema: str) -> tuple[float, float]:
    """(count, sum) of one of APF's per-flow histograms, for a flow schema of workload-low."""
    labels = {"flow_schema": flow_schema, "priority_level": "workload-low"}
    return metric(server, name, f"{name}_count", **labels), metric(server, name, f"{name}_sum", **labels)


def test_a_write_pays_for_the_watches_it_concerns(tmp_path: Path) -> None:
    """A write's extra seats count the watches of its resource that may see it, as upstream's watch
    tracker: of the whole resource, of its namespace, of the object by name — not other namespaces'.
    11 interested watches: ceil(11 / 10) = 2 seats; 10 or fewer: 1."""
    server = start(tmp_path)
    sockets: list[socket.socket] = []
    internal = 0.0

    def watch(path: str, count: int) -> None:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", server.port))
            query = "&watch=1" if "?" in path else "?watch=1"
            sock.sendall(f"GET {path}{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sockets.append(sock)
        eventually(lambda: configmap_watchers() == internal + len(sockets))

    def configmap_watchers() -> float:
        return metric(server, "apiserver_registered_watchers", "apiserver_registered_watchers", kind="ConfigMap")

    def watch_counts() -> tuple[float, float]:
        return _histogram_sums(server, "apiserver_flowcontrol_watch_count_samples", "writes")

    def seats_of_a_write(name: str) -> float:
        return write_of(name)[0]

    def write_of(name: str) -> tuple[float, float]:
        """The seats of a write of ``name`` and the watches it concerns (as observed in
        apiserver_flowcontrol_watch_count_samples)."""
        before, watches_before = _seat_sums(server, "writes"), watch_counts()
        patch = json.dumps({"data": {"n": str(time.monotonic())}})
        with as_user(server, "writer") as writer:
            response = writer.patch(
                f"/api/v1/namespaces/a/configmaps/{name}",
                content=patch,
                headers={"Content-Type": "application/merge-patch+json"},
            )
        assert response.status_code == 200, response.text
        after, watches_after = _seat_sums(server, "writes"), watch_counts()
        assert after[0] - before[0] == 1
        assert watches_after[0] - watches_before[0] == 1
        seats, watchers = after[1] - before[1], watches_after[1] - watches_before[1]
        assert seats == max(1, math.ceil(watchers / 10)), (seats, watchers)
        return seats, watchers

    try:
        with server.client() as admin:
            assert (
                admin.post(f"{FC}/flowschemas", json=flow_schema("writes", "workload-low", ["writer"])).status_code
                == 201
            )
            for namespace in ("a", "b"):
                assert admin.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
            for name in ("x", "y"):
                created = admin.post("/api/v1/namespaces/a/configmaps", json={"metadata": {"name": name}})
                assert created.status_code == 201
        internal = configmap_watchers()  # the server's own (garbage collector, quota, root CA publisher)
        watch("/api/v1/namespaces/b/configmaps", 11)
        seats, concerned = write_of("x")  # eleven watches, all of another namespace
        # Of the server's own watches, those of every configmap (the root CA publisher's is of one name).
        assert seats == 1 and concerned <= min(internal, 5)
        watch("/api/v1/configmaps", 5 - int(concerned))
        watch("/api/v1/namespaces/a/configmaps", 5)
        assert seats_of_a_write("x") == 1  # ten: the whole resource's and namespace a's
        watch("/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dx", 1)
        assert seats_of_a_write("x") == 2  # eleven for x
        assert seats_of_a_write("y") == 1  # still ten for y
        watch("/api/v1/namespaces/a/configmaps", 1)
        assert seats_of_a_write("y") == 2
    finally:
        for sock in sockets:
            sock.close()
        server.kill()


# ---- maintenance --------------------------------------------------------------------------------------


def test_maintenance_keeps_the_mandatory_and_suggested_objects(tmp_path: Path) -> None:
    server = start(tmp_path)
    levels, schemas = f"{FC}/prioritylevelconfigurations", f"{FC}/flowschemas"
    try:
        with server.client() as admin:
            low = admin.get(f"{levels}/workload-low").json()
            assert low["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
            low["spec"]["limited"]["nominalConcurrencyShares"] = 7  # edited, still auto-updated
            assert admin.put(f"{levels}/workload-low", json=low).status_code == 200
            high = admin.get(f"{levels}/workload-high").json()
            high["spec"]["limited"]["nominalConcurrencyShares"] = 9  # edited, and taken over
            high["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] = "false"
            assert admin.put(f"{levels}/workload-high", json=high).status_code == 200
            system = admin.get(f"{levels}/system").json()
            system["metadata"]["annotations"] = {"note": "no annotation, unedited spec"}  # generation stays 1
            assert admin.put(f"{levels}/system", json=system).status_code == 200
            assert admin.delete(f"{schemas}/probes").status_code == 200
            assert admin.delete(f"{schemas}/catch-all").status_code == 200
            exempt = admin.get(f"{levels}/exempt").json()
            exempt["spec"]["exempt"]["nominalConcurrencyShares"] = 3  # the exempt level's own part
            assert admin.put(f"{levels}/exempt", json=exempt).status_code == 200
            stale = {"metadata": {"name": "retired", "annotations": {"apf.kubernetes.io/autoupdate-spec": "true"}},
                     "spec": TEST_LEVEL["spec"]}  # fmt: skip
            kept = {"metadata": {"name": "mine", "annotations": {"apf.kubernetes.io/autoupdate-spec": "false"}},
                    "spec": TEST_LEVEL["spec"]}  # fmt: skip
            assert admin.post(levels, json=stale).status_code == 201
            assert admin.post(levels, json=kept).status_code == 201
        server.kill()
        server.start()
        with server.client() as admin:

            def shares(name: str) -> int:
                return admin.get(f"{levels}/{name}").json()["spec"]["limited"]["nominalConcurrencyShares"]

            eventually(lambda: admin.get(f"{schemas}/probes").status_code == 200)
            eventually(lambda: admin.get(f"{schemas}/catch-all").status_code == 200)
            eventually(lambda: shares("workload-low") == 100)
            eventually(lambda: admin.get(f"{levels}/retired").status_code == 404)
            assert shares("workload-high") == 9
            assert admin.get(f"{levels}/workload-high").json()["metadata"]["annotations"] == {
                "apf.kubernetes.io/autoupdate-spec": "false"
            }
            system = admin.get(f"{levels}/system").json()["metadata"]["annotations"]
            assert system == {"note": "no annotation, unedited spec", "apf.kubernetes.io/autoupdate-spec": "true"}
            assert admin.get(f"{levels}/mine").status_code == 200
            assert admin.get(f"{levels}/exempt").json()["spec"]["exempt"]["nominalConcurrencyShares"] == 3
    finally:
        server.kill()


# ---- switches and tools -------------------------------------------------------------------------------


def test_without_priority_and_fairness_the_max_in_flight_limit_answers_429(tmp_path: Path) -> None:
    server = start(tmp_path, "--enable-priority-and-fairness=false", "--max-mutating-requests-inflight", "2")
    try:

        async def scenario() -> list[Answer]:
            return list(await asyncio.gather(*(slow_create(server, "flooder", "default", 0.5) for _ in range(4))))

        responses = asyncio.run(scenario())
        assert sorted(r.status_code for r in responses) == [201, 201, 429, 429]
        refused = next(r for r in responses if r.status_code == 429)
        assert refused.text == TOO_MANY and refused.headers["retry-after"] == "1"
        assert "x-kubernetes-pf-flowschema-uid" not in refused.headers
        with server.client() as admin:  # system:masters are never refused
            assert "X-Kubernetes-PF-FlowSchema-UID" not in admin.get("/api/v1/namespaces").headers
            assert admin.get("/debug/api_priority_and_fairness/dump_queues").status_code == 404
            # the configuration is kept all the same, as upstream's producer does
            assert admin.get(f"{FC}/flowschemas/global-default").status_code == 200
    finally:
        server.kill()


SIZING_TABLE = """\
12 32 4.428838398950118e-09 0.11431348830099144 0.9935089607656024
10 32 1.550093439632541e-08 0.0626479840223545 0.9753101519027554
10 64 6.601827268370426e-12 0.00045571320990370776 0.49999929150089345
9 64 3.6310049976037345e-11 0.00045501212304112273 0.4282314876454858
8 64 2.25929199850899e-10 0.0004886697053040446 0.35935114681123076
8 128 6.994461389026097e-13 3.4055790161620863e-06 0.02746173137155063
7 128 1.0579122850901972e-11 6.960839379258192e-06 0.02406157386340147
7 256 7.597695465552631e-14 6.728547142019406e-08 0.0006709661542533682
6 256 2.7134626662687968e-12 2.9516464018476436e-07 0.0008895654642000348
6 512 4.116062922897309e-14 4.982983350480894e-09 2.26025764343413e-05
6 1024 6.337324016514285e-16 8.09060164312957e-11 4.517408062903668e-07
"""


@pytest.mark.parametrize("row", SIZING_TABLE.splitlines())
def test_the_sizing_tool_reproduces_the_documented_shuffle_sharding_table(row: str) -> None:
    """The documentation's figures are floating-point; they agree with the exact values to 15 digits."""
    hand, queues, *expected = row.split()
    command = [sys.executable, "-m", "protokube", "apf", "shuffle-sharding"]
    args = ["--hand-size", hand, "--queues", queues, "--elephants", "1", "4", "16"]
    out = subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.split() == [hand, queues, *(f"{float(e):.15g}" for e in expected)]


def test_the_sizing_tool_refuses_what_a_dealer_cannot_deal() -> None:
    command = [sys.executable, "-m", "protokube", "apf", "shuffle-sharding", "--hand-size", "9", "--queues", "8"]
    result = subprocess.run([*command, "--elephants", "1"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "handSize 9 is greater than deckSize 8" in result.stderr
