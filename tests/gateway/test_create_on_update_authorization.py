"""No object is created without the ``create`` verb: a PUT of a kind that allows create-on-update,
or a server-side apply, that would create the object is authorized as a create of it by the same
user (upstream's withAuthorization in the update and patch handlers), only when it creates.

Upstream answers ``NewForbidden(resource, name, <the authorizer's reason>)``; RBAC gives no reason
for a plain denial, so the message ends in ``is forbidden: ``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.gateway.helpers import GatewayProcess
from tests.gateway.test_authorization import SETTLE, binding, eventually_status, role, user

TOKEN, USER = "writer-token", "writer"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
CONFIGMAP_RULE = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch", "delete"]}
UPDATE_RULES = [
    {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get", "update"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "update"]},
]
_names = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("create-on-update")
    tokens = data / "tokens.csv"
    tokens.write_text(f'{TOKEN},{USER},u-1,""\n')
    process = GatewayProcess(data, "--token-auth-file", str(tokens)).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def admin(server: GatewayProcess) -> Iterator[httpx.Client]:
    with server.client() as client:  # the insecure port: system:masters
        yield client


@pytest.fixture(scope="module")
def writer(server: GatewayProcess) -> Iterator[httpx.Client]:
    with server.secure_client(token=TOKEN) as client:
        yield client


def grant(admin: httpx.Client, writer: httpx.Client, rules: list[dict[str, Any]], probe: str) -> str:
    """A fresh namespace where the writer has ``rules`` (bound to a Role), once the authorizer has
    seen them (``probe``: a path the writer may get, which does not exist)."""
    namespace = f"cou{next(_names)}"
    assert admin.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    assert admin.post(f"{rbac}/roles", json=role("writer", rules, namespace)).status_code == 201
    bound = binding("writer", "Role", "writer", [user(USER)], namespace)
    assert admin.post(f"{rbac}/rolebindings", json=bound).status_code == 201
    assert eventually_status(writer, "GET", probe.format(namespace=namespace), 404).status_code == 404
    return namespace


def add_create(admin: httpx.Client, namespace: str, rules: list[dict[str, Any]]) -> None:
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/writer"
    with_create = [{**rule, "verbs": [*rule["verbs"], "create"]} for rule in rules]
    assert admin.put(path, json=role("writer", with_create, namespace)).status_code == 200


def assert_forbidden_create(
    answer: httpx.Response, resource: str, name: str, group: str = "", reason: str = ""
) -> None:
    """upstream's NewForbidden with the authorizer's reason (RBAC's is empty for a plain denial)."""
    qualified = f"{resource}.{group}" if group else resource
    details = {"name": name, "kind": resource, **({"group": group} if group else {})}
    assert answer.status_code == 403, answer.text
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is forbidden: {reason}',
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


def configmap_yaml(name: str, color: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  color: {color}\n"


CONFIGMAP_PROBE = "/api/v1/namespaces/{namespace}/configmaps/probe"


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "dry-run-apply"])
def test_apply_that_creates_needs_create(admin: httpx.Client, writer: httpx.Client, dry_run: bool) -> None:
    namespace = grant(admin, writer, [CONFIGMAP_RULE], CONFIGMAP_PROBE)
    path = f"/api/v1/namespaces/{namespace}/configmaps/settings"
    params = {"fieldManager": "probe", **({"dryRun": "All"} if dry_run else {})}
    answer = writer.patch(path, params=params, headers=APPLY, content=configmap_yaml("settings", "blue"))
    assert_forbidden_create(answer, "configmaps", "settings")
    assert admin.get(path).status_code == 404

    add_create(admin, namespace, [CONFIGMAP_RULE])
    created = eventually_status(
        writer, "PATCH", path, 201, params=params, headers=APPLY, content=configmap_yaml("settings", "blue")
    )
    assert created.status_code == 201, created.text
    assert admin.get(path).status_code == (404 if dry_run else 200)


def test_apply_to_an_existing_object_needs_no_create(admin: httpx.Client, writer: httpx.Client) -> None:
    namespace = grant(admin, writer, [CONFIGMAP_RULE], CONFIGMAP_PROBE)
    path = f"/api/v1/namespaces/{namespace}/configmaps/settings"
    body = {"metadata": {"name": "settings"}, "data": {"color": "blue"}}
    assert admin.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body).status_code == 201
    params = {"fieldManager": "probe", "force": "true"}  # the admin's create owns data.color
    answer = writer.patch(path, params=params, headers=APPLY, content=configmap_yaml("settings", "red"))
    assert answer.status_code == 200, answer.text
    assert admin.get(path).json()["data"] == {"color": "red"}


UPDATED_KINDS = [
    ("", "v1", "endpoints", "Endpoints"),
    ("coordination.k8s.io", "v1", "leases", "Lease"),
]


def object_path(group: str, version: str, plural: str, namespace: str, name: str = "") -> str:
    root = f"/apis/{group}/{version}" if group else f"/api/{version}"
    return f"{root}/namespaces/{namespace}/{plural}" + (f"/{name}" if name else "")


def manifest(group: str, version: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": f"{group}/{version}" if group else version, "kind": kind, "metadata": {"name": name}}


@pytest.mark.parametrize(("group", "version", "plural", "kind"), UPDATED_KINDS, ids=["endpoints", "leases"])
def test_put_that_creates_needs_create(
    admin: httpx.Client, writer: httpx.Client, group: str, version: str, plural: str, kind: str
) -> None:
    probe = object_path(group, version, plural, "{namespace}", "probe")
    namespace = grant(admin, writer, UPDATE_RULES, probe)
    path = object_path(group, version, plural, namespace, "web")
    body = manifest(group, version, kind, "web")
    assert_forbidden_create(writer.put(path, json=body), plural, "web", group)
    assert admin.get(path).status_code == 404

    add_create(admin, namespace, UPDATE_RULES)
    created = eventually_status(writer, "PUT", path, 201, json=body)
    assert created.status_code == 201, created.text
    assert admin.get(path).status_code == 200


@pytest.mark.parametrize(("group", "version", "plural", "kind"), UPDATED_KINDS, ids=["endpoints", "leases"])
def test_put_of_an_existing_object_needs_no_create(
    admin: httpx.Client, writer: httpx.Client, group: str, version: str, plural: str, kind: str
) -> None:
    namespace = grant(admin, writer, UPDATE_RULES, object_path(group, version, plural, "{namespace}", "probe"))
    body = manifest(group, version, kind, "web")
    assert admin.post(object_path(group, version, plural, namespace), json=body).status_code == 201
    path = object_path(group, version, plural, namespace, "web")
    answer = writer.put(path, json={**body, "metadata": {"name": "web", "labels": {"tier": "front"}}})
    assert answer.status_code == 200, answer.text
    assert admin.get(path).json()["metadata"]["labels"] == {"tier": "front"}


def test_the_authorizers_reason_follows_the_message(admin: httpx.Client, writer: httpx.Client) -> None:
    """A binding to a role that does not exist: RBAC's reason names it, after ``is forbidden: ``."""
    namespace = grant(admin, writer, [CONFIGMAP_RULE], CONFIGMAP_PROBE)
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    dangling = binding("dangling", "Role", "absent", [user(USER)], namespace)
    assert admin.post(f"{rbac}/rolebindings", json=dangling).status_code == 201
    path = f"/api/v1/namespaces/{namespace}/configmaps/settings"
    expected = 'configmaps "settings" is forbidden: RBAC: role.rbac.authorization.k8s.io "absent" not found'
    apply = {"params": {"fieldManager": "probe"}, "headers": APPLY, "content": configmap_yaml("settings", "a")}
    deadline = time.monotonic() + SETTLE
    answer = writer.patch(path, **apply)
    while answer.json().get("message") != expected and time.monotonic() < deadline:  # the binding is seen
        time.sleep(0.05)
        answer = writer.patch(path, **apply)
    assert_forbidden_create(answer, "configmaps", "settings", reason=expected.partition(": ")[2])
    assert admin.get(path).status_code == 404
