"""RBAC authorization, impersonation and the access reviews, against a server over TLS.

Identities: the admin kubeconfig (a client certificate in system:masters), users with bearer
tokens from --token-auth-file, a client certificate made here with the server's CA, and anonymous
requests. Roles and bindings are made in each test through the admin; the authorizer follows
them through its informers, so each check waits until the grant is seen (as clients of a real
cluster must).
"""

from __future__ import annotations

import datetime
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.gateway.helpers import GatewayProcess, eventually, kubectl_path

TOKENS = {
    "alice-token": ("alice", "u-1", ""),
    "bob-token": ("bob", "u-2", "devs"),
    "eve-token": ("eve", "u-3", ""),
    "wanda-token": ("wanda", "u-4", ""),
}
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SSRR = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
SETTLE = 30.0  # the most a grant may take to reach the authorizer (a ceiling: waits end once it has)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("authz")
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f'{t},{u},{uid},"{g}"\n' for t, (u, uid, g) in TOKENS.items()))
    process = GatewayProcess(data, "--token-auth-file", str(tokens)).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def tls(server: GatewayProcess) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")


@pytest.fixture(scope="module")
def admin(server: GatewayProcess) -> Iterator[httpx.Client]:
    context = ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")
    pki = server.data_dir / "pki"
    context.load_cert_chain(pki / "admin.crt", pki / "admin.key")
    with httpx.Client(base_url=server.secure_url, verify=context, timeout=30) as client:
        yield client


def as_user(server: GatewayProcess, tls: ssl.SSLContext, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.secure_url, verify=tls, timeout=30, headers=headers)


def client_certificate(pki: Path, out: Path, user: str, groups: tuple[str, ...]) -> tuple[Path, Path]:
    """A client certificate for ``user`` in ``groups``, signed by the server's CA."""
    ca_cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject = x509.Name([*names, x509.NameAttribute(NameOID.COMMON_NAME, user)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    cert_path, key_path = out / f"{user}.crt", out / f"{user}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def create(admin: httpx.Client, path: str, body: dict[str, Any]) -> None:
    answer = admin.post(path, json=body)
    assert answer.status_code == 201, answer.text


def role(name: str, rules: list[dict[str, Any]], namespace: str = "") -> dict[str, Any]:
    kind = "Role" if namespace else "ClusterRole"
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "rules": rules}


def binding(name: str, role_kind: str, role_name: str, subjects: list[dict[str, str]], namespace: str = "") -> dict:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": ref,
        "subjects": subjects,
    }


def user(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def eventually_status(client: httpx.Client, method: str, path: str, code: int, **kwargs: Any) -> httpx.Response:
    """The answer once it has ``code`` (grants reach the authorizer through a watch)."""
    deadline = time.monotonic() + SETTLE
    while True:
        answer = client.request(method, path, **kwargs)
        if answer.status_code == code or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def test_anonymous_and_unbound_users_are_forbidden_as_upstream_words_it(
    server: GatewayProcess, tls: ssl.SSLContext
) -> None:
    with as_user(server, tls, None) as anonymous:
        answer = anonymous.get("/api/v1/namespaces/default/secrets")
        assert answer.status_code == 403
        status = answer.json()
        assert status["reason"] == "Forbidden"
        assert status["details"] == {"kind": "secrets"}
        assert status["message"] == (
            'secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" '
            'in the namespace "default"'
        )
    with as_user(server, tls, "eve-token") as eve:
        answer = eve.get("/apis/apps/v1/namespaces/default/deployments/web")
        assert answer.status_code == 403
        assert answer.json()["message"] == (
            'deployments.apps "web" is forbidden: User "eve" cannot get resource "deployments" in API group "apps" '
            'in the namespace "default"'
        )
        assert answer.json()["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
        nodes = eve.delete("/api/v1/nodes")
        assert nodes.json()["message"] == (
            'nodes is forbidden: User "eve" cannot deletecollection resource "nodes" in API group "" '
            "at the cluster scope"
        )
        path = eve.get("/metrics")
        assert path.status_code == 403
        assert path.json()["message"] == 'forbidden: User "eve" cannot get path "/metrics"'
    with as_user(server, tls, "not-a-token") as stranger:
        answer = stranger.get("/api/v1/namespaces")
        assert answer.status_code == 401
        assert answer.json()["reason"] == "Unauthorized"


def test_a_role_binding_grants_its_rules_in_its_namespace_only(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    create(admin, "/api/v1/namespaces", {"metadata": {"name": "team-a"}})
    rules = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create"]}]
    create(admin, f"{RBAC}/namespaces/team-a/roles", role("cm-editor", rules, "team-a"))
    create(
        admin,
        f"{RBAC}/namespaces/team-a/rolebindings",
        binding("alice-cm", "Role", "cm-editor", [user("alice")], "team-a"),
    )
    with as_user(server, tls, "alice-token") as alice:
        listed = eventually_status(alice, "GET", "/api/v1/namespaces/team-a/configmaps", 200)
        assert listed.status_code == 200, listed.text
        made = alice.post("/api/v1/namespaces/team-a/configmaps", json={"metadata": {"name": "c"}, "data": {"a": "b"}})
        assert made.status_code == 201
        # not the verb, not the namespace, not the resource
        assert alice.delete("/api/v1/namespaces/team-a/configmaps/c").status_code == 403
        assert alice.get("/api/v1/namespaces/default/configmaps").status_code == 403
        assert alice.get("/api/v1/namespaces/team-a/secrets").status_code == 403
        # a watch is authorized once, at its start
        with alice.stream(
            "GET", "/api/v1/namespaces/team-a/configmaps", params={"watch": "1", "timeoutSeconds": "1"}
        ) as w:
            assert w.status_code == 200
        with alice.stream("GET", "/api/v1/namespaces/team-a/secrets", params={"watch": "1"}) as w:
            assert w.status_code == 403


def test_resource_names_subresources_and_non_resource_urls(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    rules = [
        {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["default"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["namespaces/status"], "verbs": ["get"]},
        {"nonResourceURLs": ["/version", "/healthz/*", "/metrics/*"], "verbs": ["get"]},
    ]
    create(admin, f"{RBAC}/clusterroles", role("bob-reader", rules))
    create(admin, f"{RBAC}/clusterrolebindings", binding("bob-reader", "ClusterRole", "bob-reader", [user("bob")]))
    with as_user(server, tls, "bob-token") as bob:
        assert eventually_status(bob, "GET", "/version", 200).status_code == 200
        assert bob.get("/api/v1/namespaces/default").status_code == 200
        assert bob.get("/api/v1/namespaces/kube-system").status_code == 403
        assert bob.get("/api/v1/namespaces/kube-system/status").status_code == 200
        assert bob.get("/healthz/ping").status_code == 200
        assert bob.get("/metrics").status_code == 403  # "/metrics/*" does not match "/metrics"
        assert bob.get("/api/v1/namespaces").status_code == 403


def test_a_subresource_wildcard_is_only_star_slash_subresource(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    """``pods/*`` grants no pod subresource (upstream matches ``*``, ``pods/status`` or ``*/status`` only)."""
    rules = [
        {"apiGroups": [""], "resources": ["pods/*"], "verbs": ["get", "patch"]},
        {"apiGroups": [""], "resources": ["*/log"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
    ]
    create(admin, f"{RBAC}/clusterroles", role("wanda-pods", rules))
    create(admin, f"{RBAC}/clusterrolebindings", binding("wanda-pods", "ClusterRole", "wanda-pods", [user("wanda")]))
    with as_user(server, tls, "wanda-token") as wanda:
        assert eventually_status(wanda, "GET", "/api/v1/namespaces/default", 200).status_code == 200
        status = wanda.get("/api/v1/namespaces/default/pods/p/status")
        assert status.status_code == 403, status.text
        assert status.json()["message"] == (
            'pods "p" is forbidden: User "wanda" cannot get resource "pods/status" in API group "" '
            'in the namespace "default"'
        )
        patched = wanda.patch(
            "/api/v1/namespaces/default/pods/p/status",
            content=b"{}",
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 403
        assert wanda.get("/api/v1/namespaces/default/pods/p").status_code == 403
        assert wanda.get("/api/v1/namespaces/default/pods/p/log").status_code == 404  # */log: allowed, no pod
        review = {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "spec": {
                "resourceAttributes": {
                    "namespace": "default",
                    "verb": "get",
                    "resource": "pods",
                    "subresource": "status",
                }
            },
        }
        answer = wanda.post(SSAR, json=review)
        assert answer.status_code == 201, answer.text
        assert answer.json()["status"]["allowed"] is False


def test_a_group_subject_and_a_client_certificate_identity(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client, tmp_path: Path
) -> None:
    rules = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["list"]}]
    create(admin, f"{RBAC}/clusterroles", role("list-all", rules))
    group = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "auditors"}
    create(admin, f"{RBAC}/clusterrolebindings", binding("auditors", "ClusterRole", "list-all", [group]))
    cert, key = client_certificate(server.data_dir / "pki", tmp_path, "carol", ("auditors",))
    context = ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")
    context.load_cert_chain(cert, key)
    with httpx.Client(base_url=server.secure_url, verify=context, timeout=30) as carol:
        assert eventually_status(carol, "GET", "/apis/apps/v1/deployments", 200).status_code == 200
        answer = carol.get("/api/v1/namespaces/default/pods/x")
        assert answer.json()["message"] == (
            'pods "x" is forbidden: User "carol" cannot get resource "pods" in API group "" in the namespace "default"'
        )


def test_self_subject_reviews_answer_for_the_requesting_user(server: GatewayProcess, tls: ssl.SSLContext) -> None:
    # the bootstrap policy's system:basic-user lets every authenticated user review itself
    with as_user(server, tls, "bob-token") as bob:
        me = eventually_status(
            bob, "POST", SSR, 201, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
        assert me.status_code == 201, me.text
        assert me.json()["status"]["userInfo"] == {
            "username": "bob",
            "uid": "u-2",
            "groups": ["devs", "system:authenticated"],
        }
        assert me.json()["metadata"]["creationTimestamp"]
        review = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1"}
        asked = {
            **review,
            "spec": {
                "resourceAttributes": {
                    "verb": "create",
                    "resource": "selfsubjectreviews",
                    "group": "authentication.k8s.io",
                }
            },
        }
        answer = bob.post(SSAR, json=asked).json()
        assert answer["status"] == {
            "allowed": True,
            "reason": 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" '
            'to Group "system:authenticated"',
        }
        denied = {**review, "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}
        assert bob.post(SSAR, json=denied).json()["status"] == {"allowed": False}
        neither = bob.post(SSAR, json=review)
        assert neither.status_code == 422
        assert neither.json()["message"] == (
            # upstream names the decoded review's kind, empty by then (make anchor-diff, against kube-apiserver)
            '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: '
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        )
        rules_review = {
            "kind": "SelfSubjectRulesReview",
            "apiVersion": "authorization.k8s.io/v1",
            "spec": {"namespace": "default"},
        }
        assert "kind" not in neither.json()["details"]
        # the request's fields are recorded in the access review it answers in, as upstream's create handler does
        owned = bob.post(SSAR, json=asked, params={"fieldManager": "asker"}).json()["metadata"]["managedFields"]
        assert [(e["manager"], e["operation"], e["apiVersion"]) for e in owned] == [
            ("asker", "Update", "authorization.k8s.io/v1")
        ]
        assert owned[0]["fieldsV1"]["f:spec"]["f:resourceAttributes"]["f:verb"] == {}
        answered = bob.post(SSRR, json=rules_review).json()
        assert answered["spec"] == {} and "managedFields" not in answered["metadata"]  # a new review: its status
        listed = answered["status"]
        assert {
            "verbs": ["create"],
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["selfsubjectreviews"],
        } in listed["resourceRules"]
        assert listed["incomplete"] is False
        no_namespace = bob.post(SSRR, json={**rules_review, "spec": {}})
        assert no_namespace.status_code == 400
        assert no_namespace.json()["message"] == "no namespace on request"


def test_subject_access_reviews_ask_about_another_user(server: GatewayProcess, admin: httpx.Client) -> None:
    rules = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]
    create(admin, f"{RBAC}/namespaces/default/roles", role("deploy-reader", rules, "default"))
    create(
        admin,
        f"{RBAC}/namespaces/default/rolebindings",
        binding("dave", "Role", "deploy-reader", [user("dave")], "default"),
    )
    asked = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "dave",
            "resourceAttributes": {"namespace": "default", "verb": "get", "group": "apps", "resource": "deployments"},
        },
    }
    answer = eventually_status(admin, "POST", SAR, 201, json=asked)
    deadline = time.monotonic() + SETTLE
    while not answer.json()["status"]["allowed"] and time.monotonic() < deadline:
        answer = admin.post(SAR, json=asked)
    assert answer.json()["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "dave/default" of Role "deploy-reader" to User "dave"',
    }
    missing = {
        **asked,
        "spec": {"user": "dave", "resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}},
    }
    assert admin.post(SAR, json=missing).json()["status"] == {"allowed": False}
    nobody = admin.post(SAR, json={**asked, "spec": {"resourceAttributes": {"verb": "get"}}})
    assert nobody.status_code == 422
    assert nobody.json()["message"] == (
        '.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": '
        "at least one of user or group must be specified"
    )
    local = "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"
    other = {
        **asked,
        "kind": "LocalSubjectAccessReview",
        "spec": {**asked["spec"], "resourceAttributes": {"namespace": "kube-system", "verb": "get"}},
    }
    wrong = admin.post(local, json=other)
    assert wrong.status_code == 422
    assert (
        'spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace'
        in wrong.json()["message"]
    )
    assert admin.post(local, json={**asked, "kind": "LocalSubjectAccessReview"}).json()["status"]["allowed"] is True
    # a missing role is named in the reason
    create(admin, f"{RBAC}/clusterrolebindings", binding("ghost", "ClusterRole", "no-such-role", [user("dave")]))
    ghost = eventually(lambda: admin.post(SAR, json=missing).json()["status"].get("reason"), SETTLE)  # once cached
    assert ghost == 'RBAC: clusterrole.rbac.authorization.k8s.io "no-such-role" not found'


def test_impersonation_needs_the_impersonate_verb(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    with as_user(server, tls, "eve-token") as eve:
        answer = eve.get("/api/v1/namespaces", headers={"Impersonate-User": "admin-wannabe"})
        assert answer.status_code == 403
        assert answer.json()["message"] == (
            'users "admin-wannabe" is forbidden: User "eve" cannot impersonate resource "users" in API group "" '
            "at the cluster scope"
        )
    rules = [{"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"]}]
    create(admin, f"{RBAC}/clusterroles", role("impersonator", rules))
    create(
        admin, f"{RBAC}/clusterrolebindings", binding("eve-impersonates", "ClusterRole", "impersonator", [user("eve")])
    )
    with as_user(server, tls, "eve-token") as eve:
        headers = {"Impersonate-User": "root", "Impersonate-Group": "system:masters"}
        assert eventually_status(eve, "GET", "/api/v1/namespaces", 200, headers=headers).status_code == 200
        # the impersonated user's own permissions apply
        nobody = eve.get("/api/v1/namespaces", headers={"Impersonate-User": "nobody"})
        assert nobody.status_code == 403
        assert 'User "nobody" cannot list resource "namespaces"' in nobody.json()["message"]


@pytest.mark.skipif(kubectl_path() is None, reason="kubectl is not installed")
def test_kubectl_auth_can_i_whoami_and_as(server: GatewayProcess, admin: httpx.Client, tmp_path: Path) -> None:
    kubectl = [kubectl_path() or "kubectl", "--kubeconfig", str(server.kubeconfig)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*kubectl, *args], capture_output=True, text=True, timeout=60, env={"HOME": str(tmp_path)}
        )

    assert run("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    whoami = run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.stdout == "protokube-admin", whoami.stderr
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            "verbs": ["create"],
        },
    ]
    create(admin, f"{RBAC}/namespaces/default/roles", role("pod-reader", rules, "default"))
    create(
        admin,
        f"{RBAC}/namespaces/default/rolebindings",
        binding("frank", "Role", "pod-reader", [user("frank")], "default"),
    )
    deadline = time.monotonic() + SETTLE
    while run("auth", "can-i", "list", "pods", "--as", "frank").stdout.strip() != "yes" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert run("auth", "can-i", "list", "pods", "--as", "frank").stdout.strip() == "yes"
    assert run("auth", "can-i", "delete", "pods", "--as", "frank").stdout.strip() == "no"
    listed = run("auth", "can-i", "--list", "--as", "frank", "-n", "default").stdout
    assert any(line.split()[:1] == ["pods"] and "[get list]" in line for line in listed.splitlines()), listed
    denied = run("get", "secrets", "--as", "frank")
    assert denied.returncode != 0
    assert (
        'secrets is forbidden: User "frank" cannot list resource "secrets" in API group "" in the namespace "default"'
        in denied.stderr
    )
    whoami = run("auth", "whoami", "--as", "frank", "--as-group", "testers", "-o", "jsonpath={.status.userInfo.groups}")
    # every authenticated user may ask who they are (system:basic-user)
    assert whoami.stdout == '["testers","system:authenticated"]', whoami.stderr


def test_always_allow_mode(tmp_path: Path) -> None:
    process = GatewayProcess(tmp_path, "--authorization-mode", "AlwaysAllow").start()
    try:
        context = ssl.create_default_context(cafile=tmp_path / "pki" / "ca.crt")
        with httpx.Client(base_url=process.secure_url, verify=context, timeout=30) as anonymous:
            assert anonymous.get("/api/v1/namespaces").status_code == 200
    finally:
        process.kill()
    bad = subprocess.run(
        [*process.command, "serve", "--authorization-mode", "Webhook", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "authorization-mode 'Webhook' is not supported" in bad.stderr


def test_escalation_prevention_for_roles_and_bindings(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    create(admin, "/api/v1/namespaces", {"metadata": {"name": "esc"}})
    manage = [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["roles", "rolebindings"],
            "verbs": ["create", "update", "get"],
        },
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
    ]
    create(admin, f"{RBAC}/namespaces/esc/roles", role("manager", manage, "esc"))
    create(
        admin, f"{RBAC}/namespaces/esc/rolebindings", binding("bob-manager", "Role", "manager", [user("bob")], "esc")
    )
    roles = f"{RBAC}/namespaces/esc/roles"
    bindings = f"{RBAC}/namespaces/esc/rolebindings"
    with as_user(server, tls, "bob-token") as bob:
        held = role("reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}], "esc")
        assert eventually_status(bob, "POST", roles, 201, json=held).status_code == 201
        more = role(
            "deleter",
            [
                {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "delete"]},
                {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"], "verbs": ["get"]},
            ],
            "esc",
        )
        refused = bob.post(roles, json=more)
        assert refused.status_code == 403
        assert refused.json()["details"] == {"name": "deleter", "group": "rbac.authorization.k8s.io", "kind": "roles"}
        assert refused.json()["message"] == (
            'roles.rbac.authorization.k8s.io "deleter" is forbidden: '
            'user "bob" (groups=["devs" "system:authenticated"]) '
            "is attempting to grant RBAC permissions not currently held:\n"
            '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n'
            '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}\n'
            '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}'
        )
        # binding a role whose rules bob holds is fine; binding cluster-admin is not
        ok = bob.post(bindings, json=binding("eve-reader", "Role", "reader", [user("eve")], "esc"))
        assert ok.status_code == 201, ok.text
        admin_rules = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
        create(admin, f"{RBAC}/clusterroles", role("everything", admin_rules))
        # refused as not found (404) until the authorizer has the role, then as an escalation
        grab = eventually_status(
            bob, "POST", bindings, 403, json=binding("bob-all", "ClusterRole", "everything", [user("bob")], "esc")
        )
        assert grab.status_code == 403
        assert grab.json()["message"].endswith(
            "is attempting to grant RBAC permissions not currently held:\n"
            '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}'
        )
        missing = bob.post(bindings, json=binding("ghost", "Role", "no-such-role", [user("eve")], "esc"))
        assert missing.status_code == 404
        assert missing.json()["message"] == 'roles.rbac.authorization.k8s.io "no-such-role" not found'
    # with the bind verb on that role bob may bind it; with escalate he may write any role
    grants = [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "resourceNames": ["everything"],
            "verbs": ["bind"],
        },
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]},
    ]
    create(admin, f"{RBAC}/namespaces/esc/roles", role("delegate", grants, "esc"))
    create(admin, bindings, binding("bob-delegate", "Role", "delegate", [user("bob")], "esc"))
    with as_user(server, tls, "bob-token") as bob:
        bound = eventually_status(
            bob, "POST", bindings, 201, json=binding("eve-all", "ClusterRole", "everything", [user("eve")], "esc")
        )
        assert bound.status_code == 201, bound.text
        assert bob.post(roles, json=more).status_code == 201


def test_resource_names_allow_a_list_or_watch_pinned_to_the_name(
    server: GatewayProcess, tls: ssl.SSLContext, admin: httpx.Client
) -> None:
    """A list or watch whose field selector pins metadata.name is authorized for that name, so a
    rule with resourceNames allows it (as upstream's RequestInfo names it)."""
    create(admin, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "pinned"}})
    rules = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"], "resourceNames": ["pinned"]}
    ]
    create(admin, f"{RBAC}/namespaces/default/roles", role("eve-pinned", rules, "default"))
    create(
        admin,
        f"{RBAC}/namespaces/default/rolebindings",
        binding("eve-pinned", "Role", "eve-pinned", [user("eve")], "default"),
    )
    configmaps = "/api/v1/namespaces/default/configmaps"
    with as_user(server, tls, "eve-token") as eve:
        assert eventually_status(eve, "GET", f"{configmaps}/pinned", 200).status_code == 200
        listed = eve.get(configmaps, params={"fieldSelector": "metadata.name=pinned"})
        assert listed.status_code == 200
        assert [item["metadata"]["name"] for item in listed.json()["items"]] == ["pinned"]
        assert (
            eve.get(
                configmaps, params={"fieldSelector": "metadata.name==pinned,metadata.namespace=default"}
            ).status_code
            == 200
        )
        rv = listed.json()["metadata"]["resourceVersion"]
        watched = eve.get(
            configmaps,
            params={
                "fieldSelector": "metadata.name=pinned",
                "watch": "1",
                "resourceVersion": rv,
                "timeoutSeconds": "1",
            },
        )
        assert watched.status_code == 200
        other = eve.get(configmaps, params={"fieldSelector": "metadata.name=other"})
        assert other.status_code == 403
        assert other.json()["message"] == (
            'configmaps "other" is forbidden: User "eve" cannot list resource "configmaps" in API group "" '
            'in the namespace "default"'
        )
        assert eve.get(configmaps).status_code == 403  # no name pinned: a list of everything
        assert eve.get(configmaps, params={"fieldSelector": "metadata.name!=pinned"}).status_code == 403
    admin.delete(f"{RBAC}/namespaces/default/rolebindings/eve-pinned")
    admin.delete(f"{RBAC}/namespaces/default/roles/eve-pinned")
    admin.delete(f"{configmaps}/pinned")
