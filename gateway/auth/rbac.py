"""RBAC authorization as upstream evaluates it (plugin/pkg/auth/authorizer/rbac, pkg/registry/rbac/validation).

A request is allowed when a rule of a role bound to the user allows it: ClusterRoleBindings grant
their ClusterRole everywhere; RoleBindings grant their Role or ClusterRole in their namespace. A
rule matches by verb, API group, resource (``resource/subresource``, with ``*`` wildcards) and
resource name, or by non-resource URL (a trailing ``*`` matches a prefix). Roles and bindings are
kept as JSON values (as the RBAC kinds' codec writes them), indexed by namespace and role.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from protokube.gateway.errors import aggregate
from protokube.gateway.user import SERVICE_ACCOUNT_PREFIX, UserInfo

RBAC_GROUP = "rbac.authorization.k8s.io"
Obj = Mapping[str, Any]


# Not frozen: made per request, and a frozen dataclass costs three times as much to make (README).
@dataclass(slots=True)
class Attributes:
    """What a request asks to do (upstream's authorizer.Attributes)."""

    user: UserInfo
    verb: str
    resource_request: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str = ""  # why not, when roles could not be found (sent after the forbidden message)


def _has(values: Iterable[str], wanted: str) -> bool:
    return any(v == "*" or v == wanted for v in values)


def rule_allows(rule: Obj, request: Attributes) -> bool:
    """upstream's RuleAllows."""
    if not _has(rule.get("verbs") or (), request.verb):
        return False
    if not request.resource_request:
        return _url_matches(rule.get("nonResourceURLs") or (), request.path)
    if not _has(rule.get("apiGroups") or (), request.api_group):
        return False
    if not _resource_matches(rule.get("resources") or (), request.resource, request.subresource):
        return False
    names = rule.get("resourceNames") or ()
    return not names or request.name in names


def _resource_matches(resources: Iterable[str], resource: str, subresource: str) -> bool:
    """upstream's ResourceMatches: ``*``, the exact ``resource/subresource``, or ``*/subresource``.

    ``pods/*`` is no wildcard: it matches only a subresource literally named ``*``.
    """
    combined = f"{resource}/{subresource}" if subresource else resource
    return any(
        candidate in ("*", combined) or (subresource and candidate == f"*/{subresource}") for candidate in resources
    )


def _url_matches(urls: Iterable[str], path: str) -> bool:
    return any(url in ("*", path) or (url.endswith("*") and path.startswith(url[:-1])) for url in urls)


def subject_matches(subject: Obj, user: UserInfo, namespace: str) -> bool:
    """upstream's appliesToUser: User and Group by name, ServiceAccount by namespace and name
    (a RoleBinding's service account without a namespace is in the binding's namespace)."""
    kind = subject.get("kind", "")
    if kind == "User":
        return subject.get("name") == user.name
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        account_namespace = subject.get("namespace") or namespace
        return user.name == f"{SERVICE_ACCOUNT_PREFIX}{account_namespace}:{subject.get('name', '')}"
    return False


class RBACIndex:
    """The RBAC objects the authorizer evaluates, by namespace ("" for cluster-scoped) and name."""

    def __init__(self) -> None:
        self.roles: dict[tuple[str, str], Obj] = {}
        self.cluster_roles: dict[str, Obj] = {}
        self.role_bindings: dict[str, dict[str, Obj]] = {}
        self.cluster_role_bindings: dict[str, Obj] = {}

    def clear(self, kind: str) -> None:
        """Forget every object of one kind (before an informer replaces them)."""
        table = {
            "Role": self.roles,
            "ClusterRole": self.cluster_roles,
            "RoleBinding": self.role_bindings,
            "ClusterRoleBinding": self.cluster_role_bindings,
        }[kind]
        table.clear()

    def put(self, kind: str, obj: Obj | None, namespace: str, name: str) -> None:
        """Add, replace (obj) or remove (None) one object."""
        if kind == "Role":
            _set(self.roles, (namespace, name), obj)
        elif kind == "ClusterRole":
            _set(self.cluster_roles, name, obj)
        elif kind == "RoleBinding":
            _set(self.role_bindings.setdefault(namespace, {}), name, obj)
        elif kind == "ClusterRoleBinding":
            _set(self.cluster_role_bindings, name, obj)

    def role_rules(self, ref: Obj, namespace: str) -> list[Obj] | None:
        """The rules of the role a binding in ``namespace`` refers to; None when it does not exist."""
        kind, name = ref.get("kind"), ref.get("name", "")
        role = self.cluster_roles.get(name) if kind == "ClusterRole" else self.roles.get((namespace, name))
        return None if role is None else list(role.get("rules") or ())

    def _role_rules(self, ref: Obj, namespace: str, missing: list[str]) -> list[Obj]:
        rules = self.role_rules(ref, namespace)
        if rules is None:
            what = "clusterrole" if ref.get("kind") == "ClusterRole" else "role"
            missing.append(f'{what}.{RBAC_GROUP} "{ref.get("name", "")}" not found')
            return []
        return rules

    def rules_for(self, user: UserInfo, namespace: str, missing: list[str]) -> Iterator[tuple[Obj, str]]:
        """Every rule granted to ``user`` in ``namespace`` (cluster-wide ones first), with the
        binding that grants it as upstream describes it; roles not found are added to ``missing``."""
        for name, binding in self.cluster_role_bindings.items():
            subject = _subject_for(binding, user, "")
            if subject is not None:
                ref = binding.get("roleRef") or {}
                source = f'ClusterRoleBinding "{name}" of {_role(ref)} to {_describe(subject, "")}'
                for rule in self._role_rules(ref, "", missing):
                    yield rule, source
        if namespace:
            for name, binding in self.role_bindings.get(namespace, {}).items():
                subject = _subject_for(binding, user, namespace)
                if subject is not None:
                    ref = binding.get("roleRef") or {}
                    source = f'RoleBinding "{name}/{namespace}" of {_role(ref)} to {_describe(subject, namespace)}'
                    for rule in self._role_rules(ref, namespace, missing):
                        yield rule, source

    def authorize(self, request: Attributes) -> Decision:
        missing: list[str] = []
        for rule, source in self.rules_for(request.user, request.namespace, missing):
            if rule_allows(rule, request):
                return Decision(True, f"RBAC: allowed by {source}")
        return Decision(False, f"RBAC: {aggregate(missing)}" if missing else "")

    def rules(self, user: UserInfo, namespace: str) -> Rules:
        """What ``user`` may do in ``namespace`` (upstream's RulesFor, for SelfSubjectRulesReview)."""
        missing: list[str] = []
        found = Rules()
        for rule, _ in self.rules_for(user, namespace, missing):
            found.add(rule)
        found.errors += missing
        return found


@dataclass(slots=True)
class Rules:
    """Resource and non-resource rules (as SelfSubjectRulesReview lists them) and why they may be
    incomplete."""

    resource: list[Obj] = field(default_factory=list)
    non_resource: list[Obj] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, rule: Obj) -> None:
        verbs = list(rule.get("verbs") or ())
        if rule.get("resources"):
            found = {"verbs": verbs, "apiGroups": list(rule.get("apiGroups") or ()), "resources": rule["resources"]}
            if rule.get("resourceNames"):
                found["resourceNames"] = rule["resourceNames"]
            self.resource.append(found)
        if rule.get("nonResourceURLs"):
            self.non_resource.append({"verbs": verbs, "nonResourceURLs": rule["nonResourceURLs"]})

    def extend(self, other: Rules) -> None:
        self.resource += other.resource
        self.non_resource += other.non_resource
        self.errors += other.errors


# Every rule: what system:masters and AlwaysAllow may do.
EVERYTHING = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "nonResourceURLs": ["*"]}


def _subject_for(binding: Obj, user: UserInfo, namespace: str) -> Obj | None:
    return next((s for s in binding.get("subjects") or () if subject_matches(s, user, namespace)), None)


def _role(ref: Obj) -> str:
    return f'{ref.get("kind", "")} "{ref.get("name", "")}"'


def _describe(subject: Obj, binding_namespace: str) -> str:
    """upstream's describeSubject: a service account as "name/namespace"."""
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _set(table: dict[Any, Obj], key: Any, obj: Obj | None) -> None:
    if obj is None:
        table.pop(key, None)
    else:
        table[key] = obj
