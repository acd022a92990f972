"""Which FlowSchema a request matches (k8s.io/apiserver pkg/util/flowcontrol/rule.go).

FlowSchemas are tried by ascending matchingPrecedence, ties broken by name; the first one with a
rule that matches wins. A rule matches when one of its subjects matches the user and, for a
resource request, one of its resourceRules (verbs, apiGroups, resources or resource/subresource,
namespaces or clusterScope), for other paths one of its nonResourceRules (verbs, URLs, where
``/foo/*`` or ``/foo`` also covers everything below /foo). A list that is exactly ``["*"]``
matches everything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.user import SERVICE_ACCOUNT_PREFIX, UserInfo

DEFAULT_MATCHING_PRECEDENCE = 1000


def contains(value: str, values: Sequence[str]) -> bool:
    return (len(values) == 1 and values[0] == "*") or value in values


@dataclass(frozen=True, slots=True)
class Subject:
    kind: str
    name: str
    namespace: str = ""  # of a ServiceAccount

    def matches(self, user: UserInfo) -> bool:
        if self.kind == "User":
            return self.name in ("*", user.name)
        if self.kind == "Group":
            return self.name == "*" or self.name in user.groups
        if self.kind == "ServiceAccount":
            prefix = f"{SERVICE_ACCOUNT_PREFIX}{self.namespace}:"
            if self.name == "*":
                return user.name.startswith(prefix)
            return user.name == prefix + self.name
        return False


@dataclass(frozen=True, slots=True)
class ResourceRule:
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    cluster_scope: bool
    namespaces: tuple[str, ...]

    def matches(self, info: RequestInfo) -> bool:
        resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        if not (contains(info.verb, self.verbs) and contains(resource, self.resources)):
            return False
        if not contains(info.group, self.api_groups):
            return False
        if not info.namespace:
            return self.cluster_scope
        return contains(info.namespace, self.namespaces)


@dataclass(frozen=True, slots=True)
class NonResourceRule:
    verbs: tuple[str, ...]
    urls: tuple[str, ...]

    def matches(self, info: RequestInfo) -> bool:
        return contains(info.verb, self.verbs) and any(url_matches(url, info.path) for url in self.urls)


def url_matches(pattern: str, path: str) -> bool:
    if pattern in ("*", path):
        return True
    prefix = pattern.removesuffix("*")
    if not prefix.endswith("/"):
        prefix += "/"
    return path.startswith(prefix)


@dataclass(frozen=True, slots=True)
class Rule:
    subjects: tuple[Subject, ...]
    resource_rules: tuple[ResourceRule, ...]
    non_resource_rules: tuple[NonResourceRule, ...]

    def matches(self, user: UserInfo, info: RequestInfo) -> bool:
        if not any(s.matches(user) for s in self.subjects):
            return False
        if info.is_resource_request:
            return any(r.matches(info) for r in self.resource_rules)
        return any(r.matches(info) for r in self.non_resource_rules)


@dataclass(frozen=True, slots=True)
class Schema:
    """A FlowSchema as the filter uses it."""

    name: str
    uid: str
    precedence: int
    level: str
    distinguisher: str  # "ByUser", "ByNamespace" or ""
    rules: tuple[Rule, ...]

    def matches(self, user: UserInfo, info: RequestInfo) -> bool:
        return any(rule.matches(user, info) for rule in self.rules)

    def flow_distinguisher(self, user: UserInfo, info: RequestInfo) -> str:
        if self.distinguisher == "ByUser":
            return user.name
        if self.distinguisher == "ByNamespace":
            return info.namespace
        return ""


def flow_hash(flow_schema: str, distinguisher: str) -> int:
    """upstream's hashFlowID: the first 8 bytes of SHA-256(schema NUL distinguisher), little-endian."""
    digest = hashlib.sha256(flow_schema.encode() + b"\0" + distinguisher.encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _subject(subject: Message) -> Subject:
    if subject.kind == "User":
        return Subject("User", subject.user.name)
    if subject.kind == "Group":
        return Subject("Group", subject.group.name)
    return Subject(subject.kind, subject.serviceAccount.name, subject.serviceAccount.namespace)


def compile_schema(obj: Message) -> Schema:
    """A stored FlowSchema (flowcontrol/v1 message) as a Schema."""
    spec = obj.spec
    rules = tuple(
        Rule(
            tuple(_subject(s) for s in rule.subjects),
            tuple(
                ResourceRule(
                    tuple(r.verbs), tuple(r.apiGroups), tuple(r.resources), r.clusterScope, tuple(r.namespaces)
                )
                for r in rule.resourceRules
            ),
            tuple(NonResourceRule(tuple(r.verbs), tuple(r.nonResourceURLs)) for r in rule.nonResourceRules),
        )
        for rule in spec.rules
    )
    precedence = spec.matchingPrecedence or DEFAULT_MATCHING_PRECEDENCE  # 0 is unset, as in Go
    distinguisher = spec.distinguisherMethod.type if spec.HasField("distinguisherMethod") else ""
    return Schema(
        obj.metadata.name, obj.metadata.uid, precedence, spec.priorityLevelConfiguration.name, distinguisher, rules
    )


def in_matching_order(schemas: Iterable[Schema]) -> list[Schema]:
    return sorted(schemas, key=lambda s: (s.precedence, s.name))
