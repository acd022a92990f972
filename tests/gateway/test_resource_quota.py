"""ResourceQuota as kube-apiserver and kube-controller-manager enforce it: the controller fills a
quota's status (hard and used) and recounts it when objects go; admission charges writes to
status.used with a compare-and-swap and refuses what exceeds a quota with upstream's messages —
also when a burst of creates comes through two gateways sharing one storage."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import ROOT, GatewayProcess, Kubectl, eventually


def quota(client: httpx.Client, namespace: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    """Create a quota and wait until the controller has counted its usage."""
    body = {"metadata": {"name": "q"}, "spec": {"hard": hard, **spec}}
    response = client.post(f"/api/v1/namespaces/{namespace}/resourcequotas", json=body)
    assert response.status_code == 201, response.text
    return counted(client, namespace, hard)


def counted(client: httpx.Client, namespace: str, hard: dict[str, str]) -> dict[str, Any]:
    def computed() -> dict[str, Any] | None:
        status = client.get(f"/api/v1/namespaces/{namespace}/resourcequotas/q").json().get("status", {})
        return status if status.get("hard") == hard and set(status.get("used", {})) == set(hard) else None

    status = eventually(computed)
    assert status, "the quota was not counted"
    return status


def used(client: httpx.Client, namespace: str) -> dict[str, str]:
    return client.get(f"/api/v1/namespaces/{namespace}/resourcequotas/q").json()["status"]["used"]


def configmap(client: httpx.Client, namespace: str, name: str, **params: str) -> httpx.Response:
    return client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": name}}, params=params)


def own_configmaps(client: httpx.Client, namespace: str) -> int:
    """The ConfigMaps a new namespace has of its own: kube-root-ca.crt where the server publishes it."""
    if client.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt").status_code == 200:
        path = f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"
        eventually(lambda: client.get(path).status_code == 200 or None)
    return len(client.get(f"/api/v1/namespaces/{namespace}/configmaps").json()["items"])


def pod(name: str, requests: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if requests:
        container["resources"] = {"requests": requests}
    return {"metadata": {"name": name}, "spec": {"containers": [container], **spec}}


def create_pod(client: httpx.Client, namespace: str, body: dict[str, Any]) -> httpx.Response:
    client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": "default"}})
    return client.post(f"/api/v1/namespaces/{namespace}/pods", json=body)


def test_object_count_quota(client: httpx.Client, namespace: str) -> None:
    base = own_configmaps(client, namespace)
    full = str(base + 2)
    status = quota(client, namespace, {"configmaps": full})
    assert status["used"] == {"configmaps": str(base)}
    assert configmap(client, namespace, "a").status_code == 201
    assert configmap(client, namespace, "b").status_code == 201
    refused = configmap(client, namespace, "c")
    assert refused.status_code == 403
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == (
        f'configmaps "c" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps={full}, '
        f"limited: configmaps={full}"
    )
    assert used(client, namespace) == {"configmaps": full}
    dry = configmap(client, namespace, "c", dryRun="All")
    assert dry.status_code == 403  # a dry run is checked as well

    assert client.delete(f"/api/v1/namespaces/{namespace}/configmaps/a").status_code == 200
    freed = {"configmaps": str(base + 1)}
    eventually(lambda: used(client, namespace) == freed or None)  # the controller gives it back
    assert configmap(client, namespace, "c", dryRun="All").status_code == 201
    assert used(client, namespace) == freed  # and is not charged
    assert configmap(client, namespace, "c").status_code == 201
    assert used(client, namespace) == {"configmaps": full}


def test_count_names_of_any_resource(client: httpx.Client, namespace: str) -> None:
    quota(client, namespace, {"count/secrets": "1", "count/deployments.apps": "0"})
    assert client.post(f"/api/v1/namespaces/{namespace}/secrets", json={"metadata": {"name": "s"}}).status_code == 201
    refused = client.post(f"/api/v1/namespaces/{namespace}/secrets", json={"metadata": {"name": "t"}})
    assert refused.json()["message"] == (
        'secrets "t" is forbidden: exceeded quota: q, requested: count/secrets=1, used: count/secrets=1, '
        "limited: count/secrets=1"
    )
    deployment = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        },
    }
    refused = client.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deployment)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'deployments.apps "d" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, '
        "used: count/deployments.apps=0, limited: count/deployments.apps=0"
    )


def test_compute_quota(client: httpx.Client, namespace: str) -> None:
    quota(client, namespace, {"requests.cpu": "1", "requests.memory": "1Gi", "pods": "2"})
    refused = create_pod(client, namespace, pod("bare"))
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'pods "bare" is forbidden: failed quota: q: must specify requests.cpu for: c; requests.memory for: c'
    )
    first = create_pod(client, namespace, pod("first", {"cpu": "500m", "memory": "256Mi"}))
    assert first.status_code == 201, first.text
    assert used(client, namespace) == {"pods": "1", "requests.cpu": "500m", "requests.memory": "256Mi"}
    refused = create_pod(client, namespace, pod("second", {"cpu": "600m", "memory": "256Mi"}))
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'pods "second" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, '
        "limited: requests.cpu=1"
    )
    assert create_pod(client, namespace, pod("second", {"cpu": "500m", "memory": "768Mi"})).status_code == 201
    assert used(client, namespace) == {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"}

    # a pod that ended costs nothing: the controller recounts when its phase becomes terminal
    status = {"metadata": {"name": "first"}, "status": {"phase": "Succeeded"}}
    headers = {"Content-Type": "application/merge-patch+json"}
    patched = client.patch(f"/api/v1/namespaces/{namespace}/pods/first/status", json=status, headers=headers)
    assert patched.status_code == 200, patched.text
    eventually(lambda: used(client, namespace)["pods"] == "1" or None)
    assert used(client, namespace) == {"pods": "1", "requests.cpu": "500m", "requests.memory": "768Mi"}


def test_services_and_claims(client: httpx.Client, namespace: str) -> None:
    quota(
        client,
        namespace,
        {
            "services.nodeports": "2",
            "requests.storage": "3Gi",
            "gold.storageclass.storage.k8s.io/requests.storage": "1Gi",
        },
    )
    services = f"/api/v1/namespaces/{namespace}/services"
    ports = [{"name": "a", "port": 80}, {"name": "b", "port": 81}, {"name": "c", "port": 82}]
    wide = {"metadata": {"name": "wide"}, "spec": {"type": "NodePort", "ports": ports}}
    refused = client.post(services, json=wide)
    assert refused.json()["message"] == (
        'services "wide" is forbidden: exceeded quota: q, requested: services.nodeports=3, '
        "used: services.nodeports=0, limited: services.nodeports=2"
    )
    internal = {"metadata": {"name": "svc"}, "spec": {"ports": ports}}
    assert client.post(services, json=internal).status_code == 201
    turned = client.patch(
        f"{services}/svc",
        json={"spec": {"type": "NodePort"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert turned.status_code == 403  # an update that costs more is charged the difference
    assert "requested: services.nodeports=3, used: services.nodeports=0" in turned.json()["message"]

    def claim(name: str, size: str, klass: str) -> httpx.Response:
        spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
        body = {"metadata": {"name": name}, "spec": {**spec, "storageClassName": klass}}
        return client.post(f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", json=body)

    assert claim("silver", "2Gi", "silver").status_code == 201
    refused = claim("gold", "2Gi", "gold")
    assert refused.json()["message"] == (
        'persistentvolumeclaims "gold" is forbidden: exceeded quota: q, '
        "requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi,requests.storage=2Gi, "
        "used: gold.storageclass.storage.k8s.io/requests.storage=0,requests.storage=2Gi, "
        "limited: gold.storageclass.storage.k8s.io/requests.storage=1Gi,requests.storage=3Gi"
    )
    assert claim("gold", "512Mi", "gold").status_code == 201
    assert used(client, namespace) == {
        "services.nodeports": "0",
        "requests.storage": "2560Mi",
        "gold.storageclass.storage.k8s.io/requests.storage": "512Mi",
    }


def test_scopes(client: httpx.Client, namespace: str) -> None:
    quota(client, namespace, {"pods": "1"}, scopes=["Terminating"])
    assert create_pod(client, namespace, pod("long")).status_code == 201  # not terminating: not counted
    assert create_pod(client, namespace, pod("job", activeDeadlineSeconds=60)).status_code == 201
    refused = create_pod(client, namespace, pod("job2", activeDeadlineSeconds=60))
    assert refused.json()["message"] == (
        'pods "job2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'
    )
    assert configmap(client, namespace, "free").status_code == 201  # a scoped quota counts pods only


def test_priority_class_scope_selector(client: httpx.Client, namespace: str) -> None:
    selector = {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["rq-high"]}]}
    quota(client, namespace, {"pods": "0"}, scopeSelector=selector)
    high = {"metadata": {"name": "rq-high"}, "value": 1000}
    assert client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=high).status_code == 201
    try:
        refused = create_pod(client, namespace, pod("important", priorityClassName="rq-high"))
        assert refused.status_code == 403
        assert "exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0" in refused.json()["message"]
        assert create_pod(client, namespace, pod("ordinary")).status_code == 201
    finally:
        client.delete("/apis/scheduling.k8s.io/v1/priorityclasses/rq-high")


def test_status_unknown_until_counted(client: httpx.Client, namespace: str) -> None:
    quota(client, namespace, {"configmaps": "5"})
    current = client.get(f"/api/v1/namespaces/{namespace}/resourcequotas/q").json()
    current["status"].pop("used")  # as if not counted yet (the controller only reacts to spec changes)
    replaced = client.put(f"/api/v1/namespaces/{namespace}/resourcequotas/q/status", json=current)
    assert replaced.status_code == 200, replaced.text
    refused = configmap(client, namespace, "a")
    assert refused.status_code == 403
    assert (
        refused.json()["message"] == 'configmaps "a" is forbidden: status unknown for quota: q, resources: configmaps'
    )
    changed = client.patch(
        f"/api/v1/namespaces/{namespace}/resourcequotas/q",
        json={"spec": {"hard": {"configmaps": "6"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert changed.status_code == 200
    counted(client, namespace, {"configmaps": "6"})
    assert configmap(client, namespace, "a").status_code == 201


def test_kubectl_describe_quota(client: httpx.Client, namespace: str, kubectl: Kubectl) -> None:
    base = own_configmaps(client, namespace)
    quota(client, namespace, {"configmaps": "3", "requests.memory": "1Gi"})
    assert configmap(client, namespace, "a").status_code == 201
    out = kubectl.run("describe", "quota", "q", "-n", namespace).stdout
    assert re.search(r"^Name:\s+q$", out, re.M), out
    assert re.search(r"^Resource\s+Used\s+Hard$", out, re.M), out
    assert re.search(rf"^configmaps\s+{base + 1}\s+3$", out, re.M), out
    assert re.search(r"^requests\.memory\s+0\s+1Gi$", out, re.M), out


@pytest.fixture(scope="module")
def second_gateway(server: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """Another gateway on the shared server's storage (it does not lead: no controllers run there)."""
    directory = Path(tmp_path_factory.mktemp("second-gateway"))
    # no compaction of the shared storage from here: its own server keeps its history
    process = GatewayProcess(directory, "--storage", server.storage, "--etcd-compaction-interval", "0").start()
    yield process
    process.kill()


def test_a_burst_through_two_gateways_never_overshoots(
    client: httpx.Client, namespace: str, server: GatewayProcess, second_gateway: GatewayProcess
) -> None:
    base = own_configmaps(client, namespace)
    quota(client, namespace, {"configmaps": str(base + 5)})
    eventually(lambda: second_gateway.client().get(f"/api/v1/namespaces/{namespace}").status_code == 200 or None)

    def attempt(index: int) -> int:
        gateway = (server, second_gateway)[index % 2]
        with gateway.client() as own:
            return configmap(own, namespace, f"burst-{index}").status_code

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(attempt, range(20)))
    # 403 beyond the quota; 409 for one that lost the race for the quota's status four times
    assert set(codes) <= {201, 403, 409} and 0 < codes.count(201) <= 5, codes
    listed = client.get(f"/api/v1/namespaces/{namespace}/configmaps").json()["items"]
    assert len([cm for cm in listed if cm["metadata"]["name"].startswith("burst-")]) == codes.count(201)
    assert used(client, namespace) == {"configmaps": str(base + codes.count(201))}
    if codes.count(201) < 5:  # what the race left is still there to take
        assert configmap(client, namespace, "after-burst").status_code == 201


LIMITED = """
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchScopes:
      - scopeName: PriorityClass
        operator: In
        values: ["cluster-services"]
    - resource: persistentvolumeclaims
      matchContains: ["storage"]
"""


@pytest.fixture(scope="module")
def limiting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """A server whose ResourceQuota configuration limits consumption by default."""
    directory = Path(tmp_path_factory.mktemp("limited-resources"))
    (directory / "admission.yaml").write_text(LIMITED)
    process = GatewayProcess(
        directory / "data", "--admission-control-config-file", str(directory / "admission.yaml")
    ).start()
    yield process
    process.kill()


def test_limited_resources_need_a_covering_quota(limiting: GatewayProcess) -> None:
    with limiting.client() as client:
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": "limited"}}).status_code == 201
        critical = {"metadata": {"name": "cluster-services"}, "value": 1000}
        assert client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=critical).status_code == 201
        refused = create_pod(client, "limited", pod("p", priorityClassName="cluster-services"))
        assert refused.status_code == 500  # upstream's plain error, not a Forbidden
        assert refused.json()["message"] == (
            "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]"
        )
        assert create_pod(client, "limited", pod("ordinary")).status_code == 201
        claim = {
            "metadata": {"name": "c"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
        refused = client.post("/api/v1/namespaces/limited/persistentvolumeclaims", json=claim)
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            'persistentvolumeclaims "c" is forbidden: insufficient quota to consume: requests.storage'
        )

        selector = {
            "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["cluster-services"]}]
        }
        quota(client, "limited", {"pods": "10"}, scopeSelector=selector)
        assert create_pod(client, "limited", pod("p", priorityClassName="cluster-services")).status_code == 201
        body = {"metadata": {"name": "storage"}, "spec": {"hard": {"requests.storage": "10Gi"}}}
        assert client.post("/api/v1/namespaces/limited/resourcequotas", json=body).status_code == 201
        eventually(lambda: "used" in client.get("/api/v1/namespaces/limited/resourcequotas/storage").json()["status"])
        assert client.post("/api/v1/namespaces/limited/persistentvolumeclaims", json=claim).status_code == 201


def test_a_configuration_without_a_resource_stops_the_start(tmp_path: Path) -> None:
    config = tmp_path / "admission.yaml"
    config.write_text(LIMITED.replace("- resource: persistentvolumeclaims", '- apiGroup: ""'))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "protokube",
            "serve",
            "--data-dir",
            str(tmp_path / "data"),
            "--admission-control-config-file",
            str(config),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "limitedResources[1].resource: Required value" in result.stderr
