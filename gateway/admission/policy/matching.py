"""Which requests a policy's matchConstraints and a binding's matchResources take (upstream's
policy/matching): the namespace and object selectors, then excludeResourceRules, then
resourceRules (none: every request the selectors take), with resourceNames; matchPolicy
Equivalent also takes another served version of the request's resource."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gateway.admission import DELETE, Attributes
from gateway.admission.policy.compiled import MatchResources, ResourceRule
from protokube.schema.registry import Registry, Resource

NAMESPACES = ("", "v1", "namespaces")


def _any(items: Iterable[str], wanted: str) -> bool:
    return any(item in ("*", wanted) for item in items)


def rule_matches(rule: ResourceRule, attributes: Attributes, resource: Resource) -> bool:
    """upstream's rules.Matcher: operation, group, version, resource/subresource and scope."""
    sub = attributes.subresource
    if not _any(rule.operations, attributes.operation) or not _any(rule.groups, resource.group):
        return False
    if not _any(rule.versions, resource.version):
        return False
    if not any(
        res.partition("/")[0] in ("*", resource.plural) and res.partition("/")[2] in ("*", sub)
        for res in rule.resources
    ):
        return False
    is_namespace = resource.key == NAMESPACES
    if rule.scope == "Namespaced":
        return not is_namespace and bool(attributes.namespace)
    if rule.scope == "Cluster":
        return is_namespace or not attributes.namespace
    return True


def _named(rule: ResourceRule, attributes: Attributes) -> bool:
    return not rule.names or attributes.name in rule.names


def rules_match(rules: tuple[ResourceRule, ...], equivalent: bool, attributes: Attributes, registry: Registry) -> bool:
    if any(rule_matches(r, attributes, attributes.resource) and _named(r, attributes) for r in rules):
        return True
    if not equivalent:
        return False
    resource = attributes.resource
    others = [
        r
        for r in registry.resources.values()
        if r.group == resource.group and r.plural == resource.plural and r.version != resource.version
    ]
    return any(rule_matches(r, attributes, other) and _named(r, attributes) for r in rules for other in others)


def _labels(obj: object) -> Mapping[str, str]:
    return obj.metadata.labels if obj is not None else {}  # type: ignore[attr-defined]


def matches(
    match: MatchResources, attributes: Attributes, registry: Registry, namespace_labels: Mapping[str, str] | None
) -> bool:
    """``namespace_labels``: the labels of the request's namespace (None: cluster-scoped)."""
    if match.namespace_selector.requirements:
        if attributes.resource.key == NAMESPACES:
            obj = attributes.old if attributes.operation == DELETE else attributes.obj
            if not match.namespace_selector.matches(_labels(obj)):
                return False
        elif namespace_labels is not None and not match.namespace_selector.matches(namespace_labels):
            return False
    if match.object_selector.requirements:
        selected = match.object_selector.matches
        if not any(obj is not None and selected(_labels(obj)) for obj in (attributes.obj, attributes.old)):
            return False
    if rules_match(match.excluded, match.equivalent, attributes, registry):
        return False
    return not match.rules or rules_match(match.rules, match.equivalent, attributes, registry)
