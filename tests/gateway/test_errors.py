"""Errors are metav1.Status objects exactly as kube-apiserver formats them."""

from __future__ import annotations

import httpx
import pytest

from .helpers import GatewayProcess, skip_on_hypercorn

ON_EVERY_HTTP_SERVER = True


def test_already_exists_body_is_byte_exact(server: GatewayProcess, client: httpx.Client) -> None:
    """The official Python client's tests compare this body byte for byte; the status line has Go's
    reason phrase."""
    client.post("/api/v1/namespaces", json={"metadata": {"name": "exists-twice"}})
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": "exists-twice"}})
    assert response.status_code == 409
    assert response.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces '
        b'\\"exists-twice\\" already exists","reason":"AlreadyExists","details":{"name":"exists-twice",'
        b'"kind":"namespaces"},"code":409}\n'
    )
    skip_on_hypercorn(server, "no reason phrase in its status lines")
    assert response.reason_phrase == "Conflict"


def test_already_exists_in_a_group_names_the_group(client: httpx.Client, namespace: str) -> None:
    lease = {"metadata": {"name": "l"}}
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    client.post(path, json=lease)
    body = client.post(path, json=lease).json()
    assert body["message"] == 'leases.coordination.k8s.io "l" already exists'
    assert body["details"] == {"name": "l", "group": "coordination.k8s.io", "kind": "leases"}


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("GET", "/api/v1/foos", 404),
        ("GET", "/apis/apps/v9/deployments", 404),
        ("GET", "/api/v2/pods", 404),
        ("GET", "/api/v1/pods/somepod", 404),  # a namespaced object needs its namespace
        ("POST", "/api/v1/pods", 405),  # namespaced collections accept POST only per namespace
        ("DELETE", "/api/v1/namespaces", 405),  # namespaces have no deletecollection
        ("GET", "/api/v1/namespaces/default/pods/p/log", 404),  # subresource not served yet
    ],
)
def test_unknown_paths_and_verbs(client: httpx.Client, method: str, path: str, code: int) -> None:
    response = client.request(method, path)
    assert response.status_code == code
    body = response.json()
    assert body["kind"] == "Status" and body["status"] == "Failure" and body["code"] == code
    assert body["reason"] == {404: "NotFound", 405: "MethodNotAllowed"}[code]


def test_method_not_supported_names_the_resource(client: httpx.Client) -> None:
    body = client.delete("/api/v1/namespaces").json()
    assert body["message"] == 'deletecollection is not supported on resources of kind "namespaces"'
    assert body["details"] == {"kind": "namespaces"}


def test_invalid_name(client: httpx.Client, namespace: str) -> None:
    body = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "Bad_Name"}}).json()
    assert body["code"] == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of"
    )
    assert body["details"]["kind"] == "ConfigMap" and body["details"]["name"] == "Bad_Name"
    cause = body["details"]["causes"][0]
    assert cause["reason"] == "FieldValueInvalid" and cause["field"] == "metadata.name"


def test_name_rules_per_kind(client: httpx.Client, namespace: str) -> None:
    service = client.post(f"/api/v1/namespaces/{namespace}/services", json={"metadata": {"name": "1svc"}}).json()
    assert "a DNS-1035 label must consist of" in service["message"]
    ns = client.post("/api/v1/namespaces", json={"metadata": {"name": "a.b"}}).json()
    assert "a lowercase RFC 1123 label must consist of" in ns["message"]
    missing = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {}}).json()
    assert missing["message"] == (
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )


def test_body_disagreeing_with_url(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    other_ns = client.post(path, json={"metadata": {"name": "x", "namespace": "elsewhere"}}).json()
    assert other_ns["code"] == 400
    assert (
        other_ns["message"] == "the namespace of the provided object does not match the namespace sent on the request"
    )
    wrong_kind = client.post(path, json={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}).json()
    assert wrong_kind["code"] == 400
    assert wrong_kind["message"].startswith('Secret in version "v1" cannot be handled as a ConfigMap')
    wrong_version = client.post(path, json={"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert wrong_version.status_code == 400
    assert wrong_version.json()["message"] == (
        "the API version in the data (apps/v1) does not match the expected API version (v1)"
    )


def test_missing_namespace(client: httpx.Client) -> None:
    body = client.post("/api/v1/namespaces/no-such-ns/configmaps", json={"metadata": {"name": "x"}}).json()
    assert body["code"] == 404 and body["message"] == 'namespaces "no-such-ns" not found'


def test_malformed_bodies_are_400(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for body in (b"{not json", b"[1,2]", b'{"kind": 5}', b'{"metadata": {"name": 5}}'):
        response = client.post(path, content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, body
        assert response.json()["reason"] == "BadRequest"
    typed = client.post(path, json={"metadata": {"name": "x"}, "data": {"a": 1}}).json()
    assert typed["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into '
        "Go struct field ConfigMap.data of type string"
    )


def test_generate_name(client: httpx.Client, namespace: str) -> None:
    body = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"generateName": "gen-"}}).json()
    name = body["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_field_validation(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = b'{"metadata":{"name":"fv","name":"fv"},"data":{},"bogus":1}'
    warn = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert warn.status_code == 201
    assert warn.headers.get_list("Warning") == [
        '299 - "unknown field \\"bogus\\""',
        '299 - "duplicate field \\"metadata.name\\""',
    ]
    strict = client.post(
        path,
        params={"fieldValidation": "Strict"},
        content=body.replace(b"fv", b"fw"),
        headers={"Content-Type": "application/json"},
    )
    assert strict.status_code == 400
    assert strict.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus", duplicate field "metadata.name"'
    )
    bad = client.post(path, params={"fieldValidation": "Loud"}, json={"metadata": {"name": "fx"}}).json()
    assert bad["code"] == 422
    assert bad["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )


def test_dry_run(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    dry = client.post(path, params={"dryRun": "All"}, json={"metadata": {"name": "dry"}})
    assert dry.status_code == 201 and "resourceVersion" not in dry.json()["metadata"]
    assert client.get(f"{path}/dry").status_code == 404
    bad = client.post(path, params={"dryRun": "true"}, json={"metadata": {"name": "dry"}}).json()
    assert bad["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"'
    )


def test_unsupported_body_type_is_415(client: httpx.Client, namespace: str) -> None:
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps", content=b"x", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415 and response.json()["reason"] == "UnsupportedMediaType"


def test_early_answers_keep_the_connection_usable(server) -> None:
    """A 403 given before the body is read: the body is drained (up to Go's 256 KiB) so that the
    same keep-alive connection carries the next request; a larger body closes the connection."""
    with server.secure_client() as anonymous:
        for i in range(30):
            body = b'{"metadata":{"name":"x"},"data":{"k":"' + b"v" * (i * 1000) + b'"}}'
            answer = anonymous.post(
                "/api/v1/namespaces/default/configmaps", content=body, headers={"Content-Type": "application/json"}
            )
            assert answer.status_code == 403 and answer.headers.get("connection") != "close"
        big = b'{"data":{"k":"' + b"v" * (300 * 1024) + b'"}}'
        answer = anonymous.post(
            "/api/v1/namespaces/default/configmaps", content=big, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code == 403 and answer.headers["connection"] == "close"
        assert anonymous.get("/version").status_code == 200  # a new connection, as a client opens one


def test_a_large_body_the_handler_read_keeps_the_connection(client: httpx.Client, namespace: str) -> None:
    """Only an unread body beyond 256 KiB closes the connection (Go's server counts what is left)."""
    body = {"metadata": {"name": "large"}, "data": {"k": "v" * (400 * 1024)}}
    answer = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body)
    assert answer.status_code == 201 and answer.headers.get("connection") != "close"
