"""RBAC escalation prevention (upstream's policybased storages of pkg/registry/rbac and
ConfirmNoEscalation in pkg/registry/rbac/validation).

A user may write a Role or ClusterRole only with rules they hold themselves, unless they may
``escalate`` it; a ClusterRole with an aggregationRule needs every permission (it can gather
anything). A user may write a RoleBinding or ClusterRoleBinding only to a role whose rules they
hold, unless they may ``bind`` it. Members of system:masters may do everything. Refusals are 403s
naming the rules the user lacks, in upstream's words and format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.auth.rbac import RBAC_GROUP, Obj, RBACIndex
from protokube.gateway.auth.rbac import Attributes as Asked
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes
from protokube.gateway.user import MASTERS, UserInfo
from protokube.schema import jsonencode
from protokube.schema.registry import Resource

ROLES = {"roles": "Role", "clusterroles": "ClusterRole"}
BINDINGS = ("rolebindings", "clusterrolebindings")
# What an aggregationRule needs: upstream's fullAuthority.
FULL_AUTHORITY = (
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
)
# Metadata the garbage collector changes; a binding write changing only these is not checked.
GC_FIELDS = ("ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation")


class RBACEscalation:
    """The admission plugin: refuses role and binding writes that would grant what the user lacks."""

    def __init__(self, authorizer: Authorizer, index: RBACIndex) -> None:
        self.authorizer = authorizer
        self.index = index

    @staticmethod
    def handles(resource: Resource) -> bool:
        """The RBAC group's roles and bindings only."""
        return resource.group == RBAC_GROUP and resource.plural in (*ROLES, *BINDINGS)

    async def validate(self, attributes: Attributes) -> None:
        resource = attributes.resource  # one ``handles`` takes
        if attributes.operation not in (CREATE, UPDATE) or attributes.subresource:
            return
        if MASTERS in attributes.user.groups or attributes.obj is None:
            return
        new = jsonencode.to_dict(attributes.obj)
        if resource.plural in ROLES:
            self._check_role(attributes, new)
        elif resource.plural in BINDINGS:
            old = jsonencode.to_dict(attributes.old) if attributes.old is not None else None
            if old is None or not only_gc_fields_differ(new, old):
                self._check_binding(attributes, new)

    def _allowed(self, user: UserInfo, verb: str, resource: str, name: str, namespace: str) -> bool:
        asked = Asked(user, verb, True, RBAC_GROUP, resource, "", namespace, name)
        return self.authorizer.authorize(asked).allowed

    def _check_role(self, attributes: Attributes, role: dict[str, Any]) -> None:
        user, plural, name = attributes.user, attributes.resource.plural, attributes.name
        if self._allowed(user, "escalate", plural, name, attributes.namespace):
            return
        self._confirm_no_escalation(attributes, role.get("rules") or [])
        if role.get("aggregationRule") and self._missing(user, attributes.namespace, FULL_AUTHORITY)[0]:
            raise errors.forbidden(
                RBAC_GROUP, plural, name, "must have cluster-admin privileges to use the aggregationRule"
            )

    def _check_binding(self, attributes: Attributes, binding: dict[str, Any]) -> None:
        ref = binding.get("roleRef") or {}
        kind, role_name = ref.get("kind", ""), ref.get("name", "")
        resource = {"Role": "roles", "ClusterRole": "clusterroles"}.get(kind)
        if resource and self._allowed(attributes.user, "bind", resource, role_name, attributes.namespace):
            return
        rules = self.index.role_rules(ref, attributes.namespace)
        if rules is None:
            raise errors.new(404, "NotFound", f'{resource or kind.lower()}.{RBAC_GROUP} "{role_name}" not found')
        self._confirm_no_escalation(attributes, rules)

    def _missing(self, user: UserInfo, namespace: str, rules: Iterable[Obj]) -> tuple[list[str], list[str]]:
        """The descriptions of what ``rules`` grant beyond ``user``'s own rules, and why the user's
        rules may be incomplete (upstream's Covers, CompactRules and CompactString)."""
        held = self.authorizer.rules(user, namespace)
        missing = uncovered(held.resource + held.non_resource, rules)
        return sorted({_compact_string(rule) for rule in _compact(missing)}), held.errors

    def _confirm_no_escalation(self, attributes: Attributes, rules: Iterable[Obj]) -> None:
        missing, resolution_errors = self._missing(attributes.user, attributes.namespace, rules)
        if not missing:
            return
        user = attributes.user
        groups = "[" + " ".join(_quote(g) for g in user.groups) + "]"
        message = (
            f"user {_quote(user.name)} (groups={groups}) is attempting to grant RBAC permissions not currently held:\n"
            + "\n".join(missing)
        )
        if resolution_errors:
            message += f"; resolution errors: [{', '.join(resolution_errors)}]"
        raise errors.forbidden(RBAC_GROUP, attributes.resource.plural, attributes.name, message)


def uncovered(owned: Sequence[Obj], rules: Iterable[Obj]) -> list[dict[str, list[str]]]:
    """What ``rules`` grant that ``owned`` rules do not, broken down into single-verb rules
    (upstream's Covers)."""
    return [atom for rule in rules for atom in _breakdown(rule) if not any(_covers(o, atom) for o in owned)]


def only_gc_fields_differ(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether two objects (JSON) differ only in what the garbage collector writes (upstream's
    IsOnlyMutatingGCFields)."""

    def without_gc(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in GC_FIELDS}
        return {**obj, "metadata": meta}

    return without_gc(new) == without_gc(old)


def _breakdown(rule: Obj) -> Iterator[dict[str, list[str]]]:
    """upstream's BreakdownRule: one rule per group, resource, verb (and name); per URL and verb."""
    verbs = rule.get("verbs") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                names = rule.get("resourceNames") or []
                yield from ({**base, "resourceNames": [n]} for n in names) if names else (base,)
    for url in rule.get("nonResourceURLs") or []:
        for verb in verbs:
            yield {"nonResourceURLs": [url], "verbs": [verb]}


def _has_all(values: Iterable[str], wanted: Iterable[str]) -> bool:
    present = set(values)
    return all(w in present for w in wanted)


def _resources_cover(owned: list[str], wanted: list[str]) -> bool:
    if "*" in owned or _has_all(owned, wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        _, slash, subresource = path.partition("/")
        if not slash or f"*/{subresource}" not in owned:
            return False
    return True


def _url_covers(owned: str, path: str) -> bool:
    return owned == path or (owned.endswith("*") and path.startswith(owned.rstrip("*")))


def _covers(owner: Obj, rule: Obj) -> bool:
    """upstream's ruleCovers."""
    verbs = owner.get("verbs") or []
    groups = owner.get("apiGroups") or []
    owner_names = owner.get("resourceNames") or []
    names = rule.get("resourceNames") or []
    return (
        ("*" in verbs or _has_all(verbs, rule.get("verbs") or []))
        and ("*" in groups or _has_all(groups, rule.get("apiGroups") or []))
        and _resources_cover(owner.get("resources") or [], rule.get("resources") or [])
        and all(
            any(_url_covers(o, u) for o in owner.get("nonResourceURLs") or [])
            for u in rule.get("nonResourceURLs") or []
        )
        and (not owner_names if not names else (not owner_names or _has_all(owner_names, names)))
    )


def _compact(rules: list[dict[str, list[str]]]) -> list[dict[str, list[str]]]:
    """upstream's CompactRules: rules of one group and resource (and nothing else) merge their verbs."""
    merged: dict[tuple[str, str], dict[str, list[str]]] = {}
    result = []
    for rule in rules:
        simple = set(rule) == {"apiGroups", "resources", "verbs"}
        if not simple:
            result.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0])
        if key in merged:
            merged[key]["verbs"] += [v for v in rule["verbs"] if v not in merged[key]["verbs"]]
        else:
            merged[key] = {**rule, "verbs": list(rule["verbs"])}
            result.append(merged[key])
    return result


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _compact_string(rule: dict[str, list[str]]) -> str:
    """upstream's CompactString: {APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}."""
    fields = (
        ("APIGroups", "apiGroups"),
        ("Resources", "resources"),
        ("ResourceNames", "resourceNames"),
        ("NonResourceURLs", "nonResourceURLs"),
        ("Verbs", "verbs"),
    )
    parts = [f"{label}:[{' '.join(_quote(v) for v in rule[key])}]" for label, key in fields if rule.get(key)]
    return "{" + ", ".join(parts) + "}"
