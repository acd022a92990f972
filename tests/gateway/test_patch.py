"""PATCH against a running server (Kubernetes API Concepts: "Patch operations", "Choosing an update mechanism"):
JSON patch, merge patch, strategic merge patch; conditional patches, retries, dry-run,
fieldValidation, and the errors upstream answers — nothing stored when a patch is refused."""

from __future__ import annotations

import concurrent.futures

import httpx
import pytest

from .helpers import deployment

JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}


@pytest.fixture
def cm(client: httpx.Client, namespace: str) -> str:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {"metadata": {"name": "p", "labels": {"a": "1"}}, "data": {"k": "v", "other": "x"}}
    assert client.post(path, json=body).status_code == 201
    return f"{path}/p"


def test_merge_patch_adds_changes_and_deletes(client: httpx.Client, cm: str) -> None:
    patched = client.patch(
        cm, content=b'{"metadata":{"labels":{"b":"2"}},"data":{"k":"w","other":null}}', headers=MERGE
    )
    assert patched.status_code == 200
    body = patched.json()
    assert body["metadata"]["labels"] == {"a": "1", "b": "2"} and body["data"] == {"k": "w"}
    assert client.get(cm).json() == body


def test_json_patch_operations_and_failed_test(client: httpx.Client, cm: str) -> None:
    ops = (
        b'[{"op":"test","path":"/data/k","value":"v"},{"op":"copy","from":"/data/k","path":"/data/c"},'
        b'{"op":"move","from":"/data/other","path":"/data/m"},{"op":"remove","path":"/metadata/labels/a"}]'
    )
    body = client.patch(cm, content=ops, headers=JSON_PATCH).json()
    assert body["data"] == {"c": "v", "k": "v", "m": "x"} and "labels" not in body["metadata"]
    before = client.get(cm).json()
    failed = client.patch(cm, content=b'[{"op":"test","path":"/data/k","value":"nope"}]', headers=JSON_PATCH)
    assert failed.status_code == 422 and failed.json()["reason"] == "Invalid"
    assert failed.json()["message"] == "the server rejected our request due to an error in our request"
    missing = client.patch(cm, content=b'[{"op":"remove","path":"/data/absent"}]', headers=JSON_PATCH)
    assert missing.status_code == 422
    assert client.get(cm).json() == before  # nothing stored


def test_strategic_merge_patch_merges_containers_by_name(client: httpx.Client, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    manifest = deployment("smp")
    manifest["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    client.post(path, json=manifest)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "smp", "image": "nginx:1.27"}]}}}}
    body = client.patch(f"{path}/smp", json=patch, headers=STRATEGIC).json()
    containers = body["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("smp", "nginx:1.27"), ("side", "busybox")]
    assert body["metadata"]["generation"] == 2
    delete_side = {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}
    body = client.patch(f"{path}/smp", json=delete_side, headers=STRATEGIC).json()
    assert [c["name"] for c in body["spec"]["template"]["spec"]["containers"]] == ["smp"]
    # a merge patch replaces lists instead
    merge = {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "redis"}]}}}}
    body = client.patch(f"{path}/smp", json=merge, headers=MERGE).json()
    assert [c["name"] for c in body["spec"]["template"]["spec"]["containers"]] == ["only"]


def test_unsupported_patch_type_is_415(client: httpx.Client, cm: str) -> None:
    refused = client.patch(cm, content=b"{}", headers={"Content-Type": "application/xml"})
    assert refused.status_code == 415 and refused.json()["reason"] == "UnsupportedMediaType"


def test_patch_of_a_missing_object_is_404(client: httpx.Client, namespace: str) -> None:
    missing = client.patch(f"/api/v1/namespaces/{namespace}/configmaps/none", json={"data": {}}, headers=MERGE)
    assert missing.status_code == 404 and missing.json()["message"] == 'configmaps "none" not found'


def test_a_resource_version_in_the_patch_makes_it_conditional(client: httpx.Client, cm: str) -> None:
    rv = client.get(cm).json()["metadata"]["resourceVersion"]
    ok = client.patch(cm, json={"metadata": {"resourceVersion": rv}, "data": {"k": "1"}}, headers=MERGE)
    assert ok.status_code == 200
    stale = client.patch(cm, json={"metadata": {"resourceVersion": rv}, "data": {"k": "2"}}, headers=MERGE)
    assert stale.status_code == 409 and stale.json()["reason"] == "Conflict"
    assert stale.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "p": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert client.get(cm).json()["data"]["k"] == "1"


def test_a_patch_may_not_rename_or_change_kind(client: httpx.Client, cm: str) -> None:
    renamed = client.patch(cm, json={"metadata": {"name": "q"}}, headers=MERGE)
    assert renamed.status_code == 400  # the patcher's checkName (apiserver handlers/patch.go), before validation
    assert renamed.json()["message"] == "the name of the object (q) does not match the name on the URL (p)"
    rekinded = client.patch(cm, json={"kind": "Secret"}, headers=MERGE)
    assert rekinded.status_code == 422
    assert "unable to decode /v1, Kind=Secret into *core.ConfigMap" in rekinded.json()["message"]
    assert client.get(cm).json()["metadata"]["name"] == "p"


def test_concurrent_label_patches_all_land(client: httpx.Client, cm: str) -> None:
    def label(i: int) -> int:
        return client.patch(cm, json={"metadata": {"labels": {f"l{i}": "x"}}}, headers=MERGE).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert set(pool.map(label, range(16))) == {200}
    labels = client.get(cm).json()["metadata"]["labels"]
    assert {f"l{i}" for i in range(16)} <= set(labels)


def test_dry_run_patch_stores_nothing(client: httpx.Client, cm: str) -> None:
    before = client.get(cm).json()
    dry = client.patch(cm, params={"dryRun": "All"}, json={"data": {"k": "dry"}}, headers=MERGE)
    assert dry.status_code == 200 and dry.json()["data"]["k"] == "dry"
    assert client.get(cm).json() == before


def test_field_validation_of_patches(client: httpx.Client, cm: str) -> None:
    warned = client.patch(cm, json={"data": {"k": "w"}, "bogus": 1}, headers=MERGE)
    assert warned.status_code == 200 and warned.headers["Warning"] == '299 - "unknown field \\"bogus\\""'
    strict = client.patch(cm, params={"fieldValidation": "Strict"}, json={"bogus": 1}, headers=MERGE)
    assert strict.status_code == 422
    assert strict.json()["details"]["causes"][0]["field"] == "patch"
    assert 'strict decoding error: unknown field "bogus"' in strict.json()["message"]
    ignored = client.patch(cm, params={"fieldValidation": "Ignore"}, json={"bogus": 1}, headers=MERGE)
    assert ignored.status_code == 200 and "Warning" not in ignored.headers


def test_patch_options_are_validated(client: httpx.Client, cm: str) -> None:
    forced = client.patch(cm, params={"force": "true"}, json={}, headers=MERGE)
    assert forced.status_code == 422 and forced.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    )


def test_patch_records_field_ownership(client: httpx.Client, cm: str) -> None:
    client.patch(cm, params={"fieldManager": "labeler"}, json={"metadata": {"labels": {"z": "9"}}}, headers=MERGE)
    entries = {e["manager"]: e for e in client.get(cm).json()["metadata"]["managedFields"]}
    assert entries["labeler"]["operation"] == "Update"
    assert entries["labeler"]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:z": {}}}}
    created = entries["python-httpx"]  # the creator, named by its User-Agent
    assert created["fieldsV1"]["f:data"] == {".": {}, "f:k": {}, "f:other": {}}
