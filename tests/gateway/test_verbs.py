"""Every verb on every scope, against a running server (Kubernetes API Concepts: "API verbs", "Resource URIs").

Namespaced (configmaps, pods, services), cluster-scoped (nodes, namespaces) and grouped
(deployments.apps, leases.coordination.k8s.io) resources; get, list per namespace and across
namespaces, create, update, delete, deletecollection.
"""

from __future__ import annotations

import json

import httpx
import pytest

from .helpers import deployment


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_create_get_list_namespaced(client: httpx.Client, namespace: str) -> None:
    created = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("a", k="v"))
    assert created.status_code == 201
    body = created.json()
    assert body["kind"] == "ConfigMap" and body["apiVersion"] == "v1"
    meta = body["metadata"]
    assert meta["namespace"] == namespace and meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["resourceVersion"].isdigit()
    assert "generation" not in meta  # ConfigMap has no spec

    got = client.get(f"/api/v1/namespaces/{namespace}/configmaps/a")
    assert got.status_code == 200 and got.json() == body

    listed = client.get(f"/api/v1/namespaces/{namespace}/configmaps").json()
    assert listed["kind"] == "ConfigMapList" and listed["apiVersion"] == "v1"
    assert int(listed["metadata"]["resourceVersion"]) >= int(meta["resourceVersion"])
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    assert "kind" not in listed["items"][0]  # list items carry no TypeMeta, as upstream

    everywhere = client.get("/api/v1/configmaps").json()
    assert any(i["metadata"]["namespace"] == namespace for i in everywhere["items"])


def test_empty_list_has_items_array(client: httpx.Client, namespace: str) -> None:
    body = client.get(f"/api/v1/namespaces/{namespace}/secrets").json()
    assert body["items"] == []


def test_update_with_resource_version_and_conflict(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = client.post(path, json=configmap("u", k="1")).json()
    updated = client.put(f"{path}/u", json={**created, "data": {"k": "2"}})
    assert updated.status_code == 200
    assert int(updated.json()["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert updated.json()["metadata"]["uid"] == created["metadata"]["uid"]

    stale = client.put(f"{path}/u", json={**created, "data": {"k": "3"}})
    assert stale.status_code == 409
    assert stale.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Operation cannot be fulfilled on configmaps "u": the object has been modified; '
        "please apply your changes to the latest version and try again",
        "reason": "Conflict",
        "details": {"name": "u", "kind": "configmaps"},
        "code": 409,
    }


def test_unconditional_update_and_noop(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    client.post(path, json=configmap("n", k="1"))
    first = client.put(f"{path}/n", json=configmap("n", k="2"))
    assert first.status_code == 200 and first.json()["data"] == {"k": "2"}
    again = client.put(f"{path}/n", json=configmap("n", k="2"))
    # Nothing changed: nothing is written, the resourceVersion stays (upstream's GuaranteedUpdate).
    assert again.json()["metadata"]["resourceVersion"] == first.json()["metadata"]["resourceVersion"]


def test_put_on_missing_object_follows_kind(client: httpx.Client, namespace: str) -> None:
    missing = client.put(f"/api/v1/namespaces/{namespace}/configmaps/nope", json=configmap("nope"))
    assert missing.status_code == 404
    assert missing.json()["message"] == 'configmaps "nope" not found'
    service = {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}
    created = client.put(f"/api/v1/namespaces/{namespace}/services/svc", json=service)
    assert created.status_code == 201  # services allow create-on-update


def test_put_name_mismatch(client: httpx.Client, namespace: str) -> None:
    client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("x"))
    response = client.put(f"/api/v1/namespaces/{namespace}/configmaps/x", json=configmap("y"))
    assert response.status_code == 400
    assert response.json()["message"] == "the name of the object (y) does not match the name on the URL (x)"


def test_delete_returns_status_or_object(client: httpx.Client, namespace: str) -> None:
    created = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("d")).json()
    deleted = client.delete(f"/api/v1/namespaces/{namespace}/configmaps/d")
    assert deleted.status_code == 200
    assert deleted.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "d", "kind": "configmaps", "uid": created["metadata"]["uid"]},
    }
    assert client.get(f"/api/v1/namespaces/{namespace}/configmaps/d").status_code == 404
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
    deleted_pod = client.delete(f"/api/v1/namespaces/{namespace}/pods/p")
    assert deleted_pod.status_code == 200 and deleted_pod.json()["kind"] == "Pod"  # pods return the object
    assert client.delete(f"/api/v1/namespaces/{namespace}/pods/p").status_code == 404


def test_delete_with_finalizers_marks_then_removes(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = configmap("f")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    client.post(path, json=body)
    marked = client.delete(f"{path}/f")
    assert marked.status_code == 200
    held = marked.json()
    assert held["kind"] == "ConfigMap" and held["metadata"]["deletionTimestamp"]
    assert client.get(f"{path}/f").status_code == 200
    held["metadata"]["finalizers"] = []
    assert client.put(f"{path}/f", json=held).status_code == 200
    assert client.get(f"{path}/f").status_code == 404


def test_delete_preconditions(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    client.post(path, json=configmap("pre"))
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "wrong"}}
    response = client.request("DELETE", f"{path}/pre", json=body)
    assert response.status_code == 409
    uid = client.get(f"{path}/pre").json()["metadata"]["uid"]
    assert response.json()["message"] == (
        'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (wrong) does not match '
        f"the UID in record ({uid}). The object might have been deleted and then recreated"
    )
    assert response.json()["details"] == {"name": "pre", "kind": "ConfigMap"}
    body["preconditions"] = {"resourceVersion": "1"}
    rv = client.get(f"{path}/pre").json()["metadata"]["resourceVersion"]
    response = client.request("DELETE", f"{path}/pre", json=body)
    assert (response.status_code, response.json()["message"]) == (
        409,
        'Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not '
        f"match the ResourceVersion in record ({rv}). The object might have been modified",
    )


def test_delete_collection(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for name in ("c1", "c2", "c3"):
        client.post(path, json=configmap(name))
    response = client.delete(path)
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "ConfigMapList" and len(body["items"]) == 3
    assert client.get(path).json()["items"] == []


def test_cluster_scoped_nodes(client: httpx.Client) -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "namespace": "ignored"},
        "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}},
    }
    created = client.post("/api/v1/nodes", json=node)
    assert created.status_code == 201
    assert "namespace" not in created.json()["metadata"]
    assert created.json()["status"]["nodeInfo"]["kubeletVersion"] == "v1.32.0"  # nodes keep status on create
    assert client.get("/api/v1/nodes/node-a").status_code == 200
    assert "node-a" in [n["metadata"]["name"] for n in client.get("/api/v1/nodes").json()["items"]]
    assert client.get("/api/v1/namespaces/default/nodes/node-a").status_code == 404
    assert client.delete("/api/v1/nodes/node-a").json()["status"] == "Success"


def test_grouped_resources(client: httpx.Client, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    created = client.post(path, json=deployment("web"))
    assert created.status_code == 201
    body = created.json()
    assert body["metadata"]["generation"] == 1 and body["status"] == {}
    body["metadata"]["labels"] = {"tier": "front"}
    relabeled = client.put(f"{path}/web", json=body).json()
    assert relabeled["metadata"]["generation"] == 1  # metadata change: generation stays
    relabeled["spec"]["replicas"] = 3
    rescaled = client.put(f"{path}/web", json=relabeled).json()
    assert rescaled["metadata"]["generation"] == 2  # spec change: generation + 1
    missing = client.get(f"{path}/nope")
    assert missing.json()["message"] == 'deployments.apps "nope" not found'
    assert missing.json()["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 10}}
    assert client.post(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", json=lease).status_code == 201
    assert client.get("/apis/coordination.k8s.io/v1/leases").json()["kind"] == "LeaseList"


def test_status_subresource_fields_are_kept_on_update(client: httpx.Client, namespace: str) -> None:
    pod = {
        "metadata": {"name": "s"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }
    created = client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod).json()
    assert created["status"]["phase"] == "Pending"  # status is not set by create
    created["status"]["phase"] = "Succeeded"
    updated = client.put(f"/api/v1/namespaces/{namespace}/pods/s", json=created).json()
    assert updated["status"]["phase"] == "Pending"


def test_status_subresource_writes_only_status(client: httpx.Client, namespace: str) -> None:
    """deployments/status: GET, and PUT that changes status alone; generation is not bumped."""
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    created = client.post(path, json=deployment("st")).json()
    status = client.get(f"{path}/st/status")
    assert status.status_code == 200 and status.json() == created
    created["status"] = {"replicas": 2, "readyReplicas": 1}
    created["spec"]["replicas"] = 9  # ignored: only status is written here
    created["metadata"]["labels"] = {"ignored": "yes"}  # labels stay as stored (ResetObjectMetaForStatus)
    written = client.put(f"{path}/st/status", json=created).json()
    assert written["status"] == {"replicas": 2, "readyReplicas": 1}
    assert written["spec"]["replicas"] == 2 and written["metadata"]["generation"] == 1
    assert "labels" not in written["metadata"]
    assert client.get(f"{path}/st").json() == written
    assert client.post(f"{path}/st/status", json=created).status_code == 405
    assert client.put(f"{path}/missing/status", json={**created, "metadata": {"name": "missing"}}).status_code == 404


def test_scale_subresource_reads_and_writes_replicas(client: httpx.Client, namespace: str) -> None:
    """deployments/scale as autoscaling/v1 Scale (upstream's ScaleREST): GET, PUT, preconditions."""
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    created = client.post(path, json=deployment("sc")).json()
    scale = client.get(f"{path}/sc/scale").json()
    meta = created["metadata"]
    assert scale == {  # as scaleFromDeployment makes it: no managedFields
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "sc",
            "namespace": namespace,
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": 2},
        "status": {"replicas": 0, "selector": "app=sc"},
    }
    scale["spec"]["replicas"] = 5
    written = client.put(f"{path}/sc/scale", json=scale)
    assert written.status_code == 200 and written.json()["spec"]["replicas"] == 5
    deployed = client.get(f"{path}/sc").json()
    assert deployed["spec"]["replicas"] == 5 and deployed["metadata"]["generation"] == 2
    assert written.json()["metadata"]["resourceVersion"] == deployed["metadata"]["resourceVersion"]
    stale = client.put(f"{path}/sc/scale", json=scale)  # the resourceVersion read before the write
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    negative = {**scale, "metadata": {"name": "sc"}, "spec": {"replicas": -1}}
    invalid = client.put(f"{path}/sc/scale", json=negative).json()
    assert invalid["message"] == (
        'Scale.autoscaling "sc" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    )
    other_uid = {**scale, "metadata": {"name": "sc", "uid": "not-it"}}
    conflict = client.put(f"{path}/sc/scale", json=other_uid).json()
    assert conflict["message"].startswith('Operation cannot be fulfilled on deployments/scale.apps "sc": Precondition')
    assert client.get(f"{path}/nope/scale").json()["message"] == 'deployments.apps "nope" not found'
    wrong_kind = client.put(f"{path}/sc/scale", json={**deployment("sc"), "metadata": {"name": "sc"}})
    assert wrong_kind.status_code == 400


def test_server_side_apply_of_a_scale(client: httpx.Client, namespace: str) -> None:
    """Apply to deployments/scale (upstream's ScaleHandler): the Scale's managedFields are the owners of
    the Deployment's replicas; applying other replicas conflicts with them unless forced, and then the
    replicas change owner in the Deployment's managedFields, other fields staying with their owner."""
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    apply = {"Content-Type": "application/apply-patch+yaml"}
    created = client.patch(
        f"{path}/web", content=json.dumps(deployment("web")), headers=apply, params={"fieldManager": "deployer"}
    )
    assert created.status_code == 201, created.text

    def scale_to(replicas: int, **params: str) -> httpx.Response:
        body = {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {"name": "web"},
            "spec": {"replicas": replicas},
        }
        return client.patch(
            f"{path}/web/scale", content=json.dumps(body), headers=apply, params={"fieldManager": "scaler", **params}
        )

    conflict = scale_to(5)
    assert conflict.status_code == 409, conflict.text
    assert conflict.json()["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "deployer"',
            "field": ".spec.replicas",
        }
    ]
    forced = scale_to(5, force="true")
    assert forced.status_code == 200, forced.text
    assert forced.json()["spec"]["replicas"] == 5
    assert "managedFields" not in forced.json()["metadata"]  # the Scale answered is scaleFromDeployment's
    deployed = client.get(f"{path}/web").json()
    assert deployed["spec"]["replicas"] == 5
    owners = {e["manager"]: e for e in deployed["metadata"]["managedFields"]}
    assert "f:replicas" not in owners["deployer"]["fieldsV1"]["f:spec"]
    assert "f:template" in owners["deployer"]["fieldsV1"]["f:spec"]  # the rest stays the deployer's
    scaler = owners["scaler"]
    assert (scaler["operation"], scaler["apiVersion"], scaler["subresource"]) == ("Apply", "apps/v1", "scale")
    assert scaler["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "time" not in scaler  # ScaleHandler.ToParent takes times from the parent's entries
    again = scale_to(5)  # nothing changes: no write
    assert (
        again.status_code == 200
        and again.json()["metadata"]["resourceVersion"] == forced.json()["metadata"]["resourceVersion"]
    )
    nope = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "nope"}, "spec": {"replicas": 1}}
    missing = client.patch(f"{path}/nope/scale", json=nope, headers=apply, params={"fieldManager": "scaler"})
    assert missing.status_code == 404 and missing.json()["message"] == 'deployments.apps "nope" not found'


def test_namespace_finalize_changes_spec_finalizers(client: httpx.Client) -> None:
    client.post("/api/v1/namespaces", json={"metadata": {"name": "fin"}})
    namespace = client.get("/api/v1/namespaces/fin").json()
    assert namespace["spec"]["finalizers"] == ["kubernetes"]
    namespace["spec"]["finalizers"] = []
    put = client.put("/api/v1/namespaces/fin", json=namespace).json()
    assert put["spec"]["finalizers"] == ["kubernetes"]  # a plain update cannot change them
    namespace["spec"]["finalizers"] = ["example.com/mine", "kubernetes"]
    finalized = client.put("/api/v1/namespaces/fin/finalize", json=namespace)
    assert finalized.status_code == 200 and finalized.json()["spec"]["finalizers"] == ["example.com/mine", "kubernetes"]
    assert client.get("/api/v1/namespaces/fin/finalize").status_code == 405


def test_requests_are_counted_by_verb_resource_scope_and_code(client: httpx.Client, namespace: str) -> None:
    def count(labels: str) -> float:
        for line in client.get("/metrics").text.splitlines():
            if line.startswith("apiserver_request_total{") and all(p in line for p in labels.split(",")):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    created = 'code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource"'
    created += ',subresource="",verb="POST",version="v1"'
    missing = 'code="404",component="apiserver",group="apps",resource="deployments",scope="resource"'
    missing += ',subresource="",verb="GET",version="v1"'
    before = count(created), count(missing)
    client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("counted"))
    client.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/nope")
    assert (count(created), count(missing)) == (before[0] + 1, before[1] + 1)
    assert client.get("/version").headers["Audit-Id"]
    assert client.get("/version", headers={"Audit-Id": "mine-1"}).headers["Audit-Id"] == "mine-1"


@pytest.mark.parametrize("spelling", ["1", "true", "True"])
def test_watch_parameter_spellings(client: httpx.Client, namespace: str, spelling: str) -> None:
    with client.stream(
        "GET", f"/api/v1/namespaces/{namespace}/configmaps", params={"watch": spelling, "timeoutSeconds": "1"}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        response.read()


def test_pretty_spellings(client: httpx.Client) -> None:
    for value in ("true", "True", "1"):
        assert client.get("/api/v1/namespaces/default", params={"pretty": value}).text.startswith("{\n  ")
    assert client.get("/api/v1/namespaces/default", params={"pretty": "false"}).text.startswith('{"kind"')


@pytest.mark.parametrize("path", ["/version/", "/api/", "/apis/", "/version", "/api", "/apis"])
def test_discovery_paths_with_and_without_slash(client: httpx.Client, path: str) -> None:
    assert client.get(path).status_code == 200
