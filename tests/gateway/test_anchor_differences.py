"""Differences `make anchor-diff` found between protokube and a running kube-apiserver, fixed here:
each answer below is kube-apiserver's (checked side by side with v1.34.4; the code paths are 1.32's
too: go-restful's routes, the patcher's checkName, kube-aggregator's OpenAPI v3 handler)."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.helpers import watch_lines

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}
NO_ROUTE = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server does not allow this method on the requested resource",
    "reason": "MethodNotAllowed",
    "details": {},
    "code": 405,
}


def test_post_to_an_object_path_has_no_route(client: httpx.Client, namespace: str) -> None:
    """POST is routed on collections only: POST .../configmaps/x is go-restful's 405 and makes nothing."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    response = client.post(f"{path}/x", json={"metadata": {"name": "x"}, "data": {"a": "1"}})
    assert (response.status_code, response.json()) == (405, NO_ROUTE)
    assert client.get(f"{path}/x").status_code == 404


def test_put_and_patch_of_a_collection_have_no_route(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    patched = client.patch(path, content="{}", headers=MERGE_PATCH)
    assert (patched.status_code, patched.json()) == (405, NO_ROUTE)
    put = client.put(path, json={"metadata": {"name": "x"}})
    assert (put.status_code, put.json()) == (405, NO_ROUTE)


def test_subresource_post_on_an_object_still_routes(client: httpx.Client, namespace: str) -> None:
    """A POST to an object's subresource (a TokenRequest) is a collection-like route upstream too."""
    client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json={"metadata": {"name": "robot"}})
    response = client.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/robot/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    assert response.status_code == 201, response.text


def test_a_patch_that_renames_the_object_is_a_bad_request(client: httpx.Client, namespace: str) -> None:
    """The patcher's checkName after the patch is applied: 400, not validation's immutable-name 422."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert client.post(path, json={"metadata": {"name": "patched"}}).status_code == 201
    for content_type, body in (
        ("application/merge-patch+json", '{"metadata": {"name": "other"}}'),
        ("application/json-patch+json", '[{"op": "replace", "path": "/metadata/name", "value": "other"}]'),
        ("application/strategic-merge-patch+json", '{"metadata": {"name": "other"}}'),
    ):
        response = client.patch(f"{path}/patched", content=body, headers={"Content-Type": content_type})
        assert response.status_code == 400, (content_type, response.text)
        assert response.json()["reason"] == "BadRequest"
        assert response.json()["message"] == (
            "the name of the object (other) does not match the name on the URL (patched)"
        )
    assert client.get(f"{path}/other").status_code == 404


def test_openapi_v3_of_an_unknown_group_version_is_an_empty_404(client: httpx.Client) -> None:
    """kube-aggregator's handler answers it before kube-openapi's (whose answer would be an empty 200)."""
    response = client.get("/openapi/v3/apis/nope.example.com/v1")
    assert response.status_code == 404
    assert response.content == b""
    assert "content-type" not in response.headers
    assert response.headers["cache-control"] == "no-cache, private"
    assert client.get("/openapi/v3/apis/apps/v1").status_code == 200


def test_unknown_field_label_is_worded_by_the_kinds_conversion(client: httpx.Client, namespace: str) -> None:
    """A kind without a field label conversion of its own (ConfigMap) gets runtime's default one's
    words; one with its own (Pod) gets that function's."""
    configmaps = client.get(f"/api/v1/namespaces/{namespace}/configmaps", params={"fieldSelector": "data.a=1"})
    assert configmaps.status_code == 400
    assert configmaps.json()["message"] == (
        '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    pods = client.get(f"/api/v1/namespaces/{namespace}/pods", params={"fieldSelector": "data.a=1"})
    assert (pods.status_code, pods.json()["message"]) == (400, "field label not supported: data.a")


def test_an_unreadable_protobuf_body_is_named_with_its_first_bytes(client: httpx.Client, namespace: str) -> None:
    """The envelope's error in Go's words (a byte slice printed with %v), then upstream's summary of
    the body (hex, for anything but JSON)."""
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        content=b"\x0a\x02v1",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert (response.status_code, response.json()["message"]) == (
        400,
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be "
        "a protobuf message, expected prefix [107 56 115 0] (0a027631)",
    )


def test_an_apply_of_another_kind_is_refused_before_its_name_is_checked(client: httpx.Client, namespace: str) -> None:
    """The field manager's version check (invalid object type) precedes the patcher's checkName."""
    response = client.patch(
        f"/api/v1/namespaces/{namespace}/configmaps/applied",
        content='{"apiVersion": "v1", "kind": "Secret"}',
        params={"fieldManager": "one"},
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert (response.status_code, response.json()["message"]) == (400, "invalid object type: /v1, Kind=Secret")


def test_deleting_an_unscheduled_pod_writes_its_deletion_marks_first(client: httpx.Client, namespace: str) -> None:
    """A pod's strategy has CheckGracefulDelete: Store.Delete writes deletionTimestamp and a grace of
    0 (watchers see MODIFIED), then removes the pod, and answers with the marked pod."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = {"metadata": {"name": "gone"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    created = client.post(path, json=pod)
    assert created.status_code == 201, created.text
    rv = created.json()["metadata"]["resourceVersion"]
    deleted = client.delete(f"{path}/gone")
    assert deleted.status_code == 200, deleted.text
    meta = deleted.json()["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 0 and meta["deletionTimestamp"]
    events = list(watch_lines(client, path, stop_after=2, timeout=10, resourceVersion=rv))
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["deletionGracePeriodSeconds"] == 0
    assert events[0]["object"]["metadata"]["resourceVersion"] == meta["resourceVersion"]  # the marked pod
    assert client.get(f"{path}/gone").status_code == 404


def test_deleting_a_configmap_is_one_write(client: httpx.Client, namespace: str) -> None:
    """Kinds without graceful deletion are removed at once: watchers see DELETED only."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = client.post(path, json={"metadata": {"name": "gone"}})
    rv = created.json()["metadata"]["resourceVersion"]
    assert client.delete(f"{path}/gone").status_code == 200
    events = list(watch_lines(client, path, stop_after=1, timeout=10, resourceVersion=rv))
    assert [e["type"] for e in events] == ["DELETED"]
    assert "deletionTimestamp" not in events[0]["object"]["metadata"]


def test_a_secrets_string_data_is_owned_as_data(client: httpx.Client, namespace: str) -> None:
    """stringData is folded into data when the body is decoded (v1 → internal conversion), before the
    field manager records the write: managedFields name f:data, on create and on update."""
    path = f"/api/v1/namespaces/{namespace}/secrets"
    created = client.post(path, json={"metadata": {"name": "s"}, "stringData": {"token": "t"}})
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {"token": "dA=="}
    fields = created.json()["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields == {"f:data": {".": {}, "f:token": {}}, "f:type": {}}
    secret = created.json() | {"stringData": {"other": "o"}}
    updated = client.put(f"{path}/s", json=secret)
    assert updated.status_code == 200, updated.text
    fields = updated.json()["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields == {"f:data": {".": {}, "f:other": {}, "f:token": {}}, "f:type": {}}


@pytest.mark.parametrize(
    "path", ["/nothing/here", "/apis/nope.example.com", "/apis/nope.example.com/v1", "/apis/nope.example.com/v1/things"]
)
def test_a_path_outside_every_api_is_gos_text_404(client: httpx.Client, path: str) -> None:
    """No go-restful web service claims it: the delegation chain ends in Go's http.NotFound."""
    response = client.get(path)
    assert (response.status_code, response.text) == (404, "404 page not found\n")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-kubernetes-pf-flowschema-uid"]  # the filters' headers as on any answer


@pytest.mark.parametrize("path", ["/apis/apps/v9", "/apis/apps/v9/deployments", "/api/v2", "/apis/apps/v1/widgets"])
def test_a_path_under_a_compiled_apis_web_service_is_a_status_404(client: httpx.Client, path: str) -> None:
    """/api and /apis/GROUP of a built-in group are go-restful's: its 404 is a Status."""
    response = client.get(path)
    assert (response.status_code, response.json()["message"]) == (
        404,
        "the server could not find the requested resource",
    )


def test_an_accept_no_route_produces_is_go_restfuls_406(client: httpx.Client, namespace: str) -> None:
    """go-restful matches Accept against the route's Produces before the handler negotiates: the
    list route's include the watch streams; an object's route has the formats only."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    formats = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    listed = client.get(path, headers={"Accept": "text/plain"})
    assert (listed.status_code, listed.json()["details"]) == (406, {})
    assert listed.json()["message"] == (
        f"406: Not Acceptable\n\nAvailable representations: {formats}, "
        "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    )
    got = client.get(f"{path}/x", headers={"Accept": "application/*"})  # go-restful wants */* or a type as written
    assert (got.status_code, got.json()["message"]) == (
        406,
        f"406: Not Acceptable\n\nAvailable representations: {formats}",
    )
    table = client.get(path, headers={"Accept": "application/json;as=Table;v=v9;g=meta.k8s.io"})
    assert table.status_code == 406  # the route takes application/json: the handler's negotiation refuses it
    assert table.json()["message"].startswith("only the following media types are accepted")


def test_table_columns_are_described_and_typed_as_printers_go_does(client: httpx.Client, namespace: str) -> None:
    """Descriptions are the fields' whole SwaggerDoc text (1.32's k8s.io/api); count columns that
    printers.go types "string" (a ConfigMap's Data, a Deployment's Up-to-date) stay so, their cells ints."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    client.post(path, json={"metadata": {"name": "c"}, "data": {"a": "1"}})
    table = client.get(path, headers={"Accept": TABLE}).json()
    columns = {c["name"]: c for c in table["columnDefinitions"]}
    assert columns["Data"]["type"] == "string" and table["rows"][0]["cells"][1] == 1
    assert columns["Data"]["description"].startswith("Data contains the configuration data. Each key must consist")
    assert columns["Name"]["description"].endswith("/working-with-objects/names#names")
    pods = client.get(f"/api/v1/namespaces/{namespace}/pods", headers={"Accept": TABLE}).json()
    ip = next(c for c in pods["columnDefinitions"] if c["name"] == "IP")
    assert ip["description"] == (
        "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."
    )
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    labels = {"app": "d"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    deployment = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": labels}, "template": template}}
    assert client.post(deployments, json=deployment).status_code == 201
    table = client.get(deployments, headers={"Accept": TABLE}).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    types = {c["name"]: c["type"] for c in table["columnDefinitions"]}
    assert (types["Up-to-date"], types["Available"]) == ("string", "string")
    cells = dict(zip(names, table["rows"][0]["cells"], strict=False))
    assert (cells["Up-to-date"], cells["Available"]) == (0, 0)


def test_yaml_1_1_single_letter_booleans_are_go_yamls(client: httpx.Client, namespace: str) -> None:
    """go-yaml v2 (under sigs.k8s.io/yaml) resolves y/Y/n/N as booleans: a key becomes "true"/"false"."""
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  y: '1'\n  N: '2'\n  'n': '3'\n"
    response = client.patch(
        f"/api/v1/namespaces/{namespace}/configmaps/applied",
        content=body,
        params={"fieldManager": "one"},
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"true": "1", "false": "2", "n": "3"}
    assert response.json()["metadata"]["managedFields"][0]["fieldsV1"]["f:data"] == {
        "f:true": {},
        "f:false": {},
        "f:n": {},
    }


def test_openapi_v3_index_is_kube_aggregators(client: httpx.Client) -> None:
    """kube-aggregator serves the merged index with http.ServeContent, modified now: Go sniffs the
    JSON as text; no ETag and no Vary (kube-openapi's own index, with both, is never reached)."""
    response = client.get("/openapi/v3")
    assert response.status_code == 200 and "apis/apps/v1" in response.json()["paths"]
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert "etag" not in response.headers and "vary" not in response.headers
    assert response.headers["cache-control"] == "no-cache, private"
    later = client.get("/openapi/v3", headers={"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"})
    assert later.status_code == 304
    earlier = client.get("/openapi/v3", headers={"If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"})
    assert earlier.status_code == 200


def test_field_labels_as_1_32_converts_them(client: httpx.Client, namespace: str) -> None:
    """Services select on spec.clusterIP and spec.type (their own conversion); apps/v1 has none, so a
    ReplicaSet's status.replicas is refused by runtime's default conversion."""
    services = f"/api/v1/namespaces/{namespace}/services"
    body = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], "clusterIP": "None"}}
    assert client.post(services, json=body).status_code == 201
    headless = client.get(services, params={"fieldSelector": "spec.clusterIP=None,spec.type=ClusterIP"})
    assert [i["metadata"]["name"] for i in headless.json()["items"]] == ["s"]
    assert client.get(services, params={"fieldSelector": "spec.type=NodePort"}).json()["items"] == []
    replicasets = client.get(
        f"/apis/apps/v1/namespaces/{namespace}/replicasets", params={"fieldSelector": "status.replicas=0"}
    )
    assert (replicasets.status_code, replicasets.json()["message"]) == (
        400,
        '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    )


def test_a_body_that_is_not_json_is_refused_in_encoding_jsons_words(client: httpx.Client, namespace: str) -> None:
    """apimachinery reads a JSON body's kind with encoding/json: its scanner's syntax error."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for body, reason in (
        ("{", "unexpected end of JSON input"),
        ("{x}", "invalid character 'x' looking for beginning of object key string"),
    ):
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
        assert (response.status_code, response.json()["message"]) == (
            400,
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; "
            f"json parse error: {reason} ({body})",
        )


def test_a_garbled_protobuf_envelope_is_refused_in_gogos_words(client: httpx.Client, namespace: str) -> None:
    """runtime.Unknown's generated Unmarshal: a field of wire type 7 cannot be skipped."""
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        content=b"k8s\x00garbage",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert (response.status_code, response.json()["message"]) == (
        400,
        "the object provided is unrecognized (must be of type ConfigMap): "
        "proto: illegal wireType 7 (6b38730067617262616765)",
    )


def test_a_bookmark_is_sent_only_past_what_the_watch_has_seen(client: httpx.Client, namespace: str) -> None:
    """kube-apiserver's cacheWatcher sends a bookmark only when it is newer than the resourceVersion the
    watch went live at, its last replayed event's: a watch that replays a create, a patch and a delete and
    then idles gets no bookmark while no other configmap is written (make anchor-diff's
    watch/from-rv-bookmarks: kube-apiserver sent 3 events, protokube a 4th, a bookmark at the delete's)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = client.get(path).json()["metadata"]["resourceVersion"]
    assert client.post(path, json={"metadata": {"name": "watched"}, "data": {"a": "1"}}).status_code == 201
    assert client.patch(f"{path}/watched", json={"data": {"a": "2"}}, headers=MERGE_PATCH).status_code == 200
    assert client.delete(f"{path}/watched").status_code == 200
    client.get(path).raise_for_status()  # a consistent list: the cache holds the delete, so the watch replays it
    params = {"resourceVersion": start, "allowWatchBookmarks": "true", "timeoutSeconds": "4"}
    events = list(watch_lines(client, path, stop_after=10, timeout=15, **params))
    assert [e["type"] for e in events[:3]] == ["ADDED", "MODIFIED", "DELETED"]
    seen = int(events[2]["object"]["metadata"]["resourceVersion"])
    later = [(e["type"], int(e["object"]["metadata"]["resourceVersion"])) for e in events[3:]]
    assert all(kind == "BOOKMARK" and revision > seen for kind, revision in later), (seen, later)


def test_a_scale_shows_no_managed_fields_and_its_writers_entry_has_no_time(
    client: httpx.Client, namespace: str
) -> None:
    """A Scale is made as scaleFromDeployment makes it (name, namespace, uid, resourceVersion,
    creationTimestamp: no managedFields), and a write through it leaves the Deployment an entry of its
    writer without a time (ScaleHandler.ToParent takes times from the parent's entries, which never hold
    the Scale's key), sorted ahead of the timed entry of the create it took spec.replicas from."""
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    labels = {"app": "scaled"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    deployment = {"metadata": {"name": "scaled"}, "spec": {"selector": {"matchLabels": labels}, "template": template}}
    assert client.post(path, json=deployment, params={"fieldManager": "creator"}).status_code == 201
    scale = client.get(f"{path}/scaled/scale").json()
    assert set(scale["metadata"]) == {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}
    written = client.put(
        f"{path}/scaled/scale", json={**scale, "spec": {"replicas": 2}}, params={"fieldManager": "scaler"}
    )
    assert written.status_code == 200, written.text
    assert "managedFields" not in written.json()["metadata"]
    entries = client.get(f"{path}/scaled").json()["metadata"]["managedFields"]
    assert [(e["manager"], e.get("subresource"), "time" in e) for e in entries] == [
        ("scaler", "scale", False),
        ("creator", None, True),
    ]
    assert entries[0]["apiVersion"] == "apps/v1"
    assert entries[0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in entries[1]["fieldsV1"]["f:spec"]


TEMPLATE = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_workload_defaults_and_refusals_are_upstreams(client: httpx.Client, namespace: str) -> None:
    """make anchor-diff's workloads scenario: a Job without labels shows the selector labels its
    template is given (SetDefaults_Job shares the template's label map with it); a DaemonSet carries
    its template generation in an annotation its writer owns, one more only when the template
    changes; a HorizontalPodAutoscaler or a Lease has no metadata.generation; a Job whose template
    restarts Always is told restartPolicy is required; a Deployment without a selector is also told
    that nothing matches its template's labels."""
    batch, apps = f"/apis/batch/v1/namespaces/{namespace}", f"/apis/apps/v1/namespaces/{namespace}"
    never = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}
    job = client.post(f"{batch}/jobs", json={"metadata": {"name": "j"}, "spec": {"template": never}}).json()
    uid = job["metadata"]["uid"]
    generated = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "j"}
    generated |= {"controller-uid": uid, "job-name": "j"}
    assert job["metadata"]["labels"] == {"app": "w", **generated}
    labelled = {"metadata": {"name": "k", "labels": {"own": "x"}}, "spec": {"template": never}}
    assert client.post(f"{batch}/jobs", json=labelled).json()["metadata"]["labels"] == {"own": "x"}

    spec = {"selector": {"matchLabels": {"app": "w"}}, "template": TEMPLATE}
    made = client.post(f"{apps}/daemonsets", json={"metadata": {"name": "d"}, "spec": spec}).json()
    assert made["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    owned = made["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:annotations"]
    assert "f:deprecated.daemonset.template.generation" in owned
    made["metadata"]["labels"] = {"not": "template"}
    made = client.put(f"{apps}/daemonsets/d", json=made).json()
    assert made["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    made["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    made = client.put(f"{apps}/daemonsets/d", json=made).json()
    assert made["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"

    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}
    hpa = {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": target, "maxReplicas": 3}}
    created = client.post(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers", json=hpa)
    assert created.status_code == 201 and "generation" not in created.json()["metadata"]
    lease = client.post(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", json={"metadata": {"name": "l"}})
    assert lease.status_code == 201 and "generation" not in lease.json()["metadata"]

    refused = client.post(f"{batch}/jobs", json={"metadata": {"name": "bad"}, "spec": {"template": TEMPLATE}})
    assert refused.json()["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": 'Required value: valid values: "OnFailure", "Never"',
            "field": "spec.template.spec.restartPolicy",
        }
    ]
    unselected = client.post(f"{apps}/deployments", json={"metadata": {"name": "bad"}, "spec": {"template": TEMPLATE}})
    assert [(c["field"], c["reason"]) for c in unselected.json()["details"]["causes"]] == [
        ("spec.selector", "FieldValueRequired"),
        ("spec.template.metadata.labels", "FieldValueInvalid"),
    ]


def test_a_priority_class_has_generation_1_for_good(client: httpx.Client) -> None:
    """priorityClassStrategy sets generation 1 on create, and an update keeps the stored one (rest's
    BeforeUpdate), though a PriorityClass has no spec (make anchor-diff's policies scenario)."""
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    made = client.post(path, json={"metadata": {"name": "anchor-gen"}, "value": 7, "description": "a"})
    try:
        assert made.status_code == 201, made.text
        assert made.json()["metadata"]["generation"] == 1
        changed = {**made.json(), "description": "b"}
        changed["metadata"] = {**changed["metadata"], "generation": 5}  # a request never sets it
        updated = client.put(f"{path}/anchor-gen", json=changed)
        assert updated.status_code == 200, updated.text
        assert updated.json()["metadata"]["generation"] == 1
    finally:
        client.delete(f"{path}/anchor-gen")
