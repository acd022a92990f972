"""Subresources beyond status and scale, over HTTP: pods/eviction with PodDisruptionBudgets,
pods/binding and bindings, and the connect subresources (log, exec, attach, portforward, proxy),
which answer as kube-apiserver does when it cannot reach the backend."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from .helpers import free_port

JSON = {"Content-Type": "application/json"}


def make_pod(client: httpx.Client, namespace: str, name: str, labels: dict | None = None, **spec: Any) -> dict:
    body = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec},
    }
    response = client.post(f"/api/v1/namespaces/{namespace}/pods", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def set_status(client: httpx.Client, path: str, status: dict) -> dict:
    response = client.patch(
        f"{path}/status", json={"status": status}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text
    return response.json()


def running_ready(client: httpx.Client, namespace: str, name: str) -> None:
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    set_status(client, f"/api/v1/namespaces/{namespace}/pods/{name}", status)


def budget(client: httpx.Client, namespace: str, name: str, selector: dict, status: dict) -> None:
    body = {"metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": selector}}
    path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    assert client.post(path, json=body).status_code == 201
    set_status(client, f"{path}/{name}", {"observedGeneration": 1, **status})


def evict(
    client: httpx.Client, namespace: str, name: str, body_name: str | None = None, **extra: Any
) -> httpx.Response:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": body_name or name}, **extra}
    return client.post(f"/api/v1/namespaces/{namespace}/pods/{name}/eviction", json=body)


def exists(client: httpx.Client, namespace: str, name: str) -> bool:
    return client.get(f"/api/v1/namespaces/{namespace}/pods/{name}").status_code == 200


SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


# ---- eviction -------------------------------------------------------------------------------------
def test_eviction_without_budget_deletes_the_pod(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "free")
    running_ready(client, namespace, "free")
    response = evict(client, namespace, "free")
    assert (response.status_code, response.json()) == (201, SUCCESS)
    assert not exists(client, namespace, "free")


def test_eviction_name_must_match(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "named")
    response = evict(client, namespace, "named", body_name="other")
    assert response.status_code == 400
    assert response.json()["message"] == "name in URL does not match name in Eviction object"
    assert exists(client, namespace, "named")
    missing = evict(client, namespace, "ghost")
    assert missing.status_code == 404 and missing.json()["message"] == 'pods "ghost" not found'


def test_eviction_refused_by_an_exhausted_budget(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "guarded", labels={"app": "db"})
    running_ready(client, namespace, "guarded")
    budget(
        client,
        namespace,
        "db",
        {"matchLabels": {"app": "db"}},
        {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1},
    )
    response = evict(client, namespace, "guarded")
    assert response.status_code == 429
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget db needs 1 healthy pods and has 1 currently",
                }
            ]
        },
        "code": 429,
    }
    assert exists(client, namespace, "guarded")


def test_eviction_takes_one_allowed_disruption(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "web-1", labels={"app": "web"})
    running_ready(client, namespace, "web-1")
    budget(
        client,
        namespace,
        "web",
        {"matchLabels": {"app": "web"}},
        {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1},
    )
    assert evict(client, namespace, "web-1").status_code == 201
    assert not exists(client, namespace, "web-1")
    status = client.get(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/web").json()["status"]
    assert status["disruptionsAllowed"] == 0 and list(status["disruptedPods"]) == ["web-1"]
    condition = next(c for c in status["conditions"] if c["type"] == "DisruptionAllowed")
    assert (condition["status"], condition["reason"]) == ("False", "InsufficientPods")


def test_eviction_dry_run_changes_nothing(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "dry", labels={"app": "dry"})
    running_ready(client, namespace, "dry")
    budget(
        client,
        namespace,
        "dry",
        {"matchLabels": {"app": "dry"}},
        {"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1},
    )
    response = evict(client, namespace, "dry", deleteOptions={"dryRun": ["All"]})
    assert response.status_code == 201
    assert exists(client, namespace, "dry")
    status = client.get(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/dry").json()["status"]
    assert status["disruptionsAllowed"] == 1 and "disruptedPods" not in status


def test_eviction_of_a_pending_pod_ignores_budgets(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "pending", labels={"app": "p"})
    budget(client, namespace, "p", {"matchLabels": {"app": "p"}}, {"disruptionsAllowed": 0})
    assert evict(client, namespace, "pending").status_code == 201
    assert not exists(client, namespace, "pending")


def test_eviction_with_two_budgets(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "two", labels={"app": "two", "tier": "x"})
    running_ready(client, namespace, "two")
    budget(client, namespace, "a", {"matchLabels": {"app": "two"}}, {"disruptionsAllowed": 1})
    budget(client, namespace, "b", {"matchLabels": {"tier": "x"}}, {"disruptionsAllowed": 1})
    response = evict(client, namespace, "two")
    assert response.status_code == 500
    assert response.json()["message"] == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )
    assert exists(client, namespace, "two")


# ---- binding --------------------------------------------------------------------------------------
def binding(name: str, node: str, **meta: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, **meta},
        "target": {"kind": "Node", "name": node},
    }


def test_binding_assigns_the_pod_once(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "bound")
    path = f"/api/v1/namespaces/{namespace}/pods/bound/binding"
    response = client.post(path, json=binding("bound", "node-a", annotations={"scheduled-by": "test"}))
    assert (response.status_code, response.json()) == (201, SUCCESS)
    pod = client.get(f"/api/v1/namespaces/{namespace}/pods/bound").json()
    assert pod["spec"]["nodeName"] == "node-a"
    assert pod["metadata"]["annotations"] == {"scheduled-by": "test"}
    [scheduled] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled["status"] == "True" and scheduled["lastTransitionTime"]

    again = client.post(path, json=binding("bound", "node-b"))
    assert again.status_code == 409
    assert again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-a"'
    )
    assert again.json()["details"] == {"name": "bound", "kind": "pods/binding"}


def test_bindings_resource_and_its_errors(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "via-resource")
    created = client.post(f"/api/v1/namespaces/{namespace}/bindings", json=binding("via-resource", "node-c"))
    assert created.status_code == 201
    assert client.get(f"/api/v1/namespaces/{namespace}/pods/via-resource").json()["spec"]["nodeName"] == "node-c"
    missing = client.post(f"/api/v1/namespaces/{namespace}/bindings", json=binding("nobody", "node-c"))
    assert missing.status_code == 404 and missing.json()["message"] == 'pods "nobody" not found'
    mismatch = client.post(f"/api/v1/namespaces/{namespace}/pods/x/binding", json=binding("y", "node-c"))
    assert mismatch.status_code == 400
    assert mismatch.json()["message"] == "name in URL does not match name in Binding object"
    no_target = client.post(f"/api/v1/namespaces/{namespace}/bindings", json=binding("via-resource", ""))
    assert no_target.status_code == 422 and no_target.json()["details"]["causes"][0]["field"] == "target.name"
    assert client.get(f"/api/v1/namespaces/{namespace}/bindings").status_code == 405


# ---- ephemeral containers ------------------------------------------------------------------------
def test_ephemeral_containers_are_added_not_changed(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "debugged", labels={"app": "x"})
    path = f"/api/v1/namespaces/{namespace}/pods/debugged/ephemeralcontainers"
    pod = client.get(path).json()
    assert pod["kind"] == "Pod"
    pod["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    pod["metadata"]["labels"] = {"app": "changed"}  # only the ephemeral containers change here
    pod["spec"]["containers"][0]["image"] = "other"
    updated = client.put(path, json=pod)
    assert updated.status_code == 200, updated.text
    stored = client.get(f"/api/v1/namespaces/{namespace}/pods/debugged").json()
    assert [c["name"] for c in stored["spec"]["ephemeralContainers"]] == ["debugger"]
    assert stored["metadata"]["labels"] == {"app": "x"} and stored["spec"]["containers"][0]["image"] == "nginx"

    stored["spec"]["ephemeralContainers"] = []
    removed = client.put(path, json=stored)
    assert removed.status_code == 422
    assert removed.json()["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": 'Forbidden: existing ephemeral containers "debugger" may not be removed\n',
            "field": "spec.ephemeralContainers",
        }
    ]

    def apply(pod: str, containers: list[dict]) -> httpx.Response:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod},
            "spec": {"ephemeralContainers": containers},
        }
        return client.patch(
            f"/api/v1/namespaces/{namespace}/pods/{pod}/ephemeralcontainers",
            params={"fieldManager": "debug-tool"},
            content=json.dumps(body),
            headers={"Content-Type": "application/apply-patch+yaml"},
        )

    both = [{"name": "debugger", "image": "busybox"}, {"name": "second", "image": "busybox"}]
    applied = apply("debugged", both)
    assert applied.status_code == 200, applied.text
    assert [c["name"] for c in applied.json()["spec"]["ephemeralContainers"]] == ["debugger", "second"]
    entry = next(m for m in applied.json()["metadata"]["managedFields"] if m["manager"] == "debug-tool")
    assert entry["operation"] == "Apply" and entry["subresource"] == "ephemeralcontainers"
    assert "f:ephemeralContainers" in entry["fieldsV1"]["f:spec"]
    missing = apply("nobody", both)  # a subresource never creates its object
    assert missing.status_code == 404 and missing.json()["message"] == 'pods "nobody" not found'


# ---- connect subresources -----------------------------------------------------------------------
def node(client: httpx.Client, name: str, addresses: list[dict], port: int = 0) -> None:
    assert client.post("/api/v1/nodes", json={"metadata": {"name": name}}).status_code == 201
    status: dict = {"addresses": addresses}
    if port:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": port}}
    set_status(client, f"/api/v1/nodes/{name}", status)


def bind(client: httpx.Client, namespace: str, pod: str, node_name: str) -> None:
    response = client.post(f"/api/v1/namespaces/{namespace}/pods/{pod}/binding", json=binding(pod, node_name))
    assert response.status_code == 201, response.text


def status_of(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    return response.status_code, body.get("reason", ""), body["message"]


def test_logs_of_a_pod_not_on_a_node_are_empty(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "unscheduled")
    response = client.get(f"/api/v1/namespaces/{namespace}/pods/unscheduled/log")
    assert response.status_code == 204 and response.content == b""
    assert "content-length" not in response.headers  # Go's server drops it from a 204
    assert "content-type" not in response.headers
    assert response.headers["cache-control"] == "no-cache, private"  # WithCacheControl, on every response
    # a long-running request (log, exec, attach, portforward, proxy) passes API Priority and Fairness
    # unclassified: no X-Kubernetes-PF-* headers (make anchor-diff, against kube-apiserver)
    assert not [name for name in response.headers if name.lower().startswith("x-kubernetes-pf-")]
    missing = client.get(f"/api/v1/namespaces/{namespace}/pods/missing/log")
    assert missing.status_code == 404
    assert not [name for name in missing.headers if name.lower().startswith("x-kubernetes-pf-")]
    assert client.get(f"/api/v1/namespaces/{namespace}/pods").headers["x-kubernetes-pf-flowschema-uid"]


def test_logs_and_streams_name_a_valid_container(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "two-apps", containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "x"}])
    base = f"/api/v1/namespaces/{namespace}/pods/two-apps"
    assert status_of(client.get(f"{base}/log")) == (
        400,
        "BadRequest",
        "a container name must be specified for pod two-apps, choose one of: [a b]",
    )
    assert status_of(client.get(f"{base}/log", params={"container": "c"})) == (
        400,
        "BadRequest",
        "container c is not valid for pod two-apps",
    )
    assert status_of(client.post(f"{base}/exec", params={"container": "a", "command": "ls"})) == (
        400,
        "BadRequest",
        "pod two-apps does not have a host assigned",
    )
    invalid = client.get(f"{base}/log", params={"container": "a", "tailLines": "-1"})
    assert invalid.status_code == 422 and invalid.json()["details"]["kind"] == "PodLogOptions"
    assert client.get(f"/api/v1/namespaces/{namespace}/pods/ghost/log").status_code == 404


def test_logs_when_the_node_cannot_be_reached(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "on-missing-node")
    bind(client, namespace, "on-missing-node", "absent-node")
    assert status_of(client.get(f"/api/v1/namespaces/{namespace}/pods/on-missing-node/log")) == (
        404,
        "NotFound",
        'nodes "absent-node" not found',
    )

    suffix = namespace
    node(client, f"no-address-{suffix}", [])
    make_pod(client, namespace, "on-bare-node")
    bind(client, namespace, "on-bare-node", f"no-address-{suffix}")
    assert status_of(client.get(f"/api/v1/namespaces/{namespace}/pods/on-bare-node/log")) == (
        500,
        "",
        "no preferred addresses found; known addresses: []",
    )

    closed = free_port()
    node(client, f"closed-{suffix}", [{"type": "InternalIP", "address": "127.0.0.1"}], port=closed)
    make_pod(client, namespace, "on-closed-node")
    bind(client, namespace, "on-closed-node", f"closed-{suffix}")
    base = f"/api/v1/namespaces/{namespace}/pods/on-closed-node"
    started = time.monotonic()
    refused = f"dial tcp 127.0.0.1:{closed}: connect: connection refused"
    assert status_of(client.get(f"{base}/log", params={"follow": "true"})) == (
        500,
        "",
        f'Get "https://127.0.0.1:{closed}/containerLogs/{namespace}/on-closed-node/app?follow=true": {refused}',
    )
    assert status_of(client.post(f"{base}/exec", params={"command": "ls"})) == (
        400,
        "BadRequest",
        "Upgrade request required",
    )
    upgrade = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}
    for sub in ("exec", "attach", "portforward"):
        assert status_of(client.post(f"{base}/{sub}", headers=upgrade)) == (
            500,
            "",
            f"error dialing backend: {refused}",
        )
    assert status_of(client.get(f"/api/v1/nodes/closed-{suffix}/proxy/metrics")) == (500, "", refused)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pods/p/proxy", (400, "BadRequest", "address not allowed")),
        ("pods/a:b:c:d/proxy", (400, "BadRequest", 'invalid pod request "a:b:c:d"')),
        ("services/nosvc/proxy/x", (404, "NotFound", 'services "nosvc" not found')),
    ],
)
def test_proxies_answer_upstreams_errors(client: httpx.Client, namespace: str, path: str, expected: tuple) -> None:
    make_pod(client, namespace, "p")
    assert status_of(client.get(f"/api/v1/namespaces/{namespace}/{path}")) == expected


def test_service_proxy_without_endpoints(client: httpx.Client, namespace: str) -> None:
    service = {"metadata": {"name": "web"}, "spec": {"ports": [{"name": "http", "port": 80}]}}
    assert client.post(f"/api/v1/namespaces/{namespace}/services", json=service).status_code == 201
    endpoints = {
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.9.9.9"}], "ports": [{"name": "http", "port": 80}]}],
    }
    assert client.post(f"/api/v1/namespaces/{namespace}/endpoints", json=endpoints).status_code == 201
    # The only address is no pod's: no endpoint to proxy to.
    assert status_of(client.get(f"/api/v1/namespaces/{namespace}/services/web/proxy/")) == (
        503,
        "ServiceUnavailable",
        'no endpoints available for service "web"',
    )
    assert status_of(client.get(f"/api/v1/namespaces/{namespace}/services/web:81/proxy/")) == (
        503,
        "ServiceUnavailable",
        'no service port 81 found for service "web"',
    )


def test_unknown_subresources_and_sub_paths_are_not_found(client: httpx.Client, namespace: str) -> None:
    make_pod(client, namespace, "plain")
    base = f"/api/v1/namespaces/{namespace}/pods/plain"
    for path in (f"{base}/bogus", f"{base}/status/extra", f"{base}/log/extra"):
        response = client.get(path)
        assert (response.status_code, response.json()["reason"]) == (404, "NotFound"), path
    assert client.put(f"{base}/log", json={}).status_code == 405
