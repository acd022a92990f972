"""RBAC rule evaluation as upstream's authorizer does it, and its forbidden messages
(plugin/pkg/auth/authorizer/rbac, pkg/endpoints/handlers/responsewriters forbiddenMessage)."""

from __future__ import annotations

import pytest

from protokube.gateway.auth.authorization import Privileged, forbidden, forbidden_message
from protokube.gateway.auth.rbac import Attributes, RBACIndex, rule_allows
from protokube.gateway.user import UserInfo, service_account_user

ALICE = UserInfo("alice", groups=("devs", "system:authenticated"))


def resource(verb: str, group: str, res: str, sub: str = "", ns: str = "", name: str = "") -> Attributes:
    return Attributes(ALICE, verb, True, group, res, sub, ns, name)


RULES = [
    # (rule, request, allowed)
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, resource("get", "", "pods"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, resource("list", "", "pods"), False),
    ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, resource("delete", "apps", "deployments"), True),
    ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, resource("get", "", "pods"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, resource("get", "", "pods", "log"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}, resource("get", "", "pods", "log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}, resource("get", "", "pods", "log"), True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}, resource("get", "", "pods", "status"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}, resource("get", "", "pods"), False),
    (
        {"verbs": ["get"], "apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"]},
        resource("get", "", "cm", name="a"),
        True,
    ),
    (
        {"verbs": ["get"], "apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"]},
        resource("get", "", "cm", name="b"),
        False,
    ),
    (
        {"verbs": ["list"], "apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"]},
        resource("list", "", "cm"),
        False,
    ),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, Attributes(ALICE, "get", False, path="/healthz"), True),
    (
        {"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]},
        Attributes(ALICE, "get", False, path="/healthz/etcd"),
        True,
    ),
    ({"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}, Attributes(ALICE, "get", False, path="/livez"), False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}, Attributes(ALICE, "get", False, path="/api"), False),
]


@pytest.mark.parametrize(("rule", "request_", "allowed"), RULES)
def test_rule_matching(rule: dict, request_: Attributes, allowed: bool) -> None:
    assert rule_allows(rule, request_) is allowed


def index() -> RBACIndex:
    rbac = RBACIndex()
    rbac.put(
        "ClusterRole",
        {"rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]},
        "",
        "view-pods",
    )
    rbac.put(
        "Role", {"rules": [{"verbs": ["create"], "apiGroups": [""], "resources": ["configmaps"]}]}, "dev", "cm-maker"
    )
    rbac.put(
        "RoleBinding",
        {"roleRef": {"kind": "ClusterRole", "name": "view-pods"}, "subjects": [{"kind": "Group", "name": "devs"}]},
        "dev",
        "devs-view",
    )
    rbac.put(
        "RoleBinding",
        {"roleRef": {"kind": "Role", "name": "cm-maker"}, "subjects": [{"kind": "ServiceAccount", "name": "builder"}]},
        "dev",
        "builder-cm",
    )
    rbac.put(
        "ClusterRoleBinding",
        {"roleRef": {"kind": "ClusterRole", "name": "gone"}, "subjects": [{"kind": "User", "name": "alice"}]},
        "",
        "dangling",
    )
    return rbac


def test_bindings_grant_their_roles_where_they_apply() -> None:
    rbac = index()
    assert rbac.authorize(resource("list", "", "pods", ns="dev")).allowed  # a ClusterRole bound in "dev"
    assert not rbac.authorize(resource("list", "", "pods", ns="prod")).allowed  # ... and only there
    assert not rbac.authorize(resource("list", "", "pods")).allowed  # not cluster-wide
    builder = service_account_user("dev", "builder")
    assert rbac.authorize(Attributes(builder, "create", True, "", "configmaps", namespace="dev")).allowed
    other = service_account_user("prod", "builder")
    assert not rbac.authorize(Attributes(other, "create", True, "", "configmaps", namespace="dev")).allowed
    rbac.put("RoleBinding", None, "dev", "devs-view")
    assert not rbac.authorize(resource("list", "", "pods", ns="dev")).allowed


def test_a_missing_role_is_the_reason() -> None:
    decision = index().authorize(resource("delete", "", "nodes", name="n1"))
    assert not decision.allowed and decision.reason == 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'


def test_masters_may_do_everything() -> None:
    masters = UserInfo("root", groups=("system:masters",))
    assert Privileged(RBACIndex()).authorize(Attributes(masters, "delete", True, "", "nodes")).allowed
    assert not Privileged(RBACIndex()).authorize(resource("get", "", "pods", ns="dev")).allowed


def test_forbidden_messages_as_upstream() -> None:
    assert forbidden(resource("list", "", "pods", ns="dev")).status.message == (
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "dev"'
    )
    named = forbidden(resource("get", "apps", "deployments", ns="dev", name="web"))
    assert named.status.message == (
        'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments" in API group "apps" '
        'in the namespace "dev"'
    )
    assert named.code == 403 and named.status.reason == "Forbidden"
    assert forbidden_message(resource("get", "", "nodes", name="n1", sub="proxy")) == (
        'User "alice" cannot get resource "nodes/proxy" in API group "" at the cluster scope'
    )
    assert forbidden(Attributes(ALICE, "get", False, path="/metrics")).status.message == (
        'forbidden: User "alice" cannot get path "/metrics"'
    )
    with_reason = forbidden(resource("list", "", "pods"), "RBAC: role x not found").status.message
    assert with_reason.endswith("at the cluster scope: RBAC: role x not found")


def test_impersonation_needs_the_impersonate_verb_on_each_thing() -> None:
    from protokube.gateway.auth.impersonation import Impersonation
    from protokube.gateway.errors import StatusError

    rbac = RBACIndex()
    rbac.put(
        "ClusterRole",
        {"rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users", "groups"]}]},
        "",
        "impersonator",
    )
    rbac.put(
        "ClusterRoleBinding",
        {"roleRef": {"kind": "ClusterRole", "name": "impersonator"}, "subjects": [{"kind": "User", "name": "alice"}]},
        "",
        "alice-impersonates",
    )
    filter_ = Impersonation(lambda request: None, Privileged(rbac))  # type: ignore[arg-type,return-value]
    bob = filter_.impersonate(ALICE, [("User", "", "bob", "", ""), ("Group", "", "qa", "", "")], groups_given=True)
    assert (bob.name, bob.groups) == ("bob", ("qa", "system:authenticated"))
    with pytest.raises(StatusError) as raised:
        filter_.impersonate(ALICE, [("ServiceAccount", "dev", "builder", "", "")], groups_given=False)
    assert raised.value.status.message == (
        'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" '
        'in API group "" in the namespace "dev"'
    )
    anonymous = filter_.impersonate(ALICE, [("User", "", "system:anonymous", "", "")], groups_given=False)
    assert anonymous.groups == ("system:unauthenticated",)
