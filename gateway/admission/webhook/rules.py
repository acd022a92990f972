"""Which requests a webhook takes (k8s.io/apiserver admission/plugin/webhook/predicates):
its rules (operations, apiGroups, apiVersions, resources with ``*``, ``*/*``, ``x/*``, ``*/status``,
scope), matched against the request's resource or, with matchPolicy Equivalent, against another
served version of the same resource; and the exemption of admission's own configurations."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway.registry.admission import Attributes
from protokube.schema.registry import GroupVersionKind, Registry, Resource

ADMISSION_GROUP = "admissionregistration.k8s.io"
# upstream's IsExemptAdmissionConfigurationResource: never sent to webhooks, so that a broken
# webhook cannot lock the cluster out of fixing it.
EXEMPT_KINDS = frozenset(
    {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    }
)
NAMESPACES = ("", "v1", "namespaces")


def exempt(attributes: Attributes) -> bool:
    resource = attributes.resource
    return resource.group == ADMISSION_GROUP and resource.kind in EXEMPT_KINDS


@dataclass(frozen=True, slots=True)
class Rule:
    operations: tuple[str, ...]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[tuple[str, str], ...]  # (resource, subresource) as written: "*" or a name
    scope: str  # "*", "Cluster" or "Namespaced"

    @classmethod
    def of(cls, rule: Message) -> Rule:
        inner = rule.rule
        resources = tuple((r.partition("/")[0], r.partition("/")[2]) for r in inner.resources)
        return cls(
            tuple(rule.operations), tuple(inner.apiGroups), tuple(inner.apiVersions), resources, inner.scope or "*"
        )

    def matches(self, operation: str, resource: Resource, subresource: str, namespace: str) -> bool:
        return (
            self._scope(resource, namespace)
            and _any(self.operations, operation)
            and _any(self.groups, resource.group)
            and _any(self.versions, resource.version)
            and any(res in ("*", resource.plural) and sub in ("*", subresource) for res, sub in self.resources)
        )

    def _scope(self, resource: Resource, namespace: str) -> bool:
        is_namespace = resource.key == NAMESPACES  # namespaces carry their own name as namespace
        if self.scope == "Namespaced":
            return not is_namespace and bool(namespace)
        if self.scope == "Cluster":
            return is_namespace or not namespace
        return True


def _any(items: Iterable[str], wanted: str) -> bool:
    return any(item in ("*", wanted) for item in items)


@dataclass(frozen=True, slots=True)
class Invocation:
    """The resource and kind a webhook is called for (another version than the request's when it
    matched through matchPolicy Equivalent); the kind is that of the objects the webhook is sent:
    the resource's, or a subresource's own (autoscaling/v1 Scale for ``*/scale``)."""

    resource: Resource
    kind: GroupVersionKind


def invocation(
    rules: Sequence[Rule], equivalent: bool, attributes: Attributes, registry: Registry
) -> Invocation | None:
    """The invocation when ``rules`` take the request, None when not; rules in their order, the
    request's own resource first."""
    op, resource, sub, ns = attributes.operation, attributes.resource, attributes.subresource, attributes.namespace
    if any(rule.matches(op, resource, sub, ns) for rule in rules):
        return Invocation(resource, attributes.kind)
    if not equivalent:
        return None
    others = [
        r
        for r in registry.resources.values()
        if r.group == resource.group and r.plural == resource.plural and r.version != resource.version
    ]
    for rule in rules:
        for other in others:
            if (sub == "" or sub in other.subresources) and rule.matches(op, other, sub, ns):
                return Invocation(other, kind_of(other, sub))
    return None


def kind_of(resource: Resource, subresource: str) -> GroupVersionKind:
    """The kind a request on a (sub)resource carries (upstream's KindFor): the subresource's own
    kind when it has one (autoscaling/v1 Scale), else the resource's."""
    found = resource.subresources.get(subresource) if subresource else None
    return found.gvk if found is not None else resource.gvk
