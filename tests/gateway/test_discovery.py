"""Discovery against a running server: the legacy documents field by field as kube-apiserver 1.32
serves them, and aggregated discovery (apidiscovery.k8s.io v2 / v2beta1) with its negotiation,
ETag, 304 and group order; kubectl reads the aggregated document alone.

The expected entries are copied from kube-apiserver's discovery documents (kubernetes/kubernetes
api/discovery/api__v1.json, apis__apps__v1.json, aggregated_v2.json).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from protokube.gen.k8s.io.api.apidiscovery.v2 import types_pb2 as v2
from protokube.gen.k8s.io.api.apidiscovery.v2beta1 import types_pb2 as v2beta1
from protokube.schema import envelope

from .helpers import Kubectl

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
PROTOBUF_V2 = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = f"{AGGREGATED_V2},{AGGREGATED_V2BETA1},application/json"
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS_VERBS = ["get", "patch", "update"]
PROXY_VERBS = ["create", "delete", "get", "patch", "update"]


def _sub(name: str, kind: str, verbs: list[str], group: str | None = None, version: str | None = None) -> dict:
    entry = {"name": name, "singularName": "", "namespaced": True, "kind": kind, "verbs": verbs}
    if group is not None:
        entry.update(group=group, version=version)
    return entry


# /api/v1 as kube-apiserver 1.32 lists pods and its subresources (serviceaccounts/token aside).
UPSTREAM_PODS = [
    {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ALL_VERBS,
        "shortNames": ["po"],
        "categories": ["all"],
        "storageVersionHash": "xPOwRZ+Yhw8=",
    },
    _sub("pods/attach", "PodAttachOptions", ["create", "get"]),
    _sub("pods/binding", "Binding", ["create"]),
    _sub("pods/ephemeralcontainers", "Pod", STATUS_VERBS),
    _sub("pods/eviction", "Eviction", ["create"], "policy", "v1"),
    _sub("pods/exec", "PodExecOptions", ["create", "get"]),
    _sub("pods/log", "Pod", ["get"]),
    _sub("pods/portforward", "PodPortForwardOptions", ["create", "get"]),
    _sub("pods/proxy", "PodProxyOptions", PROXY_VERBS),
    _sub("pods/status", "Pod", STATUS_VERBS),
]
UPSTREAM_BINDINGS = {
    "name": "bindings",
    "singularName": "binding",
    "namespaced": True,
    "kind": "Binding",
    "verbs": ["create"],
}
UPSTREAM_DEPLOYMENTS = [
    {
        "name": "deployments",
        "singularName": "deployment",
        "namespaced": True,
        "kind": "Deployment",
        "verbs": ALL_VERBS,
        "shortNames": ["deploy"],
        "categories": ["all"],
        "storageVersionHash": "8aSe+NMegvE=",
    },
    _sub("deployments/scale", "Scale", STATUS_VERBS, "autoscaling", "v1"),
    _sub("deployments/status", "Deployment", STATUS_VERBS),
]
# The aggregated entry of deployments in aggregated_v2.json.
UPSTREAM_AGGREGATED_DEPLOYMENTS = {
    "resource": "deployments",
    "responseKind": {"group": "", "version": "", "kind": "Deployment"},
    "scope": "Namespaced",
    "singularResource": "deployment",
    "verbs": ALL_VERBS,
    "shortNames": ["deploy"],
    "categories": ["all"],
    "subresources": [
        {
            "subresource": "scale",
            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": STATUS_VERBS,
        },
        {
            "subresource": "status",
            "responseKind": {"group": "", "version": "", "kind": "Deployment"},
            "verbs": STATUS_VERBS,
        },
    ],
}
# The group order of aggregated_v2.json (and of /apis), for the groups protokube serves.
UPSTREAM_GROUP_ORDER = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
]


def _by_name(document: dict) -> dict[str, dict]:
    return {entry["name"]: entry for entry in document["resources"]}


def test_core_resources_as_upstream_lists_them(client: httpx.Client) -> None:
    document = client.get("/api/v1").json()
    entries = _by_name(document)
    served_pod_entries = [entries[name] for name in sorted(entries) if name == "pods" or name.startswith("pods/")]
    assert served_pod_entries == UPSTREAM_PODS
    assert entries["bindings"] == UPSTREAM_BINDINGS
    assert entries["nodes/proxy"] == {**_sub("nodes/proxy", "NodeProxyOptions", PROXY_VERBS), "namespaced": False}
    assert entries["services/proxy"] == _sub("services/proxy", "ServiceProxyOptions", PROXY_VERBS)
    assert entries["replicationcontrollers/scale"] == _sub(
        "replicationcontrollers/scale", "Scale", STATUS_VERBS, "autoscaling", "v1"
    )
    # Resources without storage of their own have no storage version hash.
    assert "storageVersionHash" not in entries["componentstatuses"]
    assert [e["name"] for e in document["resources"]] == sorted(entries)


def test_apps_resources_as_upstream_lists_them(client: httpx.Client) -> None:
    entries = _by_name(client.get("/apis/apps/v1").json())
    assert [entries[n] for n in sorted(entries) if n.startswith("deployments")] == UPSTREAM_DEPLOYMENTS


def test_storage_version_hash_is_of_the_stored_version(client: httpx.Client) -> None:
    """events.k8s.io/v1 Events are core/v1 Events in storage; autoscaling/v1 HPAs are v2's."""
    events = _by_name(client.get("/apis/events.k8s.io/v1").json())["events"]
    assert events["storageVersionHash"] == "r2yiGXH7wu8="  # the hash of "/v1/Event", as core's events
    v1 = _by_name(client.get("/apis/autoscaling/v1").json())["horizontalpodautoscalers"]
    v2_ = _by_name(client.get("/apis/autoscaling/v2").json())["horizontalpodautoscalers"]
    assert v1["storageVersionHash"] == v2_["storageVersionHash"]


def test_legacy_group_list_in_the_aggregators_order(client: httpx.Client) -> None:
    groups = client.get("/apis").json()["groups"]
    assert [g["name"] for g in groups] == UPSTREAM_GROUP_ORDER
    autoscaling = next(g for g in groups if g["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    assert autoscaling["preferredVersion"]["version"] == "v2"


def test_aggregated_core_document(client: httpx.Client) -> None:
    response = client.get("/api", headers={"Accept": KUBECTL_ACCEPT})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == AGGREGATED_V2
    assert response.headers["Vary"] == "Accept"
    assert response.headers["Cache-Control"] == "public"
    document = response.json()
    assert (document["kind"], document["apiVersion"], document["metadata"]) == (
        "APIGroupDiscoveryList",
        "apidiscovery.k8s.io/v2",
        {},
    )
    [core] = document["items"]
    assert core["metadata"] == {"creationTimestamp": None}
    [version] = core["versions"]
    assert (version["version"], version["freshness"]) == ("v1", "Current")
    pods = next(r for r in version["resources"] if r["resource"] == "pods")
    assert {k: pods[k] for k in ("responseKind", "scope", "singularResource", "shortNames", "categories")} == {
        "responseKind": {"group": "", "version": "", "kind": "Pod"},
        "scope": "Namespaced",
        "singularResource": "pod",
        "shortNames": ["po"],
        "categories": ["all"],
    }
    subresources = {s["subresource"]: s for s in pods["subresources"]}
    assert subresources["eviction"] == {
        "subresource": "eviction",
        "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"},
        "verbs": ["create"],
    }
    assert subresources["log"]["responseKind"] == {"group": "", "version": "", "kind": "Pod"}
    assert list(subresources) == sorted(subresources)


def test_aggregated_groups_document(client: httpx.Client) -> None:
    document = client.get("/apis", headers={"Accept": AGGREGATED_V2}).json()
    assert [g["metadata"]["name"] for g in document["items"]] == UPSTREAM_GROUP_ORDER
    apps = next(g for g in document["items"] if g["metadata"]["name"] == "apps")
    deployments = next(r for r in apps["versions"][0]["resources"] if r["resource"] == "deployments")
    assert deployments == UPSTREAM_AGGREGATED_DEPLOYMENTS
    autoscaling = next(g for g in document["items"] if g["metadata"]["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]


def test_v2beta1_and_protobuf(client: httpx.Client) -> None:
    json_v2 = client.get("/apis", headers={"Accept": AGGREGATED_V2}).json()
    beta = client.get("/apis", headers={"Accept": AGGREGATED_V2BETA1})
    assert beta.headers["Content-Type"] == AGGREGATED_V2BETA1
    assert beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert beta.json()["items"] == json_v2["items"]

    proto = client.get("/apis", headers={"Accept": PROTOBUF_V2})
    assert proto.status_code == 200 and proto.headers["Content-Type"] == PROTOBUF_V2
    unknown = envelope.unwrap(proto.content)
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == ("apidiscovery.k8s.io/v2", "APIGroupDiscoveryList")
    decoded = v2.APIGroupDiscoveryList.FromString(unknown.raw)
    assert [g.metadata.name for g in decoded.items] == UPSTREAM_GROUP_ORDER

    proto_beta = client.get("/api", headers={"Accept": PROTOBUF_V2.replace("v=v2;", "v=v2beta1;")})
    beta_unknown = envelope.unwrap(proto_beta.content)
    assert beta_unknown.typeMeta.apiVersion == "apidiscovery.k8s.io/v2beta1"
    assert v2beta1.APIGroupDiscoveryList.FromString(beta_unknown.raw).items[0].versions[0].version == "v1"


def test_etag_and_not_modified(client: httpx.Client) -> None:
    first = client.get("/apis", headers={"Accept": AGGREGATED_V2})
    etag = first.headers["ETag"]
    assert re.fullmatch(r'"[0-9A-F]{128}"', etag)  # quoted SHA-512, as upstream's
    again = client.get("/apis", headers={"Accept": AGGREGATED_V2, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag and "Content-Type" not in again.headers
    assert "Content-Length" not in again.headers
    # The same document in another version or format has the same ETag.
    assert client.get("/apis", headers={"Accept": PROTOBUF_V2}).headers["ETag"] == etag
    stale = client.get("/apis", headers={"Accept": AGGREGATED_V2, "If-None-Match": '"0"'})
    assert stale.status_code == 200
    assert client.get("/api", headers={"Accept": AGGREGATED_V2}).headers["ETag"] != etag


def test_negotiation_between_aggregated_and_legacy(client: httpx.Client) -> None:
    legacy = client.get("/apis", headers={"Accept": "application/json"})
    assert legacy.json()["kind"] == "APIGroupList" and "ETag" not in legacy.headers
    # A clause asking for another representation is skipped; the next one decides.
    skipped = client.get("/api", headers={"Accept": f"application/json;as=Table;v=v1;g=meta.k8s.io,{AGGREGATED_V2}"})
    assert skipped.headers["Content-Type"] == AGGREGATED_V2
    unknown_version = client.get("/apis", headers={"Accept": AGGREGATED_V2.replace("v=v2;", "v=v3;")})
    assert unknown_version.status_code == 406
    assert client.get("/apis", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).status_code == 406
    # Group and version documents have no aggregated form.
    group = client.get("/apis/apps", headers={"Accept": KUBECTL_ACCEPT})
    assert group.headers["Content-Type"] == "application/json" and group.json()["kind"] == "APIGroup"


def test_kubectl_uses_the_aggregated_documents_only(kubectl: Kubectl, tmp_path: Path) -> None:
    out = kubectl.run("--cache-dir", str(tmp_path), "-v=8", "api-resources")
    requested = re.findall(r"GET \S+?(/apis?[^?\s]*)", out.stderr)
    assert requested == ["/api", "/apis"], requested
    assert f"Accept: {KUBECTL_ACCEPT}" in out.stderr
    assert f"Content-Type: {AGGREGATED_V2}" in out.stderr


def test_kubectl_api_resources_match_the_registry(kubectl: Kubectl, client: httpx.Client, tmp_path: Path) -> None:
    """kubectl lists each group's preferred version, as the legacy documents describe it."""
    listed = kubectl.run("--cache-dir", str(tmp_path), "api-resources", "-o", "name").stdout.split()
    expected = []
    preferred = [g["preferredVersion"]["groupVersion"] for g in client.get("/apis").json()["groups"]]
    for group_version in ["v1", *preferred]:
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        group = group_version.rpartition("/")[0]
        for entry in client.get(path).json()["resources"]:
            if "/" not in entry["name"]:
                expected.append(f"{entry['name']}.{group}" if group else entry["name"])
    assert sorted(listed) == sorted(expected)
    assert {"pods", "bindings", "deployments.apps"} <= set(listed)


def test_root_paths_index(client: httpx.Client) -> None:
    """``/`` and ``/index.html``: every path served, sorted, as upstream's index (what a browser
    shows through kubectl proxy)."""
    root = client.get("/")
    assert root.status_code == 200
    assert root.headers["content-type"] == "application/json"
    paths = root.json()["paths"]
    assert paths == sorted(set(paths))
    expected = {"/api", "/api/v1", "/apis", "/apis/", "/apis/apps", "/apis/apps/v1", "/healthz", "/healthz/etcd"}
    expected |= {"/livez", "/readyz", "/metrics", "/version", "/openapi/v2", "/openapi/v3", "/openapi/v3/"}
    assert expected <= set(paths)
    assert not [p for p in paths if p.startswith("/debug")]
    assert all(client.get(path).status_code == 200 for path in paths if not path.endswith("/"))
    assert client.get("/index.html").json() == root.json()
