"""What a new cluster holds without anyone writing it: the system PriorityClasses and a local
APIService per served group version, kept in step with what is served across restarts."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from .helpers import GatewayProcess, Kubectl, kubectl_path

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
LOCAL = [
    ("v1.", "", 18000, 1),
    ("v1.admissionregistration.k8s.io", "admissionregistration.k8s.io", 16700, 15),
    ("v1.apiextensions.k8s.io", "apiextensions.k8s.io", 16700, 15),
    ("v1.apps", "apps", 17800, 15),
    ("v1.authentication.k8s.io", "authentication.k8s.io", 17700, 15),
    ("v1.authorization.k8s.io", "authorization.k8s.io", 17600, 15),
    ("v1.autoscaling", "autoscaling", 17500, 15),
    ("v1.batch", "batch", 17400, 15),
    ("v1.certificates.k8s.io", "certificates.k8s.io", 17300, 15),
    ("v1.coordination.k8s.io", "coordination.k8s.io", 16500, 15),
    ("v1.discovery.k8s.io", "discovery.k8s.io", 16200, 15),
    ("v1.events.k8s.io", "events.k8s.io", 17750, 15),
    ("v1.flowcontrol.apiserver.k8s.io", "flowcontrol.apiserver.k8s.io", 16100, 21),
    ("v1.networking.k8s.io", "networking.k8s.io", 17200, 15),
    ("v1.node.k8s.io", "node.k8s.io", 16300, 15),
    ("v1.policy", "policy", 17100, 15),
    ("v1.rbac.authorization.k8s.io", "rbac.authorization.k8s.io", 17000, 15),
    ("v1.scheduling.k8s.io", "scheduling.k8s.io", 16600, 15),
    ("v1.storage.k8s.io", "storage.k8s.io", 16800, 15),
    ("v2.autoscaling", "autoscaling", 17500, 30),
]


def ready(client: httpx.Client) -> str:
    deadline = time.monotonic() + 30
    while (response := client.get("/readyz", params={"verbose": "1"})).status_code != 200:
        assert time.monotonic() < deadline, response.text
        time.sleep(0.1)
    return response.text


def test_local_apiservices_and_system_priority_classes(tmp_path: Path) -> None:
    server = GatewayProcess(tmp_path / "data").start()
    try:
        with server.client() as client:
            verbose = ready(client)
            assert "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok" in verbose
            assert "[+]autoregister-completion ok" in verbose
            items = client.get(APISERVICES).json()["items"]
            assert [(i["metadata"]["name"], i["spec"].get("group", ""), i["spec"]["groupPriorityMinimum"],
                     i["spec"]["versionPriority"]) for i in items] == LOCAL  # fmt: skip
            apps = next(i for i in items if i["metadata"]["name"] == "v1.apps")
            assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
            assert "service" not in apps["spec"]
            [condition] = apps["status"]["conditions"]
            assert condition["type"] == "Available" and condition["status"] == "True"
            assert condition["reason"] == "Local" and condition["message"] == "Local APIServices are always available"

            classes = client.get("/apis/scheduling.k8s.io/v1/priorityclasses").json()["items"]
            by_name = {c["metadata"]["name"]: c for c in classes}
            assert by_name["system-node-critical"]["value"] == 2000001000
            assert by_name["system-cluster-critical"]["value"] == 2000000000
            assert by_name["system-cluster-critical"]["description"].startswith("Used for system critical pods")

            # Someone changes a local APIService's spec: the next start puts it back.
            apps["spec"]["groupPriorityMinimum"] = 100
            assert client.put(f"{APISERVICES}/v1.apps", json=apps).status_code == 200
            bad = dict(apps, metadata={"name": "v1.wrong"})
            response = client.post(APISERVICES, json=bad)
            assert response.status_code == 422
            assert (
                'metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1.apps"'
                in (response.json()["message"])
            )
        if kubectl_path() is not None:
            out = Kubectl(server.url, tmp_path).run("get", "apiservices").stdout.splitlines()
            assert out[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
            assert out[1].split()[:3] == ["v1.", "Local", "True"]
    finally:
        server.kill()

    restarted = GatewayProcess(tmp_path / "data", "--runtime-config", "batch/v1=false").start()
    try:
        with restarted.client() as client:
            ready(client)
            names = [i["metadata"]["name"] for i in client.get(APISERVICES).json()["items"]]
            assert "v1.batch" not in names and "v1.apps" in names  # no longer served: removed
            spec = client.get(f"{APISERVICES}/v1.apps").json()["spec"]
            assert spec["groupPriorityMinimum"] == 17800
    finally:
        restarted.kill()
