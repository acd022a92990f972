"""The scripted requests, by area. Each scenario runs once against each server, names every
answer it observes, and reads what it needs next (a resourceVersion, a continue token) from that
server's own answers, so both servers are asked the same questions in their own terms."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from anchor.differential.session import PROTOBUF, Session

NS = "diff"
CM = f"/api/v1/namespaces/{NS}/configmaps"
JSON_PATCH, MERGE_PATCH = "application/json-patch+json", "application/merge-patch+json"
STRATEGIC_PATCH, APPLY_PATCH = "application/strategic-merge-patch+json", "application/apply-patch+yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
DISCOVERY_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
Scenario = Callable[[Session], None]


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data or {"a": "1"},
    }


def _rv(response: Any) -> str:
    return response.json()["metadata"]["resourceVersion"]


def setup(s: Session) -> None:
    """The namespace and its default ServiceAccount (kube-apiserver alone has no controller that
    would make it, and pods need it)."""
    s.call("setup/namespace", "POST", "/api/v1/namespaces", json={"metadata": {"name": NS}})
    s.client.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "default"}})


KINDS: dict[str, tuple[str, dict[str, Any], Callable[[dict[str, Any]], None]]] = {
    "configmap": (CM, configmap("crud"), lambda o: o["data"].update(b="2")),
    "secret": (
        f"/api/v1/namespaces/{NS}/secrets",
        {"metadata": {"name": "crud"}, "stringData": {"token": "abc"}, "type": "Opaque"},
        lambda o: o["data"].update(more="eHl6"),
    ),
    "service": (
        f"/api/v1/namespaces/{NS}/services",
        {"metadata": {"name": "crud"}, "spec": {"ports": [{"port": 80}], "selector": {"app": "x"}}},
        lambda o: o["spec"].update(ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}]),
    ),
    "deployment": (
        f"/apis/apps/v1/namespaces/{NS}/deployments",
        {
            "metadata": {"name": "crud"},
            "spec": {
                "selector": {"matchLabels": {"app": "crud"}},
                "template": {
                    "metadata": {"labels": {"app": "crud"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
        lambda o: o["spec"].update(replicas=3),
    ),
    "role": (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        {"metadata": {"name": "crud"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
        lambda o: o["rules"][0]["verbs"].append("list"),
    ),
    "pod": (
        f"/api/v1/namespaces/{NS}/pods",
        {"metadata": {"name": "crud"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        lambda o: o["metadata"].setdefault("labels", {}).update(x="y"),
    ),
}


def crud(s: Session) -> None:
    """Create, get, update, update with a stale resourceVersion, delete, get again: each kind."""
    for kind, (path, obj, change) in KINDS.items():
        created = s.call(f"crud/{kind}/create", "POST", path, json=obj)
        s.call(f"crud/{kind}/create-again", "POST", path, json=obj)
        current = s.call(f"crud/{kind}/get", "GET", f"{path}/crud").json()
        change(current)
        s.call(f"crud/{kind}/update", "PUT", f"{path}/crud", json=current)
        stale = {**current, "metadata": {**current["metadata"], "resourceVersion": _rv(created)}}
        s.call(f"crud/{kind}/update-stale", "PUT", f"{path}/crud", json=stale)
        s.call(f"crud/{kind}/list-table", "GET", path, headers={"Accept": TABLE})
        s.call(f"crud/{kind}/get-protobuf", "GET", f"{path}/crud", headers={"Accept": PROTOBUF})
        s.call(f"crud/{kind}/delete", "DELETE", f"{path}/crud")
        s.call(f"crud/{kind}/get-deleted", "GET", f"{path}/crud")
        s.call(f"crud/{kind}/delete-deleted", "DELETE", f"{path}/crud")


def lists(s: Session) -> None:
    """Pages with limit and continue; every resourceVersion and resourceVersionMatch combination."""
    for i in range(5):
        s.client.post(CM, json=configmap(f"page-{i}", team="a" if i % 2 else "b"))
    page = s.call("list/limit-2", "GET", CM, params={"limit": "2"}).json()
    token = page["metadata"]["continue"]
    page = s.call("list/limit-2-continue", "GET", CM, params={"limit": "2", "continue": token}).json()
    s.call("list/limit-2-continue-last", "GET", CM, params={"limit": "2", "continue": page["metadata"]["continue"]})
    s.call("list/continue-garbled", "GET", CM, params={"limit": "2", "continue": "not-a-token"})
    s.call("list/continue-with-rv", "GET", CM, params={"limit": "2", "continue": token, "resourceVersion": "1"})
    current = _rv(s.call("list/all", "GET", CM))
    ahead = str(int(current) + 1000)
    combos: dict[str, dict[str, str]] = {
        "rv-0": {"resourceVersion": "0"},
        "rv-0-limit": {"resourceVersion": "0", "limit": "2"},
        "rv-current": {"resourceVersion": current},
        "rv-current-limit": {"resourceVersion": current, "limit": "2"},
        "match-notolderthan": {"resourceVersion": current, "resourceVersionMatch": "NotOlderThan"},
        "match-notolderthan-0": {"resourceVersion": "0", "resourceVersionMatch": "NotOlderThan"},
        "match-notolderthan-limit": {"resourceVersion": current, "resourceVersionMatch": "NotOlderThan", "limit": "2"},
        "match-exact": {"resourceVersion": current, "resourceVersionMatch": "Exact"},
        "match-exact-limit": {"resourceVersion": current, "resourceVersionMatch": "Exact", "limit": "2"},
        "match-exact-0": {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
        "match-without-rv": {"resourceVersionMatch": "NotOlderThan"},
        "match-unknown": {"resourceVersion": current, "resourceVersionMatch": "Newest"},
        "match-with-continue": {"resourceVersionMatch": "Exact", "resourceVersion": current, "continue": token},
        "rv-garbled": {"resourceVersion": "abc"},
        "rv-ahead": {"resourceVersion": ahead, "resourceVersionMatch": "NotOlderThan"},
        "label-selector": {"labelSelector": "team=a"},
        "label-selector-bad": {"labelSelector": "team=="},
        "field-selector": {"fieldSelector": "metadata.name=page-1"},
        "field-selector-unknown": {"fieldSelector": "data.a=1"},
        "limit-negative": {"limit": "-1"},
    }
    for name, params in combos.items():
        s.call(f"list/{name}", "GET", CM, params=params)
    s.call("list/protobuf", "GET", CM, params={"limit": "3"}, headers={"Accept": PROTOBUF})
    s.call("list/table", "GET", CM, params={"limit": "3"}, headers={"Accept": TABLE})
    s.call("list/table-no-object", "GET", CM, params={"includeObject": "None"}, headers={"Accept": TABLE})
    s.call("list/all-namespaces", "GET", "/api/v1/configmaps", params={"labelSelector": "team"})


def watches(s: Session) -> None:
    """Watches replayed from a resourceVersion, with bookmarks, initial events, and a too-old start."""
    start = _rv(s.client.get(CM))
    s.client.post(CM, json=configmap("watched"))
    s.client.patch(f"{CM}/watched", json={"data": {"a": "2"}}, headers={"Content-Type": MERGE_PATCH})
    s.client.delete(f"{CM}/watched")
    params = {"resourceVersion": start, "allowWatchBookmarks": "true", "timeoutSeconds": "4"}
    s.watch("watch/from-rv-bookmarks", CM, params, until=4)
    s.watch("watch/field-selector", CM, {**params, "fieldSelector": "metadata.name=watched"}, until=3)
    initial = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
        "labelSelector": "team=a",
        "timeoutSeconds": "4",
    }
    s.watch("watch/initial-events", CM, initial, until=3)
    s.watch("watch/initial-events-no-bookmarks", CM, {**initial, "allowWatchBookmarks": "false"})
    s.watch("watch/too-old", CM, {"resourceVersion": "1", "timeoutSeconds": "2"}, until=1)
    s.watch("watch/rv-garbled", CM, {"resourceVersion": "x", "timeoutSeconds": "2"}, until=1)
    s.call(
        "watch/protobuf",
        "GET",
        CM,
        params={**params, "watch": "true", "timeoutSeconds": "3"},
        headers={"Accept": PROTOBUF},
    )


def patches(s: Session) -> None:
    """Each patch type on a ConfigMap and a Deployment's containers; bad patches; a CRD-free 415."""
    s.client.post(CM, json=configmap("patched", {"a": "1", "b": "2"}))
    target = f"{CM}/patched"
    cases: list[tuple[str, str, Any]] = [
        ("merge", MERGE_PATCH, {"data": {"a": None, "c": "3"}}),
        ("strategic", STRATEGIC_PATCH, {"data": {"d": "4"}, "metadata": {"labels": {"x": "1"}}}),
        ("json", JSON_PATCH, [{"op": "add", "path": "/data/e", "value": "5"}]),
        ("json-test-fails", JSON_PATCH, [{"op": "test", "path": "/data/e", "value": "nope"}]),
        ("json-bad-path", JSON_PATCH, [{"op": "remove", "path": "/data/missing"}]),
        ("json-not-a-list", JSON_PATCH, {"op": "add"}),
        ("merge-not-json", MERGE_PATCH, "{nope"),
        ("strategic-bad-directive", STRATEGIC_PATCH, {"data": {"$patch": "bogus"}}),
        ("unsupported-type", "text/plain", {"data": {}}),
        ("changes-name", MERGE_PATCH, {"metadata": {"name": "other"}}),
        ("invalid-result", MERGE_PATCH, {"data": {"bad key!": "x"}}),
    ]
    for name, content_type, patch in cases:
        content = patch if isinstance(patch, str) else json.dumps(patch)
        s.call(f"patch/{name}", "PATCH", target, content=content, headers={"Content-Type": content_type})
    s.call("patch/missing-object", "PATCH", f"{CM}/nothing", content="{}", headers={"Content-Type": MERGE_PATCH})
    deployment = KINDS["deployment"][1] | {"metadata": {"name": "patched"}}
    path = f"/apis/apps/v1/namespaces/{NS}/deployments"
    s.client.post(path, json=deployment)
    containers = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}
    s.call(
        "patch/deployment-strategic",
        "PATCH",
        f"{path}/patched",
        json=containers,
        headers={"Content-Type": STRATEGIC_PATCH},
    )
    s.call("patch/deployment-merge", "PATCH", f"{path}/patched", json=containers, headers={"Content-Type": MERGE_PATCH})


def applies(s: Session) -> None:
    """Server-side apply: create, an owned change, a conflict, a forced one, a missing manager."""
    target = f"{CM}/applied"
    body = json.dumps(configmap("applied", {"a": "1"}))
    headers = {"Content-Type": APPLY_PATCH}
    s.call("apply/create", "PATCH", target, content=body, params={"fieldManager": "one"}, headers=headers)
    body_two = json.dumps(configmap("applied", {"a": "2"}))
    s.call("apply/conflict", "PATCH", target, content=body_two, params={"fieldManager": "two"}, headers=headers)
    s.call(
        "apply/force",
        "PATCH",
        target,
        content=body_two,
        params={"fieldManager": "two", "force": "true"},
        headers=headers,
    )
    s.call("apply/no-manager", "PATCH", target, content=body, headers=headers)
    s.call(
        "apply/force-on-merge",
        "PATCH",
        target,
        content="{}",
        params={"force": "true"},
        headers={"Content-Type": MERGE_PATCH},
    )
    s.call(
        "apply/yaml",
        "PATCH",
        target,
        content="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  y: '1'\n",
        params={"fieldManager": "three"},
        headers=headers,
    )
    s.call(
        "apply/wrong-kind",
        "PATCH",
        target,
        content=json.dumps({"apiVersion": "v1", "kind": "Secret"}),
        params={"fieldManager": "one"},
        headers=headers,
    )
    s.call("apply/get", "GET", target)


def dry_runs(s: Session) -> None:
    s.call("dryrun/create", "POST", CM, params={"dryRun": "All"}, json=configmap("dry"))
    s.call("dryrun/get-after-create", "GET", f"{CM}/dry")
    s.client.post(CM, json=configmap("dry"))
    s.call("dryrun/delete", "DELETE", f"{CM}/dry", params={"dryRun": "All"})
    s.call("dryrun/get-after-delete", "GET", f"{CM}/dry")
    s.call("dryrun/update", "PUT", f"{CM}/dry", params={"dryRun": "All"}, json=configmap("dry", {"z": "9"}))
    s.call("dryrun/unknown-value", "POST", CM, params={"dryRun": "Some"}, json=configmap("dry2"))
    s.call(
        "dryrun/generate-name",
        "POST",
        CM,
        params={"dryRun": "All"},
        json={"metadata": {"generateName": "gen-"}, "data": {}},
    )


def field_validation(s: Session) -> None:
    unknown = {**configmap("fv"), "spec": {"x": 1}}
    duplicated = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-dup"},"data":{"a":"1","a":"2"}}'
    for mode in ("Strict", "Warn", "Ignore", "Bogus"):
        s.call(
            f"fieldvalidation/unknown-{mode}",
            "POST",
            CM,
            params={"fieldValidation": mode, "dryRun": "All"},
            json=unknown,
        )
        s.call(
            f"fieldvalidation/duplicate-{mode}",
            "POST",
            CM,
            params={"fieldValidation": mode, "dryRun": "All"},
            content=duplicated,
            headers={"Content-Type": "application/json"},
        )
    s.call("fieldvalidation/unknown-default", "POST", CM, params={"dryRun": "All"}, json=unknown)
    s.call(
        "fieldvalidation/apply-strict",
        "PATCH",
        f"{CM}/fv-apply",
        content=json.dumps(unknown | {"metadata": {"name": "fv-apply"}}),
        params={"fieldManager": "m", "fieldValidation": "Strict", "dryRun": "All"},
        headers={"Content-Type": APPLY_PATCH},
    )


def errors(s: Session) -> None:
    """The error paths clients meet: 400, 404, 405, 406, 409, 413-free, 415, 422."""
    s.call("error/404-object", "GET", f"{CM}/missing")
    s.call("error/404-namespace", "GET", "/api/v1/namespaces/missing/configmaps/x")
    s.call("error/404-resource", "GET", f"/api/v1/namespaces/{NS}/widgets")
    s.call("error/404-group", "GET", "/apis/nope.example.com/v1")
    s.call("error/404-path", "GET", "/nothing/here")
    s.call("error/create-in-missing-namespace", "POST", "/api/v1/namespaces/missing/configmaps", json=configmap("x"))
    s.call("error/422-name", "POST", CM, json=configmap("Bad_Name"))
    s.call("error/422-data-key", "POST", CM, json=configmap("bad-key", {"a b": "1"}))
    s.call(
        "error/400-kind-mismatch", "POST", CM, json={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"}}
    )
    s.call(
        "error/400-namespace-mismatch", "POST", CM, json={"metadata": {"name": "ns", "namespace": "other"}, "data": {}}
    )
    s.call("error/400-body-not-json", "POST", CM, content="{", headers={"Content-Type": "application/json"})
    s.call("error/415", "POST", CM, content="a=1", headers={"Content-Type": "text/plain"})
    s.call("error/406", "GET", f"{CM}", headers={"Accept": "text/plain"})
    s.call("error/406-object", "GET", f"{CM}/crud", headers={"Accept": "application/*"})
    s.call(
        "error/406-table-protobuf",
        "GET",
        CM,
        headers={"Accept": "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"},
    )
    s.call("error/405-patch-collection", "PATCH", CM, content="{}", headers={"Content-Type": MERGE_PATCH})
    s.call("error/405-post-object", "POST", f"{CM}/x", json=configmap("x"))
    s.call("error/409-namespace-exists", "POST", "/api/v1/namespaces", json={"metadata": {"name": NS}})
    s.call("error/put-name-mismatch", "PUT", f"{CM}/a", json=configmap("b"))
    s.call("error/put-create-missing", "PUT", f"{CM}/a", json=configmap("a"))
    s.call(
        "error/delete-precondition",
        "DELETE",
        f"{CM}/page-0",
        json={"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}},
    )
    s.call("error/delete-options-bad", "DELETE", f"{CM}/page-0", params={"propagationPolicy": "Sometimes"})


def protobuf(s: Session) -> None:
    """Protobuf as accepted and as sent; Table negotiation on other kinds."""
    s.call("protobuf/namespace", "GET", f"/api/v1/namespaces/{NS}", headers={"Accept": PROTOBUF})
    s.call("protobuf/status-404", "GET", f"{CM}/missing", headers={"Accept": PROTOBUF})
    s.call(
        "protobuf/accept-list", "GET", CM, params={"limit": "1"}, headers={"Accept": f"{PROTOBUF}, application/json"}
    )
    s.call("protobuf/body-garbled", "POST", CM, content=b"k8s\x00garbage", headers={"Content-Type": PROTOBUF})
    s.call("protobuf/body-no-magic", "POST", CM, content=b"\x0a\x02v1", headers={"Content-Type": PROTOBUF})
    s.call(
        "table/namespaces",
        "GET",
        "/api/v1/namespaces",
        params={"labelSelector": "kubernetes.io/metadata.name=diff"},
        headers={"Accept": TABLE},
    )
    s.call("table/object", "GET", f"/api/v1/namespaces/{NS}", headers={"Accept": TABLE})
    s.call("table/v1beta1", "GET", CM, headers={"Accept": "application/json;as=Table;v=v1beta1;g=meta.k8s.io"})
    s.call(
        "metadata/partial-list",
        "GET",
        CM,
        params={"limit": "2"},
        headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
    )


def _group_entry(document: dict[str, Any], group: str) -> Any:
    """A group's entry in /apis: APIGroupList's groups[] or APIGroupDiscoveryList's items[]."""
    if "items" in document:
        return next((g for g in document["items"] if g["metadata"].get("name", "") == group), None)
    return next((g for g in document["groups"] if g["name"] == group), None)


def discovery(s: Session) -> None:
    """Discovery documents of groups both servers serve, and OpenAPI v3 of one group."""
    for path in ("/api/v1", "/apis/apps/v1", "/apis/rbac.authorization.k8s.io/v1", "/api"):
        s.call(f"discovery{path}", "GET", path)
    legacy = s.client.get("/apis")
    s.observe("discovery/apis-apps-group", legacy, _group_entry(legacy.json(), "apps"))
    aggregated = s.client.get("/apis", headers={"Accept": DISCOVERY_V2})
    s.observe("discovery/v2-apps", aggregated, _group_entry(aggregated.json(), "apps"))
    core = s.client.get("/api", headers={"Accept": DISCOVERY_V2})
    s.observe("discovery/v2-core", core, core.json())
    version = s.client.get("/version")
    s.observe("discovery/version-keys", version, sorted(version.json()))
    root = s.client.get("/openapi/v3")
    s.observe("openapi/v3-root-has-apps", root, {"apis/apps/v1": "apis/apps/v1" in root.json()["paths"]})
    apps = s.client.get("/openapi/v3/apis/apps/v1")
    document = apps.json()
    schemas = document["components"]["schemas"]
    s.observe("openapi/v3-apps-paths", apps, sorted(document["paths"]))
    for name in (
        "io.k8s.api.apps.v1.Deployment",
        "io.k8s.api.apps.v1.DeploymentSpec",
        "io.k8s.api.apps.v1.DeploymentStatus",
    ):
        s.observe(f"openapi/v3-{name.rsplit('.', 1)[1]}", apps, schemas.get(name))
    s.call("openapi/v3-unknown-group", "GET", "/openapi/v3/apis/nope.example.com/v1")


def surface(s: Session) -> None:
    """Subresources, deletecollection, set-based selectors, a watch whose object leaves its selection,
    preconditions and mismatched bodies, and the pod subresources a node would serve."""
    deployments = f"/apis/apps/v1/namespaces/{NS}/deployments"
    deployment = KINDS["deployment"][1]
    s.client.post(deployments, json={**deployment, "metadata": {"name": "surface"}})
    scale = s.call("surface/scale-get", "GET", f"{deployments}/surface/scale").json()
    s.call("surface/scale-put", "PUT", f"{deployments}/surface/scale", json={**scale, "spec": {"replicas": 2}})
    s.call("surface/scale-put-bad", "PUT", f"{deployments}/surface/scale", json={**scale, "spec": {"replicas": -1}})
    s.call("surface/status-get", "GET", f"{deployments}/surface/status")
    s.call(
        "surface/status-patch",
        "PATCH",
        f"{deployments}/surface/status",
        content=json.dumps({"status": {"observedGeneration": 7}, "spec": {"replicas": 5}}),
        headers={"Content-Type": MERGE_PATCH},
    )
    s.call("surface/after-status-patch", "GET", f"{deployments}/surface")

    for name, team in (("sel-a", "a"), ("sel-b", "b"), ("sel-none", "")):
        s.client.post(CM, json=configmap(name, **({"team": team} if team else {})))
    selectors = (("in", "team in (a,b)"), ("notin", "team notin (a)"), ("absent", "!team"), ("empty-set", "team in ()"))
    for name, selector in selectors:
        s.call(f"surface/selector-{name}", "GET", CM, params={"labelSelector": selector})
    s.call("surface/selector-bad-set", "GET", CM, params={"labelSelector": "team in (a"})
    s.call("surface/deletecollection", "DELETE", CM, params={"labelSelector": "team in (a,b)"})
    s.call("surface/after-deletecollection", "GET", CM, params={"labelSelector": "team"})

    start = _rv(s.client.get(CM))
    s.client.post(CM, json=configmap("leaving", team="w"))
    s.client.patch(f"{CM}/leaving", json={"metadata": {"labels": {"team": "x"}}}, headers={"Content-Type": MERGE_PATCH})
    params = {"resourceVersion": start, "labelSelector": "team=w", "timeoutSeconds": "2"}
    s.watch("surface/watch-leaves-selection", CM, params, until=2)

    other_uid = "00000000-0000-0000-0000-000000000000"  # no server makes it
    wrong = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": other_uid}}
    s.call("surface/delete-precondition-uid", "DELETE", f"{CM}/leaving", json=wrong)
    stale = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": start}}
    s.call("surface/delete-precondition-rv", "DELETE", f"{CM}/leaving", json=stale)
    s.call("surface/put-without-rv", "PUT", f"{CM}/leaving", json=configmap("leaving", {"k": "v"}))
    other = {**configmap("elsewhere"), "metadata": {"name": "elsewhere", "namespace": "default"}}
    s.call("surface/create-namespace-mismatch", "POST", CM, json=other)
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kind"}}
    s.call("surface/create-kind-mismatch", "POST", CM, json=secret)
    s.call(
        "surface/table-metadata",
        "GET",
        CM,
        params={"includeObject": "Metadata", "labelSelector": "!team"},
        headers={"Accept": f"{TABLE}, application/json"},
    )
    s.call(
        "surface/partial-object",
        "GET",
        f"{CM}/leaving",
        headers={"Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"},
    )

    pods = f"/api/v1/namespaces/{NS}/pods"
    s.client.post(
        pods, json={"metadata": {"name": "unscheduled"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    )
    s.call("surface/pod-log", "GET", f"{pods}/unscheduled/log")
    s.call("surface/pod-log-missing", "GET", f"{pods}/missing/log")
    s.call("surface/pod-exec", "POST", f"{pods}/unscheduled/exec", params={"command": "ls", "stdout": "true"})
    s.call("surface/pod-proxy", "GET", f"{pods}/unscheduled/proxy/")
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "unscheduled"}}
    s.call("surface/pod-eviction", "POST", f"{pods}/unscheduled/eviction", json=eviction)


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = f"/apis/diff.example.com/v1/namespaces/{NS}/gadgets"
GADGET_CRD: dict[str, Any] = {
    "metadata": {"name": "gadgets.diff.example.com"},
    "spec": {
        "group": "diff.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                },
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1},
                                    "replicas": {"type": "integer"},
                                    "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                                },
                                "x-kubernetes-validations": [
                                    {"rule": "self.size <= 10", "message": "size is at most 10"}
                                ],
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def _established(s: Session, name: str) -> None:
    """Until the CRD named serves (both servers establish it within seconds)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        conditions = (s.client.get(f"{CRDS}/{name}").json().get("status") or {}).get("conditions") or []
        established = any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
        if established and s.client.get(GADGETS).status_code == 200:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{s.label}: CRD {name} not established in 60 s")


def custom_resources(s: Session) -> None:
    """A CRD with a schema (defaults, enum, minimum, a CEL rule), status and scale subresources and a
    printer column: the custom resource's writes, errors, table, scale and protobuf refusal."""
    s.call("crd/create", "POST", CRDS, json=GADGET_CRD)
    _established(s, GADGET_CRD["metadata"]["name"])
    gadget = {"apiVersion": "diff.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    s.call("crd/cr-create", "POST", GADGETS, json={**gadget, "spec": {"size": 2, "replicas": 1, "extra": "x"}})
    s.call("crd/cr-get", "GET", f"{GADGETS}/g")
    s.call("crd/cr-invalid", "POST", GADGETS, json={**gadget, "metadata": {"name": "bad"}, "spec": {"size": 0}})
    s.call("crd/cr-cel", "POST", GADGETS, json={**gadget, "metadata": {"name": "big"}, "spec": {"size": 11}})
    s.call("crd/cr-enum", "POST", GADGETS, json={**gadget, "metadata": {"name": "hue"}, "spec": {"color": "green"}})
    s.call("crd/cr-strict", "POST", GADGETS, params={"fieldValidation": "Strict"},
           json={**gadget, "metadata": {"name": "strict"}, "spec": {"size": 1, "extra": "x"}})  # fmt: skip
    s.call("crd/cr-table", "GET", GADGETS, headers={"Accept": TABLE})
    s.call("crd/cr-protobuf", "GET", f"{GADGETS}/g", headers={"Accept": PROTOBUF})
    s.call("crd/cr-scale", "GET", f"{GADGETS}/g/scale")
    s.call(
        "crd/cr-status",
        "PATCH",
        f"{GADGETS}/g/status",
        content=json.dumps({"status": {"replicas": 1}, "spec": {"size": 9}}),
        headers={"Content-Type": MERGE_PATCH},
    )
    s.call("crd/cr-strategic", "PATCH", f"{GADGETS}/g", content="{}", headers={"Content-Type": STRATEGIC_PATCH})
    s.call("crd/cr-delete", "DELETE", f"{GADGETS}/g")


def reviews(s: Session) -> None:
    """The review APIs a client asks about itself (kubectl auth can-i / whoami)."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview"}
    attributes = {"namespace": NS, "verb": "list", "resource": "configmaps"}
    s.call(
        "review/ssar",
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        json={**review, "spec": {"resourceAttributes": attributes}},
    )
    s.call(
        "review/ssar-empty",
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        json={**review, "spec": {}},
    )
    rules = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": NS}}
    s.call("review/ssrr", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", json=rules)


POD_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "w"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def _ingress(path: str, path_type: str, **rule: str) -> dict[str, Any]:
    """An Ingress spec of one rule (``rule``: its host, if any) sending ``path`` to service s, port 80."""
    backend = {"service": {"name": "s", "port": {"number": 80}}}
    return {"rules": [{**rule, "http": {"paths": [{"path": path, "pathType": path_type, "backend": backend}]}}]}


def workloads(s: Session) -> None:
    """Each workload kind's defaults (created, read back), and each kind's refusals of common mistakes."""
    selector = {"matchLabels": {"app": "w"}}
    made = {
        "job": (
            "/apis/batch/v1",
            "jobs",
            {"template": {**POD_TEMPLATE, "spec": {**POD_TEMPLATE["spec"], "restartPolicy": "Never"}}},
        ),
        "cronjob": (
            "/apis/batch/v1",
            "cronjobs",
            {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {**POD_TEMPLATE, "spec": {**POD_TEMPLATE["spec"], "restartPolicy": "OnFailure"}}
                    }
                },
            },
        ),
        "statefulset": (
            "/apis/apps/v1",
            "statefulsets",
            {"selector": selector, "serviceName": "w", "template": POD_TEMPLATE},
        ),
        "daemonset": ("/apis/apps/v1", "daemonsets", {"selector": selector, "template": POD_TEMPLATE}),
        "replicaset": ("/apis/apps/v1", "replicasets", {"selector": selector, "template": POD_TEMPLATE}),
        "pdb": ("/apis/policy/v1", "poddisruptionbudgets", {"selector": selector, "minAvailable": 1}),
        "hpa": (
            "/apis/autoscaling/v2",
            "horizontalpodautoscalers",
            {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "maxReplicas": 3},
        ),
        "networkpolicy": ("/apis/networking.k8s.io/v1", "networkpolicies", {"podSelector": {}}),
        "ingress": ("/apis/networking.k8s.io/v1", "ingresses", _ingress("/", "Prefix", host="a.example.com")),
    }
    for kind, (group, plural, spec) in made.items():
        path = f"{group}/namespaces/{NS}/{plural}"
        s.call(f"workloads/{kind}-create", "POST", path, json={"metadata": {"name": "w"}, "spec": spec})
        s.call(f"workloads/{kind}-get", "GET", f"{path}/w")
    daemonsets = f"/apis/apps/v1/namespaces/{NS}/daemonsets"
    current = s.client.get(f"{daemonsets}/w").json()
    current["metadata"]["labels"] = {"changed": "metadata"}  # not the template: its generation stays
    current = s.call("workloads/daemonset-update-metadata", "PUT", f"{daemonsets}/w", json=current).json()
    current["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    s.call("workloads/daemonset-update-template", "PUT", f"{daemonsets}/w", json=current)
    bad = {
        "job-no-restart": ("/apis/batch/v1", "jobs", {"template": POD_TEMPLATE}),
        "cronjob-schedule": (
            "/apis/batch/v1",
            "cronjobs",
            {"schedule": "every day", "jobTemplate": {"spec": {"template": POD_TEMPLATE}}},
        ),
        "statefulset-selector": (
            "/apis/apps/v1",
            "statefulsets",
            {"selector": {"matchLabels": {"app": "other"}}, "template": POD_TEMPLATE},
        ),
        "deployment-no-selector": ("/apis/apps/v1", "deployments", {"template": POD_TEMPLATE}),
        "pdb-both": ("/apis/policy/v1", "poddisruptionbudgets", {"minAvailable": 1, "maxUnavailable": 1}),
        "ingress-path": ("/apis/networking.k8s.io/v1", "ingresses", _ingress("nope", "Exact")),
    }
    for name, (group, plural, spec) in bad.items():
        path = f"{group}/namespaces/{NS}/{plural}"
        s.call(f"workloads/bad-{name}", "POST", path, json={"metadata": {"name": "bad"}, "spec": spec})
    pods = f"/api/v1/namespaces/{NS}/pods"
    for name, spec in {
        "no-containers": {"containers": []},
        "bad-policy": {"containers": [{"name": "c", "image": "x", "imagePullPolicy": "Sometimes"}]},
        "dup-names": {"containers": [{"name": "c", "image": "x"}, {"name": "c", "image": "y"}]},
        "bad-port": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 70000}]}]},
        "bad-resources": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]
        },
    }.items():
        s.call(f"workloads/pod-{name}", "POST", pods, json={"metadata": {"name": "bad"}, "spec": spec})
    services = f"/api/v1/namespaces/{NS}/services"
    s.call(
        "workloads/service-no-ports",
        "POST",
        services,
        json={"metadata": {"name": "bad"}, "spec": {"selector": {"a": "b"}}},
    )
    s.call(
        "workloads/service-external",
        "POST",
        services,
        json={"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}},
    )
    immutable = {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True}
    s.client.post(CM, json=immutable)
    s.call("workloads/immutable-update", "PUT", f"{CM}/frozen", json={**immutable, "data": {"a": "2"}})


def _until(s: Session, what: str, check: Callable[[], bool]) -> None:
    """Until ``check()`` holds (a policy or a configuration in force), within 60 s."""
    deadline = time.monotonic() + 60
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{s.label}: {what} not in force in 60 s")
        time.sleep(0.2)


def policies(s: Session) -> None:
    """Admission as a cluster administrator sets it up: Pod Security levels on a namespace, a
    LimitRange's defaults, a PriorityClass, and a ValidatingAdmissionPolicy with its binding."""
    restricted = "diff-restricted"
    levels = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")}
    s.client.post("/api/v1/namespaces", json={"metadata": {"name": restricted, "labels": levels}})
    s.client.post(f"/api/v1/namespaces/{restricted}/serviceaccounts", json={"metadata": {"name": "default"}})
    privileged = {"name": "c", "image": "nginx", "securityContext": {"privileged": True}}
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [privileged]}}
    s.call("policies/pss-pod-refused", "POST", f"/api/v1/namespaces/{restricted}/pods", json=pod)
    deployment = {
        "metadata": {"name": "p"},
        "spec": {
            "selector": {"matchLabels": {"app": "p"}},
            "template": {"metadata": {"labels": {"app": "p"}}, "spec": {"containers": [privileged]}},
        },
    }
    s.call(
        "policies/pss-deployment-warned", "POST", f"/apis/apps/v1/namespaces/{restricted}/deployments", json=deployment
    )
    s.call(
        "policies/pss-label-warned",
        "PATCH",
        f"/api/v1/namespaces/{NS}",
        content=json.dumps({"metadata": {"labels": {"pod-security.kubernetes.io/warn": "restricted"}}}),
        headers={"Content-Type": MERGE_PATCH},
    )

    limits = {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "100m"}}
    s.client.post(
        f"/api/v1/namespaces/{NS}/limitranges", json={"metadata": {"name": "l"}, "spec": {"limits": [limits]}}
    )
    pods = f"/api/v1/namespaces/{NS}/pods"
    _until(s, "the LimitRange", lambda: bool(s.client.get(f"/api/v1/namespaces/{NS}/limitranges/l").json().get("spec")))
    plain = {"metadata": {"name": "limited"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    s.call("policies/limitrange-defaults", "POST", pods, params={"dryRun": "All"}, json=plain)

    s.call("policies/priorityclass", "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
           json={"metadata": {"name": "diff-high"}, "value": 1000, "description": "x"})  # fmt: skip
    ranked = {**plain, "metadata": {"name": "ranked"}, "spec": {**plain["spec"], "priorityClassName": "diff-high"}}
    s.call("policies/priority-pod", "POST", pods, params={"dryRun": "All"}, json=ranked)
    unknown = {**ranked, "spec": {**ranked["spec"], "priorityClassName": "nope"}}
    s.call("policies/priority-unknown", "POST", pods, params={"dryRun": "All"}, json=unknown)

    admission = "/apis/admissionregistration.k8s.io/v1"
    policy = {
        "metadata": {"name": "diff-no-deny"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
                ]
            },
            "validations": [
                {"expression": "!has(object.metadata.labels) || !('deny' in object.metadata.labels)",
                 "message": "no deny label", "reason": "Forbidden"}
            ],
        },
    }  # fmt: skip
    s.call("policies/vap-create", "POST", f"{admission}/validatingadmissionpolicies", json=policy)
    binding = {
        "metadata": {"name": "diff-no-deny"},
        "spec": {
            "policyName": "diff-no-deny",
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}},
        },
    }
    s.call("policies/vap-binding", "POST", f"{admission}/validatingadmissionpolicybindings", json=binding)
    denied = configmap("denied", deny="yes")

    def in_force() -> bool:
        return s.client.post(CM, params={"dryRun": "All"}, json=denied).status_code != 201

    _until(s, "the ValidatingAdmissionPolicy", in_force)
    s.call("policies/vap-denied", "POST", CM, json=denied)
    s.call("policies/vap-allowed", "POST", CM, json=configmap("allowed"))


SCENARIOS: tuple[Scenario, ...] = (
    setup,
    crud,
    lists,
    watches,
    patches,
    applies,
    dry_runs,
    field_validation,
    errors,
    protobuf,
    surface,
    custom_resources,
    reviews,
    workloads,
    policies,
    discovery,
)


def run(s: Session) -> float:
    """Every scenario against one server; seconds taken."""
    started = time.monotonic()
    for scenario in SCENARIOS:
        scenario(s)
    return time.monotonic() - started
