"""Which requests a policy's matchConstraints and a binding's matchResources take (upstream's
policy/matching): the namespace and object selectors, then excludeResourceRules, then
resourceRules (none: every request the selectors take), with resourceNames. The rules are the
webhooks' (gateway/admission/webhook/rules.py): matchPolicy Equivalent also takes another served
version of the request's resource, which the policy then sees the objects in."""

from __future__ import annotations

from collections.abc import Mapping

from protokube.gateway.admission.policy.compiled import MatchResources, ResourceRule
from protokube.gateway.admission.webhook.rules import Invocation, invocation
from protokube.gateway.registry.admission import DELETE, Attributes
from protokube.schema.registry import Registry

NAMESPACES = ("", "v1", "namespaces")


def rules_match(
    rules: tuple[ResourceRule, ...], equivalent: bool, attributes: Attributes, registry: Registry
) -> Invocation | None:
    """The resource the rules take the request as (the request's own first), None when not."""
    named = [r for r in rules if not r.names or attributes.name in r.names]
    if not named:  # (no excludeResourceRules, most often): nothing to look for in other versions
        return None
    exact = invocation([r.rule for r in named], False, attributes, registry)
    if exact is not None or not equivalent:
        return exact
    return invocation([r.rule for r in named], True, attributes, registry)


def _labels(obj: object) -> Mapping[str, str]:
    return obj.metadata.labels if obj is not None else {}  # type: ignore[attr-defined]


def matches(
    match: MatchResources, attributes: Attributes, registry: Registry, namespace_labels: Mapping[str, str] | None
) -> Invocation | None:
    """The resource ``match`` takes the request as, None when it does not (``namespace_labels``:
    the labels of the request's namespace, None for a cluster-scoped request)."""
    if match.namespace_selector.requirements:
        if attributes.resource.key == NAMESPACES:
            obj = attributes.old if attributes.operation == DELETE else attributes.obj
            if not match.namespace_selector.matches(_labels(obj)):
                return None
        elif namespace_labels is not None and not match.namespace_selector.matches(namespace_labels):
            return None
    if match.object_selector.requirements:
        selected = match.object_selector.matches
        if not any(obj is not None and selected(_labels(obj)) for obj in (attributes.obj, attributes.old)):
            return None
    if rules_match(match.excluded, match.equivalent, attributes, registry) is not None:
        return None
    if not match.rules:
        return Invocation(attributes.resource, attributes.kind)
    return rules_match(match.rules, match.equivalent, attributes, registry)
