"""Service cluster IPs and node ports, against real servers: allocated from ranges kept in storage,
unique, honoured when requested and free, refused with upstream's messages when taken or out of
range, released on delete and type changes, untouched by dry runs, kept across restarts, unique
across two gateways on one storage, and exhaustion answered as upstream answers it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import GatewayProcess

SMALL_CIDR = "10.0.0.0/29"  # six addresses: 10.0.0.1 (the kubernetes service's) - 10.0.0.6
SMALL_PORTS = "30000-30003"
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}


def service(name: str, type_: str = "ClusterIP", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"type": type_, "ports": [{"port": 80}], **spec}}


def create(client: httpx.Client, namespace: str, body: dict[str, Any], **params: str) -> httpx.Response:
    return client.post(f"/api/v1/namespaces/{namespace}/services", json=body, params=params)


def created(client: httpx.Client, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    response = create(client, namespace, body)
    assert response.status_code == 201, response.text
    return response.json()["spec"]


def delete(client: httpx.Client, namespace: str, name: str) -> None:
    response = client.delete(f"/api/v1/namespaces/{namespace}/services/{name}")
    assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("small-ranges")
    process = GatewayProcess(
        data, "--service-cluster-ip-range", SMALL_CIDR, "--service-node-port-range", SMALL_PORTS
    ).start()
    yield process
    process.kill()


def test_allocated_ips_are_unique_and_in_the_default_range(client: httpx.Client, namespace: str) -> None:
    network = ipaddress.ip_network("10.96.0.0/12")
    specs = [created(client, namespace, service(f"s{i}")) for i in range(12)]
    ips = [spec["clusterIP"] for spec in specs]
    assert len(set(ips)) == len(ips)
    for spec in specs:
        ip = ipaddress.ip_address(spec["clusterIP"])
        assert ip in network and ip != network.network_address and ip != network.broadcast_address
        # dynamic IPs come from above the range's first 256 (kept for requested ones)
        assert int(ip) - int(network.network_address) > 256
        assert spec["clusterIPs"] == [spec["clusterIP"]]
        assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")


def test_service_types_read_back_as_upstream(client: httpx.Client, namespace: str) -> None:
    node_port = created(client, namespace, service("np", "NodePort"))
    (port,) = node_port["ports"]
    assert 30000 <= port["nodePort"] <= 32767
    assert node_port == {
        "ports": [{"protocol": "TCP", "port": 80, "targetPort": 80, "nodePort": port["nodePort"]}],
        "clusterIP": node_port["clusterIP"],
        "clusterIPs": [node_port["clusterIP"]],
        "type": "NodePort",
        "sessionAffinity": "None",
        "externalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    lb = created(client, namespace, service("lb", "LoadBalancer", externalTrafficPolicy="Local"))
    assert lb["allocateLoadBalancerNodePorts"] is True
    assert 30000 <= lb["healthCheckNodePort"] <= 32767
    assert lb["healthCheckNodePort"] != lb["ports"][0]["nodePort"]
    headless = created(client, namespace, service("headless", clusterIP="None", selector={"app": "a"}))
    assert (headless["clusterIP"], headless["clusterIPs"]) == ("None", ["None"])
    assert (headless["ipFamilies"], headless["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    external = created(
        client, namespace, {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "a.example"}}
    )
    assert external == {"type": "ExternalName", "sessionAffinity": "None", "externalName": "a.example"}
    affinity = created(client, namespace, service("sticky", sessionAffinity="ClientIP"))
    assert affinity["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_a_requested_ip_is_honoured_once_and_free_again_after_delete(client: httpx.Client, namespace: str) -> None:
    assert created(client, namespace, service("a", clusterIP="10.96.0.5"))["clusterIPs"] == ["10.96.0.5"]
    taken = create(client, namespace, service("b", clusterIP="10.96.0.5"))
    assert taken.status_code == 422, taken.text
    status = taken.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: '
        "failed to allocate IP 10.96.0.5: provided IP is already allocated"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: '
            "provided IP is already allocated",
            "field": "spec.clusterIPs",
        }
    ]
    outside = create(client, namespace, service("c", clusterIP="192.168.0.1"))
    assert outside.status_code == 422, outside.text
    assert outside.json()["message"] == (
        'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.0.1"}: failed to allocate IP '
        "192.168.0.1: the provided IP (192.168.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
    )
    delete(client, namespace, "a")
    assert created(client, namespace, service("b", clusterIP="10.96.0.5"))["clusterIP"] == "10.96.0.5"


def test_requested_node_ports(client: httpx.Client, namespace: str) -> None:
    ports = [{"name": "dns", "port": 53, "nodePort": 30053}, {"name": "dns-udp", "port": 53, "protocol": "UDP"}]
    spec = created(client, namespace, service("dns", "NodePort", ports=ports))
    assert [p["nodePort"] for p in spec["ports"]] == [30053, 30053]  # one node port for both protocols
    taken = create(client, namespace, service("other", "NodePort", ports=[{"port": 80, "nodePort": 30053}]))
    assert taken.status_code == 422, taken.text
    assert taken.json()["message"] == (
        'Service "other" is invalid: spec.ports[0].nodePort: Invalid value: 30053: provided port is already allocated'
    )
    outside = create(client, namespace, service("low", "NodePort", ports=[{"port": 80, "nodePort": 8080}]))
    assert outside.status_code == 422, outside.text
    assert outside.json()["message"] == (
        'Service "low" is invalid: spec.ports[0].nodePort: Invalid value: 8080: '
        "provided port is not in the valid range. The range of valid ports is 30000-32767"
    )
    # nothing of a refused create stays taken: its clusterIP and ports go back
    refused = create(
        client,
        namespace,
        service(
            "half",
            "NodePort",
            clusterIP="10.96.0.9",
            ports=[{"port": 1, "nodePort": 30100}, {"port": 2, "nodePort": 30053}],
        ),
    )
    assert refused.status_code == 422, refused.text
    again = created(
        client, namespace, service("half", "NodePort", clusterIP="10.96.0.9", ports=[{"port": 1, "nodePort": 30100}])
    )
    assert again["ports"][0]["nodePort"] == 30100


def test_updates_keep_release_and_allocate(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/services/web"
    first = created(
        client, namespace, service("web", "NodePort", ports=[{"name": "http", "port": 80, "nodePort": 30080}])
    )
    # a replace that leaves out the allocated values keeps them
    replaced = client.put(path, json=service("web", "NodePort", ports=[{"name": "http", "port": 80}]))
    assert replaced.status_code == 200, replaced.text
    spec = replaced.json()["spec"]
    assert (spec["clusterIP"], spec["ports"][0]["nodePort"]) == (first["clusterIP"], 30080)
    # NodePort -> ClusterIP frees the node port
    to_cluster_ip = client.patch(
        path, json={"spec": {"type": "ClusterIP", "externalTrafficPolicy": None}}, headers=MERGE_PATCH
    )
    assert to_cluster_ip.status_code == 200, to_cluster_ip.text
    assert "nodePort" not in to_cluster_ip.json()["spec"]["ports"][0]
    assert created(client, namespace, service("next", "NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    # ClusterIP -> ExternalName frees the IP, and back to ClusterIP takes a new one
    to_external = client.patch(
        path, json={"spec": {"type": "ExternalName", "externalName": "a.example"}}, headers=MERGE_PATCH
    )
    assert to_external.status_code == 200, to_external.text
    external = to_external.json()["spec"]
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & external.keys()
    assert created(client, namespace, service("reuse", clusterIP=first["clusterIP"]))["clusterIP"] == first["clusterIP"]
    back = client.patch(path, json={"spec": {"type": "ClusterIP", "externalName": None}}, headers=MERGE_PATCH)
    assert back.status_code == 200, back.text
    assert back.json()["spec"]["clusterIP"] not in ("", first["clusterIP"])


def test_dry_run_shows_values_but_takes_none(client: httpx.Client, namespace: str) -> None:
    dry = create(
        client,
        namespace,
        service("dry", "NodePort", clusterIP="10.96.0.77", ports=[{"port": 80, "nodePort": 30777}]),
        dryRun="All",
    )
    assert dry.status_code == 201, dry.text
    assert (dry.json()["spec"]["clusterIP"], dry.json()["spec"]["ports"][0]["nodePort"]) == ("10.96.0.77", 30777)
    picked = create(client, namespace, service("dry2", "NodePort"), dryRun="All").json()["spec"]
    assert picked["clusterIP"] and picked["ports"][0]["nodePort"]
    assert client.get(f"/api/v1/namespaces/{namespace}/services/dry").status_code == 404
    real = created(
        client, namespace, service("real", "NodePort", clusterIP="10.96.0.77", ports=[{"port": 80, "nodePort": 30777}])
    )
    assert real["clusterIP"] == "10.96.0.77"
    # a dry-run delete frees nothing
    gone = client.delete(f"/api/v1/namespaces/{namespace}/services/real", params={"dryRun": "All"})
    assert gone.status_code == 200, gone.text
    assert create(client, namespace, service("copy", clusterIP="10.96.0.77")).status_code == 422


def test_exhaustion_is_upstreams_error_and_deletes_free_room(small: GatewayProcess) -> None:
    with small.client() as client:
        namespace = "default"
        kubernetes = client.get(f"/api/v1/namespaces/{namespace}/services/kubernetes").json()
        assert kubernetes["spec"]["clusterIP"] == "10.0.0.1"
        ips = [created(client, namespace, service(f"s{i}"))["clusterIP"] for i in range(5)]
        assert sorted(ips, key=ipaddress.ip_address) == [f"10.0.0.{i}" for i in range(2, 7)]
        full = create(client, namespace, service("s5"))
        assert full.status_code == 500, full.text
        status = full.json()
        assert (status["reason"], status["message"]) == (
            "InternalError",
            "Internal error occurred: failed to allocate a serviceIP: range is full",
        )
        delete(client, namespace, "s3")
        assert created(client, namespace, service("s5"))["clusterIP"] == ips[3]

        for i in (0, 1, 2, 4, 5):
            delete(client, namespace, f"s{i}")
        ports = [created(client, namespace, service(f"n{i}", "NodePort"))["ports"][0]["nodePort"] for i in range(4)]
        assert sorted(ports) == [30000, 30001, 30002, 30003]
        no_port = create(client, namespace, service("n4", "NodePort"))
        assert no_port.status_code == 500, no_port.text
        assert no_port.json()["message"] == "Internal error occurred: failed to allocate a nodePort: range is full"
        # the refused service gave back the IP it had taken first
        assert created(client, namespace, service("after"))["clusterIP"]


def test_allocations_survive_a_restart_and_are_shared_by_two_gateways(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = GatewayProcess(data, "--service-cluster-ip-range", SMALL_CIDR).start()
    try:
        with first.client() as client:
            held = created(client, "default", service("held", clusterIP="10.0.0.2"))["clusterIP"]
    finally:
        first.kill()
    restarted = GatewayProcess(data, "--service-cluster-ip-range", SMALL_CIDR).start()
    second = GatewayProcess(
        tmp_path / "second", "--storage", restarted.storage, "--service-cluster-ip-range", SMALL_CIDR
    )
    try:
        second.start()
        with restarted.client() as one, second.client() as two:
            taken = create(two, "default", service("again", clusterIP=held))
            assert taken.status_code == 422, taken.text

            def make(i: int) -> httpx.Response:
                return create(one if i % 2 else two, "default", service(f"p{i}"))

            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(make, range(8)))
        made = [a.json()["spec"]["clusterIP"] for a in answers if a.status_code == 201]
        # the four addresses not the kubernetes service's or held, each once
        assert sorted(made, key=ipaddress.ip_address) == ["10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]
        assert sorted(a.status_code for a in answers) == [201] * 4 + [500] * 4
    finally:
        second.kill()
        restarted.kill()


def test_the_kubernetes_service_and_its_endpoints(server: GatewayProcess, client: httpx.Client) -> None:
    """As kube-apiserver's kubernetes-service controller makes it: the first IP of the range, port
    https 443 to the server's port."""
    port = server.secure_port
    got = client.get("/api/v1/namespaces/default/services/kubernetes").json()
    assert got["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert got["spec"] == {
        "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
        "clusterIP": "10.96.0.1",
        "clusterIPs": ["10.96.0.1"],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    # The server listens on loopback only, and Endpoints may not name a loopback address
    # (upstream's validation): no endpoints are published.
    assert client.get("/api/v1/namespaces/default/endpoints/kubernetes").status_code == 404
    assert client.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes").status_code == 404


def test_a_new_range_starts_with_what_existing_services_hold(tmp_path: Path) -> None:
    """With another --service-cluster-ip-range, the stored allocation no longer applies; the repair
    at start marks the IPs of existing services, so none is handed out again."""
    first = GatewayProcess(tmp_path, "--service-cluster-ip-range", SMALL_CIDR).start()
    try:
        with first.client() as client:
            assert created(client, "default", service("old", clusterIP="10.0.0.3"))["clusterIP"] == "10.0.0.3"
    finally:
        first.kill()
    wider = GatewayProcess(tmp_path, "--service-cluster-ip-range", "10.0.0.0/28").start()
    try:
        with wider.client() as client:
            taken = create(client, "default", service("new", clusterIP="10.0.0.3"))
            assert taken.status_code == 422, taken.text
            picked = {created(client, "default", service(f"n{i}"))["clusterIP"] for i in range(12)}
            assert picked.isdisjoint({"10.0.0.1", "10.0.0.3"}) and len(picked) == 12
    finally:
        wider.kill()
