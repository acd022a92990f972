"""The bootstrap RBAC policy over TLS: upstream's roles and bindings made and reconciled at start,
ClusterRole aggregation, and what four identities may do — the admin kubeconfig, an editor of one
namespace by client certificate (``protokube certs issue``), a service account token from
``kubectl create token`` bound to view, and an anonymous client."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from protokube.gateway.auth.bootstrap import policy
from tests.gateway.helpers import ROOT, GatewayProcess, eventually, kubectl_path

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def rules_of(client: httpx.Client, name: str) -> list[dict[str, Any]]:
    return client.get(f"{RBAC}/clusterroles/{name}").json().get("rules") or []


def grants(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r.get("apiGroups", []) and resource in r.get("resources", []) and verb in r.get("verbs", [])
        for r in rules
    )


def test_every_bootstrap_object_is_made(client: httpx.Client) -> None:
    expected = policy()
    for plural, objects in (
        ("clusterroles", expected.cluster_roles),
        ("clusterrolebindings", expected.cluster_role_bindings),
        ("roles", expected.roles),
        ("rolebindings", expected.role_bindings),
    ):
        for obj in objects:
            meta = obj["metadata"]
            where = f"/namespaces/{meta['namespace']}" if "namespace" in meta else ""
            found = client.get(f"{RBAC}{where}/{plural}/{meta['name']}")
            assert found.status_code == 200, (plural, meta["name"])
            got = found.json()
            assert got["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
            assert got["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] == "true"
            if "aggregationRule" not in obj:
                assert (got.get("rules") or []) == obj.get("rules", got.get("rules") or []), meta["name"]
            assert got.get("subjects") == obj.get("subjects"), meta["name"]
    assert len(expected.cluster_roles) > 25
    public = client.get(f"{RBAC}/clusterroles/system:public-info-viewer").json()["rules"]
    assert public == [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]}]


def test_controller_roles_bound_to_their_service_accounts(client: httpx.Client) -> None:
    """kube-controller-manager's roles (bootstrappolicy ControllerRoles): each bound to its service
    account in kube-system, granting what that controller does and nothing else."""
    names = {r["metadata"]["name"] for r in client.get(f"{RBAC}/clusterroles").json()["items"]}
    controllers = sorted(n for n in names if n.startswith("system:controller:"))
    assert len(controllers) == 33 and "system:controller:deployment-controller" in controllers
    binding = client.get(f"{RBAC}/clusterrolebindings/system:controller:job-controller").json()
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "job-controller", "namespace": "kube-system"}]

    def allowed(user: str, verb: str, group: str, resource: str) -> bool:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", "system:authenticated"],
                "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": "default"},
            },
        }
        answer = client.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review)
        assert answer.status_code == 201, answer.text
        return answer.json()["status"]["allowed"]

    deployments = "system:serviceaccount:kube-system:deployment-controller"
    assert allowed(deployments, "create", "apps", "replicasets")
    assert not allowed(deployments, "get", "", "secrets")
    assert allowed("system:serviceaccount:kube-system:generic-garbage-collector", "delete", "example.com", "widgets")


def test_aggregated_roles_gather_their_parts(client: httpx.Client) -> None:
    # view ⊂ edit ⊂ admin, filled by the aggregation controller from the aggregate-to-* roles
    assert eventually(lambda: grants(rules_of(client, "admin"), "rbac.authorization.k8s.io", "rolebindings", "create"))
    view, edit, admin = (rules_of(client, name) for name in ("view", "edit", "admin"))
    assert grants(view, "apps", "deployments", "list") and not grants(view, "", "secrets", "get")
    assert grants(edit, "", "secrets", "get") and grants(edit, "apps", "deployments", "create")
    assert grants(edit, "apps", "deployments", "list")  # edit aggregates view too
    assert all(rule in admin for rule in edit)

    part = {
        "metadata": {"name": "widget-viewer", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}],
    }
    assert client.post(f"{RBAC}/clusterroles", json=part).status_code == 201
    for name in ("view", "edit", "admin"):
        assert eventually(lambda n=name: grants(rules_of(client, n), "example.com", "widgets", "list")), name
    custom = {
        "metadata": {"name": "widgets-everywhere"},
        "aggregationRule": {
            "clusterRoleSelectors": [
                {"matchExpressions": [{"key": "rbac.authorization.k8s.io/aggregate-to-view", "operator": "Exists"}]}
            ]
        },
    }
    assert client.post(f"{RBAC}/clusterroles", json=custom).status_code == 201
    assert eventually(lambda: grants(rules_of(client, "widgets-everywhere"), "example.com", "widgets", "get"))
    assert client.delete(f"{RBAC}/clusterroles/widget-viewer").status_code == 200
    assert eventually(lambda: not grants(rules_of(client, "view"), "example.com", "widgets", "list"))
    assert eventually(lambda: not grants(rules_of(client, "widgets-everywhere"), "example.com", "widgets", "get"))
    assert grants(rules_of(client, "view"), "apps", "deployments", "list")


def test_reconciled_at_start_autoupdate_honoured(tmp_path: Path) -> None:
    first = GatewayProcess(tmp_path).start()
    try:
        with first.client() as admin:
            patch = {"Content-Type": "application/json-patch+json"}
            changed = admin.patch(
                f"{RBAC}/clusterroles/system:basic-user",
                headers=patch,
                json=[
                    {"op": "remove", "path": "/rules/1"},
                    {"op": "add", "path": "/metadata/labels/mine", "value": "x"},
                ],
            )
            assert changed.status_code == 200, changed.text
            protected = admin.patch(
                f"{RBAC}/clusterroles/system:discovery",
                headers=patch,
                json=[
                    {"op": "remove", "path": "/rules/0"},
                    {
                        "op": "replace",
                        "path": "/metadata/annotations/rbac.authorization.kubernetes.io~1autoupdate",
                        "value": "false",
                    },
                ],
            )
            assert protected.status_code == 200, protected.text
            fewer = admin.patch(
                f"{RBAC}/clusterrolebindings/system:public-info-viewer",
                headers=patch,
                json=[{"op": "remove", "path": "/subjects/1"}],
            )
            assert fewer.status_code == 200, fewer.text
    finally:
        first.kill()
    second = GatewayProcess(tmp_path).start()
    try:
        with second.client() as admin:
            basic = admin.get(f"{RBAC}/clusterroles/system:basic-user").json()
            assert basic["metadata"]["labels"]["mine"] == "x"
            assert grants(basic["rules"], "authentication.k8s.io", "selfsubjectreviews", "create")
            assert not admin.get(f"{RBAC}/clusterroles/system:discovery").json().get("rules")
            subjects = admin.get(f"{RBAC}/clusterrolebindings/system:public-info-viewer").json()["subjects"]
            assert [s["name"] for s in subjects] == ["system:authenticated", "system:unauthenticated"]
    finally:
        second.kill()


def test_four_identities(server: GatewayProcess, client: httpx.Client, tmp_path: Path) -> None:
    kubectl = kubectl_path()
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    env = {"HOME": str(tmp_path)}

    def run(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl, "--kubeconfig", str(config), *args], capture_output=True, text=True, timeout=60, env=env
        )

    for name in ("team", "other"):
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code in (201, 409)
    editor_config = tmp_path / "editor.kubeconfig"
    issued = subprocess.run(
        [
            *(sys.executable, "-m", "protokube", "certs", "issue", "editor", "--data-dir", str(server.data_dir)),
            *("--kubeconfig", str(editor_config), "--server", server.secure_url, "--out", str(tmp_path)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert issued.returncode == 0, issued.stderr
    assert (
        client.post("/api/v1/namespaces/team/serviceaccounts", json={"metadata": {"name": "robot"}}).status_code == 201
    )
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole"}
    bindings = [
        ("editor", "edit", {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "editor"}),
        ("robot", "view", {"kind": "ServiceAccount", "name": "robot", "namespace": "team"}),
    ]
    for name, role, subject in bindings:
        body = {"metadata": {"name": name}, "roleRef": {**ref, "name": role}, "subjects": [subject]}
        assert client.post(f"{RBAC}/namespaces/team/rolebindings", json=body).status_code == 201
    token = run(server.kubeconfig, "create", "token", "robot", "-n", "team").stdout.strip()
    robot_config = server.token_kubeconfig(tmp_path / "robot.kubeconfig", token)
    identities = {"admin": server.kubeconfig, "editor": editor_config, "robot": robot_config}

    def can(who: str, *question: str) -> str:
        return run(identities[who], "auth", "can-i", *question).stdout.strip()

    assert eventually(lambda: can("editor", "create", "deployments", "-n", "team") == "yes")
    assert eventually(lambda: can("robot", "list", "pods", "-n", "team") == "yes")
    matrix = {
        ("create", "deployments.apps", "-n", "team"): ("yes", "yes", "no"),
        ("delete", "pods", "-n", "team"): ("yes", "yes", "no"),
        ("get", "secrets", "-n", "team"): ("yes", "yes", "no"),
        ("list", "pods", "-n", "team"): ("yes", "yes", "yes"),
        ("create", "serviceaccounts/token", "-n", "team"): ("yes", "yes", "no"),
        ("list", "pods", "-n", "other"): ("yes", "no", "no"),
        ("create", "rolebindings", "-n", "team"): ("yes", "no", "no"),
        ("delete", "nodes"): ("yes", "no", "no"),
        ("get", "/healthz"): ("yes", "yes", "yes"),
        ("get", "/api"): ("yes", "yes", "yes"),
        ("get", "/metrics"): ("yes", "no", "no"),
    }
    for question, answers in matrix.items():
        got = tuple(can(who, *question) for who in ("admin", "editor", "robot"))
        assert got == answers, (question, got)
    whoami = run(robot_config, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.stdout == "system:serviceaccount:team:robot", whoami.stderr
    denied = run(robot_config, "get", "secrets", "-n", "team")
    assert denied.returncode != 0
    assert (
        'secrets is forbidden: User "system:serviceaccount:team:robot" cannot list resource "secrets" '
        'in API group "" in the namespace "team"' in denied.stderr
    )
    assert run(editor_config, "create", "configmap", "c", "-n", "team").returncode == 0
    assert run(editor_config, "create", "configmap", "c", "-n", "other").returncode != 0

    # anonymous: the public info only (system:public-info-viewer), not even discovery or can-i
    with server.secure_client() as anonymous:
        for path in ("/healthz", "/livez", "/readyz", "/version"):
            assert anonymous.get(path).status_code == 200, path
        for path in ("/api", "/apis", "/api/v1/namespaces/team/pods", "/metrics"):
            assert anonymous.get(path).status_code == 403, path
        review = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1"}
        review["spec"] = {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "team"}}
        refused = anonymous.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review)
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            'selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "system:anonymous" cannot create '
            'resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope'
        )
