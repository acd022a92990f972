"""Deletion of owners and their dependents (ownerReferences), as a cluster with kube-controller-manager's
garbage collector does it: propagationPolicy Background, Foreground and Orphan, the deprecated
orphanDependents, per-kind defaults, dependents of missing owners, cluster-scoped owners of
namespaced dependents, and a collector that picks up after a restart.

Chains are made by hand as a Deployment controller would make them: Deployment → ReplicaSet → Pods,
each with a controller ownerReference that blocks its owner's deletion.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from .helpers import GatewayProcess, Kubectl, deployment

SETTLE = 20.0  # seconds the collector may take to converge
APPS = "/apis/apps/v1"


def eventually(check: Callable[[], bool], what: str, timeout: float = SETTLE) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not reached in {timeout}s: {what}"
        time.sleep(0.1)


def owner_ref(obj: dict, block: bool = True) -> dict:
    api_version = obj.get("apiVersion") or "v1"
    return {
        "apiVersion": api_version,
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }


def pod(name: str, owners: list[dict], finalizers: tuple[str, ...] = ()) -> dict:
    return {
        "metadata": {"name": name, "ownerReferences": owners, "finalizers": list(finalizers)},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def created(response: httpx.Response) -> dict:
    assert response.status_code == 201, response.text
    return response.json()


class Chain:
    """Deployment → ReplicaSet → two Pods in one namespace."""

    def __init__(self, client: httpx.Client, namespace: str, name: str, held_pod: bool = False) -> None:
        self.client, self.namespace, self.name = client, namespace, name
        self.deployment = created(client.post(f"{APPS}/namespaces/{namespace}/deployments", json=deployment(name)))
        rs = deployment(name)
        rs["kind"] = "ReplicaSet"
        rs["metadata"] = {"name": f"{name}-rs", "ownerReferences": [owner_ref(self.deployment)]}
        self.replicaset = created(client.post(f"{APPS}/namespaces/{namespace}/replicasets", json=rs))
        hold = ("example.com/hold",) if held_pod else ()
        self.pods = [
            created(
                client.post(
                    f"/api/v1/namespaces/{namespace}/pods",
                    json=pod(f"{name}-p{i}", [owner_ref(self.replicaset)], hold if i == 0 else ()),
                )
            )
            for i in range(2)
        ]

    @property
    def paths(self) -> dict[str, str]:
        ns = self.namespace
        return {
            "deployment": f"{APPS}/namespaces/{ns}/deployments/{self.name}",
            "replicaset": f"{APPS}/namespaces/{ns}/replicasets/{self.name}-rs",
            **{f"pod{i}": f"/api/v1/namespaces/{ns}/pods/{self.name}-p{i}" for i in range(2)},
        }

    def existing(self) -> set[str]:
        return {what for what, path in self.paths.items() if self.client.get(path).status_code == 200}

    def get(self, what: str) -> dict:
        got = self.client.get(self.paths[what])
        assert got.status_code == 200, got.text
        return got.json()

    def release_held_pod(self) -> None:
        held = self.get("pod0")
        held["metadata"]["finalizers"] = []
        assert self.client.put(self.paths["pod0"], json=held).status_code == 200


@pytest.mark.parametrize("policy", ["Background", None])
def test_background_deletes_the_owner_then_its_dependents(client: httpx.Client, namespace: str, policy: str) -> None:
    chain = Chain(client, namespace, "bg")
    params = {"propagationPolicy": policy} if policy else {}
    answer = client.delete(chain.paths["deployment"], params=params)
    assert answer.status_code == 200, answer.text
    assert answer.json()["kind"] == "Status" and answer.json()["status"] == "Success"
    assert client.get(chain.paths["deployment"]).status_code == 404  # gone at once
    eventually(lambda: not chain.existing(), "replicaset and pods collected")


def test_foreground_keeps_the_owner_until_blocking_dependents_are_gone(client: httpx.Client, namespace: str) -> None:
    chain = Chain(client, namespace, "fg", held_pod=True)
    answer = client.delete(chain.paths["deployment"], params={"propagationPolicy": "Foreground"})
    assert answer.status_code == 200, answer.text
    marked = answer.json()
    assert marked["kind"] == "Deployment"
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert "deletionTimestamp" in marked["metadata"]
    assert marked["metadata"]["generation"] == chain.deployment["metadata"]["generation"] + 1

    # The free pod goes; the held one stays, and so do the ReplicaSet and the Deployment above it.
    eventually(lambda: chain.existing() == {"deployment", "replicaset", "pod0"}, "free pod collected")
    time.sleep(1.0)
    assert chain.existing() == {"deployment", "replicaset", "pod0"}
    replicaset = chain.get("replicaset")
    assert replicaset["metadata"]["finalizers"] == ["foregroundDeletion"]  # deleted in foreground in turn
    assert "deletionTimestamp" in chain.get("pod0")["metadata"]

    chain.release_held_pod()
    eventually(lambda: not chain.existing(), "the whole chain collected, dependents first")


def test_foreground_without_dependents_deletes_at_once(client: httpx.Client, namespace: str) -> None:
    cm = created(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "lonely"}}))
    path = f"/api/v1/namespaces/{namespace}/configmaps/lonely"
    answer = client.delete(path, params={"propagationPolicy": "Foreground"})
    assert answer.status_code == 200
    assert cm["metadata"]["uid"]
    eventually(lambda: client.get(path).status_code == 404, "owner without dependents removed")


@pytest.mark.parametrize("options", [{"propagationPolicy": "Orphan"}, {"orphanDependents": "true"}])
def test_orphan_removes_the_owner_reference_from_dependents(
    client: httpx.Client, namespace: str, options: dict[str, str]
) -> None:
    chain = Chain(client, namespace, "orph")
    answer = client.delete(chain.paths["deployment"], params=options)
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"]["finalizers"] == ["orphan"]
    eventually(lambda: "deployment" not in chain.existing(), "orphaned owner removed")
    time.sleep(0.5)
    assert chain.existing() == {"replicaset", "pod0", "pod1"}
    assert "ownerReferences" not in chain.get("replicaset")["metadata"]
    assert chain.get("pod1")["metadata"]["ownerReferences"][0]["uid"] == chain.replicaset["metadata"]["uid"]


def test_orphan_in_a_body_and_a_later_foreground_delete_replaces_the_finalizer(
    client: httpx.Client, namespace: str
) -> None:
    """A second delete of an object held by finalizers changes the collector's finalizers."""
    body = {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    created(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body))
    path = f"/api/v1/namespaces/{namespace}/configmaps/held"
    first = client.request(
        "DELETE", path, json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}
    )
    assert first.json()["metadata"]["finalizers"] == ["example.com/hold", "orphan"]
    stamp = first.json()["metadata"]["deletionTimestamp"]
    second = client.delete(path, params={"propagationPolicy": "Foreground"})
    assert second.status_code == 200
    assert second.json()["metadata"]["finalizers"] == ["example.com/hold", "foregroundDeletion"]
    assert second.json()["metadata"]["deletionTimestamp"] == stamp
    eventually(
        lambda: client.get(path).json()["metadata"]["finalizers"] == ["example.com/hold"],
        "foreground finalizer removed by the collector (no dependents)",
    )
    current = client.get(path).json()
    current["metadata"]["finalizers"] = []
    assert client.put(path, json=current).status_code == 200
    assert client.get(path).status_code == 404


def test_delete_options_conflicts_and_unknown_policies(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/any"
    both = client.delete(path, params={"orphanDependents": "false", "propagationPolicy": "Foreground"})
    assert both.status_code == 422
    assert both.json()["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": '
        "orphanDependents and deletionPropagation cannot be both set"
    )
    unknown = client.request("DELETE", path, json={"propagationPolicy": "Sideways", "dryRun": ["Some"]})
    assert unknown.status_code == 422
    assert unknown.json()["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: ['
        'propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", '
        '"nil", dryRun: Unsupported value: []string{"Some"}: supported values: "All"]'
    )
    assert [c["field"] for c in unknown.json()["details"]["causes"]] == ["propagationPolicy", "dryRun"]


def test_cascading_delete_of_an_old_client_is_accepted(client: httpx.Client, namespace: str) -> None:
    """orphanDependents=false on an object that stays (finalizers) answers 202, as upstream."""
    body = {"metadata": {"name": "old-client", "finalizers": ["example.com/hold"]}}
    created(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body))
    path = f"/api/v1/namespaces/{namespace}/configmaps/old-client"
    answer = client.delete(path, params={"orphanDependents": "false"})
    assert answer.status_code == 202, answer.text
    assert answer.json()["metadata"]["finalizers"] == ["example.com/hold"]
    current = client.get(path).json()
    current["metadata"]["finalizers"] = []
    assert client.put(path, json=current).status_code == 200


def test_jobs_orphan_their_pods_by_default_and_warn(client: httpx.Client, namespace: str) -> None:
    job_body = {
        "metadata": {"name": "batch"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    job = created(client.post(f"/apis/batch/v1/namespaces/{namespace}/jobs", json=job_body))
    job["apiVersion"], job["kind"] = "batch/v1", "Job"
    created(client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod("batch-pod", [owner_ref(job)])))
    answer = client.delete(f"/apis/batch/v1/namespaces/{namespace}/jobs/batch")
    assert answer.status_code == 200
    assert answer.headers["Warning"] == (
        '299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background '
        'to remove them or set propagationPolicy=Orphan to suppress this warning"'
    )
    assert answer.json()["metadata"]["finalizers"] == ["orphan"]
    eventually(
        lambda: client.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/batch").status_code == 404, "job removed"
    )
    orphan = client.get(f"/api/v1/namespaces/{namespace}/pods/batch-pod")
    assert orphan.status_code == 200 and "ownerReferences" not in orphan.json()["metadata"]


def test_dependents_of_missing_owners_are_collected(client: httpx.Client, namespace: str) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    real = created(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "real"}}))
    real["kind"] = "ConfigMap"
    missing = {**owner_ref(real), "name": "never-made", "uid": "5e0a0000-0000-0000-0000-000000000001"}
    wrong_uid = {**owner_ref(real), "uid": "5e0a0000-0000-0000-0000-000000000002"}
    created(client.post(pods, json=pod("of-missing", [missing])))
    created(client.post(pods, json=pod("of-wrong-uid", [wrong_uid])))
    created(client.post(pods, json=pod("of-both", [{**missing, "controller": False}, owner_ref(real)])))
    eventually(lambda: client.get(f"{pods}/of-missing").status_code == 404, "dependent of a missing owner")
    eventually(lambda: client.get(f"{pods}/of-wrong-uid").status_code == 404, "dependent of a replaced owner")
    eventually(
        lambda: [r["name"] for r in client.get(f"{pods}/of-both").json()["metadata"]["ownerReferences"]] == ["real"],
        "the reference to the missing owner removed, the pod kept",
    )


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_cluster_scoped_owner_of_namespaced_dependents(client: httpx.Client, namespace: str, policy: str) -> None:
    roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    name = f"gc-owner-{policy.lower()}-{namespace}"
    owner = created(client.post(roles, json={"metadata": {"name": name}, "rules": []}))
    owner["apiVersion"], owner["kind"] = "rbac.authorization.k8s.io/v1", "ClusterRole"
    configmaps = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(3):
        body = {"metadata": {"name": f"dep{i}", "ownerReferences": [owner_ref(owner)]}}
        created(client.post(configmaps, json=body))
    assert client.delete(f"{roles}/{name}", params={"propagationPolicy": policy}).status_code == 200
    eventually(lambda: client.get(configmaps).json()["items"] == [], "namespaced dependents collected")
    eventually(lambda: client.get(f"{roles}/{name}").status_code == 404, "cluster-scoped owner removed")


def test_the_collector_resumes_after_a_restart(tmp_path: Path) -> None:
    """A foreground deletion under way when the server stops completes after it starts again."""
    first = GatewayProcess(tmp_path).start()
    try:
        with first.client() as client:
            assert client.post("/api/v1/namespaces", json={"metadata": {"name": "restart"}}).status_code == 201
            chain = Chain(client, "restart", "rs", held_pod=True)
            assert (
                client.delete(chain.paths["deployment"], params={"propagationPolicy": "Foreground"}).status_code == 200
            )
            eventually(lambda: chain.existing() == {"deployment", "replicaset", "pod0"}, "free pod collected")
    finally:
        first.kill()
    second = GatewayProcess(tmp_path).start()
    try:
        with second.client() as client:
            chain.client = client
            assert chain.existing() == {"deployment", "replicaset", "pod0"}
            chain.release_held_pod()
            eventually(lambda: not chain.existing(), "the chain collected by the new process")
    finally:
        second.kill()


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
def test_kubectl_delete_cascade(client: httpx.Client, kubectl: Kubectl, namespace: str, cascade: str) -> None:
    chain = Chain(client, namespace, f"k{cascade[:2]}")
    done = kubectl.run("delete", "deployment", chain.name, "-n", namespace, f"--cascade={cascade}", "--wait=true")
    assert f'deployment.apps "{chain.name}" deleted' in done.stdout
    assert "deployment" not in chain.existing()  # --wait waited for the owner to go
    if cascade == "orphan":
        assert chain.existing() == {"replicaset", "pod0", "pod1"}
        assert "ownerReferences" not in chain.get("replicaset")["metadata"]
    else:
        eventually(lambda: not chain.existing(), "dependents collected")


def test_kubectl_delete_grace_period_and_no_wait(client: httpx.Client, kubectl: Kubectl, namespace: str) -> None:
    body = pod("on-node", [])
    body["spec"]["nodeName"] = "node-1"
    created(client.post(f"/api/v1/namespaces/{namespace}/pods", json=body))
    path = f"/api/v1/namespaces/{namespace}/pods/on-node"
    kubectl.run("delete", "pod", "on-node", "-n", namespace, "--grace-period=120", "--wait=false")
    marked = client.get(path).json()["metadata"]
    assert marked["deletionGracePeriodSeconds"] == 120
    kubectl.run("delete", "pod", "on-node", "-n", namespace, "--grace-period=0", "--force", timeout=30)
    assert client.get(path).status_code == 404


def test_kubectl_delete_namespace_with_many_kinds_does_not_hang(
    client: httpx.Client, kubectl: Kubectl, namespace: str
) -> None:
    chain = Chain(client, namespace, "ns-chain")
    job = {
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    created(client.post(f"/apis/batch/v1/namespaces/{namespace}/jobs", json=job))
    created(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "cm"}}))
    created(client.post(f"/api/v1/namespaces/{namespace}/secrets", json={"metadata": {"name": "s"}}))
    created(client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": "sa"}}))
    role = {"metadata": {"name": "r"}, "rules": []}
    created(client.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles", json=role))
    # One object held by a foreground deletion under way: its dependents go, then it.
    assert client.delete(chain.paths["replicaset"], params={"propagationPolicy": "Foreground"}).status_code == 200
    done = kubectl.run("delete", "namespace", namespace, "--wait=true", timeout=60)
    assert f'namespace "{namespace}" deleted' in done.stdout
    assert client.get(f"/api/v1/namespaces/{namespace}").status_code == 404
