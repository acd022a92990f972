"""kubectl 1.32's everyday commands beyond get/create/delete against a running server: scale on
every scalable kind, node maintenance (cordon, uncordon, taint), describe, wait, get --raw, logs;
and the official Python client's dynamic discovery."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from kubernetes import client as k8s
from kubernetes.dynamic import DynamicClient

from .helpers import GatewayProcess, Kubectl, deployment, free_port

NO_VALIDATE = "--validate=false"
_nodes = itertools.count()


def template(app: str) -> dict:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


SCALABLE = {
    "deployment": deployment("web", replicas=1),
    "statefulset": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": template("db")},
    },
    "replicaset": {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {"selector": {"matchLabels": {"app": "rs"}}, "template": template("rs")},
    },
    "replicationcontroller": {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {"selector": {"app": "rc"}, "template": template("rc")},
    },
}


def node_named(client: httpx.Client, prefix: str) -> str:
    name = f"{prefix}-{next(_nodes)}"
    assert client.post("/api/v1/nodes", json={"metadata": {"name": name}}).status_code == 201
    return name


@pytest.mark.parametrize("kind", sorted(SCALABLE))
def test_scale(kubectl: Kubectl, client: httpx.Client, namespace: str, kind: str) -> None:
    manifest = SCALABLE[kind]
    name = manifest["metadata"]["name"]
    kubectl.run("create", "-n", namespace, "-f", "-", NO_VALIDATE, stdin=json.dumps(manifest))
    out = kubectl.run("scale", "-n", namespace, f"{kind}/{name}", "--replicas=5").stdout
    assert "scaled" in out
    got = json.loads(kubectl.run("get", "-n", namespace, f"{kind}/{name}", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 5
    group_path = "/api/v1" if manifest["apiVersion"] == "v1" else "/apis/apps/v1"
    scale = client.get(f"{group_path}/namespaces/{namespace}/{kind}s/{name}/scale").json()
    assert (scale["kind"], scale["spec"]["replicas"], scale["status"]["selector"]) == ("Scale", 5, f"app={name}")
    # --current-replicas is a precondition kubectl checks against the Scale
    refused = kubectl.run(
        "scale", "-n", namespace, f"{kind}/{name}", "--current-replicas=2", "--replicas=1", check=False
    )
    assert refused.returncode != 0 and "Expected replicas to be 2, was 5" in refused.stderr


def test_cordon_uncordon_and_taint(kubectl: Kubectl, client: httpx.Client) -> None:
    name = node_named(client, "worker")
    assert f"node/{name} cordoned" in kubectl.run("cordon", name).stdout
    assert client.get(f"/api/v1/nodes/{name}").json()["spec"]["unschedulable"] is True
    assert f"node/{name} uncordoned" in kubectl.run("uncordon", name).stdout
    assert "unschedulable" not in client.get(f"/api/v1/nodes/{name}").json()["spec"]

    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}  # TaintNodesByCondition's
    kubectl.run("taint", "node", name, "dedicated=db:NoSchedule")
    taints = client.get(f"/api/v1/nodes/{name}").json()["spec"]["taints"]
    assert taints == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}, not_ready]
    duplicate = kubectl.run("taint", "node", name, "dedicated=db:NoSchedule", check=False)
    assert duplicate.returncode != 0 and "already has dedicated taint(s) with same effect(s)" in duplicate.stderr
    kubectl.run("taint", "node", name, "dedicated=db:NoSchedule-")
    assert client.get(f"/api/v1/nodes/{name}").json()["spec"]["taints"] == [not_ready]


def test_describe(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    kubectl.run("create", "-n", namespace, "-f", "-", NO_VALIDATE, stdin=json.dumps(deployment("shop")))
    kubectl.run("run", "-n", namespace, "solo", "--image=nginx", "--labels=app=solo")
    name = node_named(client, "described")
    for args, expected in (
        (("pod", "solo"), "Status:           Pending"),  # aligned under "Service Account:  default"
        (("deployment", "shop"), "2 desired | 0 updated"),
        (("namespace", namespace), "Status:       Active"),
        (("node", name), "Unschedulable:      false"),
    ):
        result = kubectl.run("describe", "-n", namespace, *args)
        assert "Name:" in result.stdout and expected in result.stdout, result.stdout
        assert result.stderr == ""


def test_wait_for_jsonpath_and_delete(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    kubectl.run("create", "configmap", "-n", namespace, "flag", "--from-literal=state=off")
    path = f"/api/v1/namespaces/{namespace}/configmaps/flag"

    def later(method: str, **kwargs: object) -> threading.Timer:
        timer = threading.Timer(1.0, lambda: client.request(method, path, **kwargs))  # type: ignore[arg-type]
        timer.start()
        return timer

    merge = {"Content-Type": "application/merge-patch+json"}
    timer = later("PATCH", json={"data": {"state": "on"}}, headers=merge)
    started = time.monotonic()
    out = kubectl.run("wait", "-n", namespace, "configmap/flag", "--for=jsonpath={.data.state}=on", "--timeout=20s")
    timer.join()
    assert "condition met" in out.stdout and time.monotonic() - started < 15

    timer = later("DELETE")
    out = kubectl.run("wait", "-n", namespace, "configmap/flag", "--for=delete", "--timeout=20s")
    timer.join()
    assert "condition met" in out.stdout
    assert client.get(path).status_code == 404

    timeout = kubectl.run("wait", "-n", namespace, "configmap/absent", "--for=delete", "--timeout=1s", check=False)
    assert timeout.returncode == 0  # nothing to wait for: already gone


def test_get_raw(kubectl: Kubectl) -> None:
    version = json.loads(kubectl.run("get", "--raw", "/version").stdout)
    assert version["minor"] == "32"
    api = json.loads(kubectl.run("get", "--raw", "/api/v1").stdout)
    assert api["kind"] == "APIResourceList" and any(r["name"] == "pods/eviction" for r in api["resources"])
    missing = kubectl.run("get", "--raw", "/api/v1/nope", check=False)
    assert missing.returncode != 0 and "the server could not find the requested resource" in missing.stderr


def test_logs_answer_clearly_without_a_kubelet(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    kubectl.run("run", "-n", namespace, "waiting", "--image=nginx")
    empty = kubectl.run("logs", "-n", namespace, "waiting")
    assert empty.stdout == ""  # not on a node yet: nothing to show, as upstream

    port = free_port()
    name = node_named(client, "silent")
    status = {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
    }
    client.patch(
        f"/api/v1/nodes/{name}/status",
        json={"status": status},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"}, "target": {"name": name}}
    assert client.post(f"/api/v1/namespaces/{namespace}/pods/waiting/binding", json=binding).status_code == 201
    failed = kubectl.run("logs", "-n", namespace, "waiting", check=False, timeout=30)
    assert failed.returncode != 0
    assert f"dial tcp 127.0.0.1:{port}: connect: connection refused" in failed.stderr, failed.stderr
    exec_failed = kubectl.run("exec", "-n", namespace, "waiting", "--", "true", check=False, timeout=30)
    assert exec_failed.returncode != 0 and "error dialing backend" in exec_failed.stderr, exec_failed.stderr


def test_python_dynamic_client_discovery(server: GatewayProcess, tmp_path: Path, namespace: str) -> None:
    api = k8s.ApiClient(k8s.Configuration(host=server.url))
    dynamic = DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))
    pods = dynamic.resources.get(api_version="v1", kind="Pod")
    assert {"eviction", "binding", "log", "exec", "status"} <= set(pods.subresources)
    deployments = dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.subresources["scale"].kind == "Scale"
    deployments.create(body=deployment("dyn", replicas=1), namespace=namespace)
    scale = deployments.subresources["scale"]
    scale.patch(
        body={"spec": {"replicas": 3}}, name="dyn", namespace=namespace, content_type="application/merge-patch+json"
    )
    assert deployments.get(name="dyn", namespace=namespace).spec.replicas == 3
    hpa = dynamic.resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    assert hpa.namespaced and hpa.short_names == ["hpa"]
