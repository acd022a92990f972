"""Corrupt objects and their unsafe deletion (Kubernetes API Concepts, "Force deletion").

A corrupt object is made as it happens in a real cluster: bytes that are no object written straight
into storage with etcdctl. Reads report it with upstream's errors and the watch cache carries on;
with the AllowUnsafeMalformedObjectDeletion gate on, a DELETE with
ignoreStoreReadErrorWithClusterBreakingPotential=true removes it (and refuses everything else);
with the gate off the option is dropped and the object cannot be deleted.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from .helpers import GatewayProcess, watch_lines

ETCDCTL = shutil.which("etcdctl")
pytestmark = pytest.mark.skipif(ETCDCTL is None, reason="etcdctl not installed (Debian package etcd-client)")

IGNORE = "ignoreStoreReadErrorWithClusterBreakingPotential"
UNSAFE = {IGNORE: "true"}
SETTLE = 5.0  # seconds for a grant to reach the authorizer, or a write the watch cache


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(
        tmp_path_factory.mktemp("unsafe-delete"), "--feature-gates", "AllowUnsafeMalformedObjectDeletion=true"
    ).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def api(gated: GatewayProcess) -> Iterator[httpx.Client]:
    with gated.client() as c:
        yield c


def new_namespace(client: httpx.Client, name: str) -> str:
    assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    return name


def etcdctl(server: GatewayProcess, *args: str) -> str:
    assert ETCDCTL is not None
    done = subprocess.run(
        [ETCDCTL, "--endpoints", server.storage, "--command-timeout=5s", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def corrupt_secret(server: GatewayProcess, client: httpx.Client, namespace: str, name: str, **meta: object) -> str:
    """A secret made through the API, then overwritten in storage with bytes that are no object;
    returns its storage key once the watch cache has seen the write."""
    body = {"metadata": {"name": name, **meta}, "stringData": {"k": "v"}}
    assert client.post(f"/api/v1/namespaces/{namespace}/secrets", json=body).status_code == 201
    key = f"/registry/secrets/{namespace}/{name}"
    etcdctl(server, "put", key, "not an object")
    deadline = time.monotonic() + SETTLE
    while (
        client.get(f"/api/v1/namespaces/{namespace}/secrets/{name}", params={"resourceVersion": "0"}).status_code != 500
    ):
        assert time.monotonic() < deadline, "the watch cache did not see the corrupt value"
        time.sleep(0.05)
    return key


def test_get_and_list_report_the_corrupt_object(gated: GatewayProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "corrupt-read")
    key = corrupt_secret(gated, api, ns, "bad")
    assert api.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "good"}}).status_code == 201

    for params in ({}, {"resourceVersion": "0"}):
        got = api.get(f"/api/v1/namespaces/{ns}/secrets/bad", params=params)
        assert got.status_code == 500, got.text
        status = got.json()
        assert status["reason"] == "InternalError"
        assert status["message"].startswith(
            f"Internal error occurred: StorageError: corrupt object, Code: 7, Key: {key}"
        )

    # Lists from the watch cache and from storage (a limit read from storage, an exact revision) alike.
    for path, params in (
        (f"/api/v1/namespaces/{ns}/secrets", {}),
        (f"/api/v1/namespaces/{ns}/secrets", {"resourceVersion": "0"}),
        (f"/api/v1/namespaces/{ns}/secrets", {"limit": "1"}),
        ("/api/v1/secrets", {}),
    ):
        listed = api.get(path, params=params)
        assert listed.status_code == 500, (params, listed.text)
        status = listed.json()
        assert status["reason"] == "StoreReadError"
        assert status["message"] == "failed to read one or more secrets from the storage"
        assert status["details"]["name"] == "list" and status["details"]["kind"] == "secrets"
        causes = status["details"]["causes"]
        assert [(c["reason"], c["field"]) for c in causes] == [("UnexpectedServerResponse", key)]
        assert "corrupt object" in causes[0]["message"]

    # Other namespaces list as ever; the good secret can be read.
    assert api.get("/api/v1/namespaces/default/secrets").status_code == 200
    assert api.get(f"/api/v1/namespaces/{ns}/secrets/good").status_code == 200


def test_watch_cache_carries_on_past_a_corrupt_object(gated: GatewayProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "corrupt-watch")
    path = f"/api/v1/namespaces/{ns}/configmaps"
    published = time.monotonic() + SETTLE  # the root CA publisher's ConfigMap lands before the watch's start
    while api.get(f"{path}/kube-root-ca.crt").status_code != 200:
        assert time.monotonic() < published
        time.sleep(0.05)
    assert api.post(path, json={"metadata": {"name": "before"}}).status_code == 201
    version = api.get(path).json()["metadata"]["resourceVersion"]
    events: list[dict] = []

    def watch() -> None:
        events.extend(watch_lines(api, path, stop_after=2, timeout=20, resourceVersion=version))

    watcher = threading.Thread(target=watch)
    watcher.start()
    etcdctl(gated, "put", f"/registry/configmaps/{ns}/broken", "garbage")
    time.sleep(0.2)
    assert api.post(path, json={"metadata": {"name": "after"}}).status_code == 201
    assert api.put(f"{path}/before", json={"metadata": {"name": "before"}, "data": {"a": "b"}}).status_code == 200
    watcher.join(25)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "after"),
        ("MODIFIED", "before"),
    ]


def test_unsafe_delete_removes_a_corrupt_object_despite_finalizers(gated: GatewayProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "corrupt-delete")
    key = corrupt_secret(gated, api, ns, "held", finalizers=["example.com/hold"])
    refused = api.delete(f"/api/v1/namespaces/{ns}/secrets/held")  # the normal way cannot read it
    assert refused.status_code == 500 and "corrupt object" in refused.json()["message"], refused.text

    deleted = api.delete(f"/api/v1/namespaces/{ns}/secrets/held", params=UNSAFE)
    assert deleted.status_code == 200, deleted.text
    status = deleted.json()
    assert (status["kind"], status["status"], status["code"]) == ("Status", "Success", 200)
    assert status["details"] == {"name": "held", "kind": "Secret"}
    assert etcdctl(gated, "get", key, "--print-value-only") == ""
    deadline = time.monotonic() + SETTLE
    while api.get(f"/api/v1/namespaces/{ns}/secrets").status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert api.get(f"/api/v1/namespaces/{ns}/secrets/held").status_code == 404


def test_unsafe_delete_in_a_body(gated: GatewayProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "corrupt-body")
    corrupt_secret(gated, api, ns, "x")
    body = {"kind": "DeleteOptions", "apiVersion": "v1", IGNORE: True}
    deleted = api.request("DELETE", f"/api/v1/namespaces/{ns}/secrets/x", json=body)
    assert deleted.status_code == 200, deleted.text


def test_unsafe_delete_of_a_readable_object_is_refused(api: httpx.Client) -> None:
    ns = new_namespace(api, "readable")
    assert api.post(f"/api/v1/namespaces/{ns}/secrets", json={"metadata": {"name": "fine"}}).status_code == 201
    for name in ("fine", "missing"):
        refused = api.delete(f"/api/v1/namespaces/{ns}/secrets/{name}", params=UNSAFE)
        assert refused.status_code == 422, refused.text
        status = refused.json()
        assert status["message"] == (
            f'secrets "{name}" is invalid: {IGNORE}: Invalid value: true: '
            "is exclusively used to delete corrupt object(s), try again by removing this option"
        )
        assert status["details"]["kind"] == "secrets"
    assert api.get(f"/api/v1/namespaces/{ns}/secrets/fine").status_code == 200


def test_other_delete_options_are_refused_with_it(api: httpx.Client) -> None:
    body = {
        IGNORE: True,
        "dryRun": ["All"],
        "propagationPolicy": "Orphan",
        "gracePeriodSeconds": 0,
        "preconditions": {},
    }
    refused = api.request("DELETE", "/api/v1/namespaces/default/secrets/any", json=body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: ['
        + ", ".join(
            f"{IGNORE}: Invalid value: true: cannot be set together with .{name}"
            for name in ("dryRun", "propagationPolicy", "gracePeriodSeconds", "preconditions")
        )
        + "]"
    )
    orphan = api.delete("/api/v1/namespaces/default/secrets/any", params={**UNSAFE, "orphanDependents": "true"})
    assert orphan.status_code == 422
    assert orphan.json()["message"].endswith("cannot be set together with .orphanDependents")

    collection = api.delete("/api/v1/namespaces/default/secrets", params=UNSAFE)
    assert collection.status_code == 422, collection.text
    assert collection.json()["message"] == (
        f'DeleteOptions.meta.k8s.io "" is invalid: {IGNORE}: Invalid value: true: '
        "is not allowed with DELETECOLLECTION, try again after removing the option"
    )


def test_unsafe_delete_needs_its_own_verb(gated: GatewayProcess, api: httpx.Client) -> None:
    ns = new_namespace(api, "corrupt-rbac")
    corrupt_secret(gated, api, ns, "x")
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {
        "metadata": {"name": "deleter"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["delete"]}],
    }
    assert api.post(f"{rbac}/namespaces/{ns}/roles", json=role).status_code == 201
    binding = {
        "metadata": {"name": "deleter"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deleter"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "mallory"}],
    }
    assert api.post(f"{rbac}/namespaces/{ns}/rolebindings", json=binding).status_code == 201
    as_mallory = {"Impersonate-User": "mallory"}
    path = f"/api/v1/namespaces/{ns}/secrets/x"

    deadline = time.monotonic() + SETTLE
    while (
        (answer := api.delete(path, params=UNSAFE, headers=as_mallory))
        .json()["message"]
        .startswith('secrets "x" is forbidden: User')
    ):
        assert time.monotonic() < deadline, answer.text  # the grant of delete is not seen yet
        time.sleep(0.1)
    assert answer.status_code == 403, answer.text
    assert answer.json()["message"] == (
        'secrets "x" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: '
    )

    role["rules"][0]["verbs"].append("unsafe-delete-ignore-read-errors")
    role["metadata"]["resourceVersion"] = api.get(f"{rbac}/namespaces/{ns}/roles/deleter").json()["metadata"][
        "resourceVersion"
    ]
    assert api.put(f"{rbac}/namespaces/{ns}/roles/deleter", json=role).status_code == 200
    deadline = time.monotonic() + SETTLE
    while (answer := api.delete(path, params=UNSAFE, headers=as_mallory)).status_code == 403:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.1)
    assert answer.status_code == 200, answer.text


def test_without_the_gate_the_option_is_dropped(server: GatewayProcess, client: httpx.Client) -> None:
    ns = new_namespace(client, "corrupt-ungated")
    key = corrupt_secret(server, client, ns, "stuck")
    refused = client.delete(f"/api/v1/namespaces/{ns}/secrets/stuck", params=UNSAFE)
    assert refused.status_code == 500, refused.text
    assert "corrupt object" in refused.json()["message"]
    assert etcdctl(server, "get", key, "--print-value-only").strip() == "not an object"
    # The other options are not checked against it either: it is not there.
    assert (
        client.delete(f"/api/v1/namespaces/{ns}/secrets/other", params={**UNSAFE, "dryRun": "All"}).status_code == 404
    )
    etcdctl(server, "del", key)  # leave the shared server clean
