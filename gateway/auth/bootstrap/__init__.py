"""kube-apiserver's bootstrap RBAC policy, as data (policy.yaml): the ClusterRoles, ClusterRoleBindings,
Roles and RoleBindings every cluster starts with, as the RBAC kinds' JSON values, with what the
feature gates that are on add."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

POLICY_FILE = Path(__file__).with_name("policy.yaml")
RBAC_GROUP = "rbac.authorization.k8s.io"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
# kube-controller-manager's roles: system:controller:<its service account in kube-system>.
CONTROLLER_PREFIX = "system:controller:"


@dataclass(frozen=True, slots=True)
class Policy:
    cluster_roles: list[dict[str, Any]]
    cluster_role_bindings: list[dict[str, Any]]
    roles: list[dict[str, Any]]
    role_bindings: list[dict[str, Any]]


def _metadata(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**BOOTSTRAPPING, **(labels or {})}}
    meta["annotations"] = {AUTOUPDATE: "true"}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rule(compact: list[Any] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(compact, dict):
        return {"verbs": compact["verbs"], "nonResourceURLs": compact["urls"]}
    groups, resources, verbs, *names = compact
    rule: dict[str, Any] = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if names:
        rule["resourceNames"] = names[0]
    return rule


def _subject(text: str) -> dict[str, str]:
    kind, _, name = text.partition(" ")
    if kind == "ServiceAccount":
        namespace, _, account = name.partition("/")
        return {"kind": kind, "name": account, "namespace": namespace}
    return {"apiGroup": RBAC_GROUP, "kind": kind, "name": name}


def _binding(name: str, namespace: str, role_kind: str, compact: list[str]) -> dict[str, Any]:
    role, *subjects = compact
    binding: dict[str, Any] = {
        "metadata": _metadata(name, namespace),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role},
    }
    if subjects:
        binding["subjects"] = [_subject(s) for s in subjects]
    return binding


@cache
def policy(gates: frozenset[str] = frozenset()) -> Policy:
    """The policy, with what the feature gates named in ``gates`` (those on) add."""
    # libyaml's loader where PyYAML has it (its wheels do): 8 ms instead of 64 ms on every start
    data = yaml.load(POLICY_FILE.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for gate in sorted(gates & data["featureGated"].keys()):
        added = data["featureGated"][gate]
        for name, rules in added.get("clusterRoleRules", {}).items():
            data["clusterRoles"][name]["rules"] += rules
        for section in ("clusterRoles", "clusterRoleBindings", "controllerRoles"):
            data[section].update(added.get(section, {}))
    cluster_roles = []
    for name, spec in data["clusterRoles"].items():
        role: dict[str, Any] = {"metadata": _metadata(name, labels=spec.get("labels"))}
        if "aggregationRule" in spec:
            role["aggregationRule"] = spec["aggregationRule"]
        role["rules"] = [_rule(r) for r in spec.get("rules", [])]
        cluster_roles.append(role)
    cluster_role_bindings = [
        _binding(name, "", "ClusterRole", compact) for name, compact in data["clusterRoleBindings"].items()
    ]
    for account, rules in data["controllerRoles"].items():
        name = CONTROLLER_PREFIX + account
        cluster_roles.append({"metadata": _metadata(name), "rules": [_rule(r) for r in rules]})
        cluster_role_bindings.append(_binding(name, "", "ClusterRole", [name, f"ServiceAccount kube-system/{account}"]))
    return Policy(
        cluster_roles=cluster_roles,
        cluster_role_bindings=cluster_role_bindings,
        roles=[
            {"metadata": _metadata(name, namespace), "rules": [_rule(r) for r in rules]}
            for namespace, roles in data["namespaceRoles"].items()
            for name, rules in roles.items()
        ],
        role_bindings=[
            _binding(name, namespace, "Role", compact)
            for namespace, bindings in data["namespaceRoleBindings"].items()
            for name, compact in bindings.items()
        ],
    )
