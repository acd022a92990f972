"""rbac.authorization.k8s.io/v1 (k8s.io/kubernetes pkg/apis/rbac/validation): rule shape (verbs;
resources or non-resource URLs, never both), aggregation selectors, binding references and subjects;
a binding's roleRef never changes. Names are path segments (the resource's name rule)."""

from __future__ import annotations

from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError, GoText, go_quote
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import check, go_string_slice, label_selector_errors
from protokube.gateway.registry.validation.meta import name_problems
from protokube.gateway.syntax import dns1123_subdomain_problems

_RBAC = "k8s.io.api.rbac.v1."
GROUP = "rbac.authorization.k8s.io"


def _path_segment_problems(name: str) -> list[str]:
    return name_problems(opts.NAME_RULE_PATH_SEGMENT, name)


def _rule_errors(rule: Message, namespaced: bool, field: str) -> list[FieldError]:
    found = []
    if not rule.verbs:
        found.append(FieldError.required(f"{field}.verbs", "verbs must contain at least one value"))
    if rule.nonResourceURLs:
        urls = GoText(go_string_slice(rule.nonResourceURLs))
        if namespaced:
            found.append(
                FieldError.invalid(
                    f"{field}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource URLs"
                )
            )
        if rule.apiGroups or rule.resources or rule.resourceNames:
            detail = "rules cannot apply to both regular resources and non-resource URLs"
            found.append(FieldError.invalid(f"{field}.nonResourceURLs", urls, detail))
        return found
    if not rule.apiGroups:
        found.append(FieldError.required(f"{field}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.resources:
        found.append(FieldError.required(f"{field}.resources", "resource rules must supply at least one resource"))
    if rule.resourceNames and len(rule.resources) > 1:
        found.append(FieldError.required(f"{field}.resourceNames", "resource names cannot apply to multiple resources"))
    return found


@validator(_RBAC + "Role")
def validate_role(role: Message, old: Message | None) -> list[FieldError]:
    return [error for i, rule in enumerate(role.rules) for error in _rule_errors(rule, True, f"rules[{i}]")]


@validator(_RBAC + "ClusterRole")
def validate_cluster_role(role: Message, old: Message | None) -> list[FieldError]:
    found = [error for i, rule in enumerate(role.rules) for error in _rule_errors(rule, False, f"rules[{i}]")]
    if role.HasField("aggregationRule"):
        selectors = role.aggregationRule.clusterRoleSelectors
        if not selectors:
            detail = "at least one clusterRoleSelector required if aggregationRule is non-nil"
            found.append(FieldError.required("aggregationRule.clusterRoleSelectors", detail))
        for i, selector in enumerate(selectors):
            found += label_selector_errors(selector, f"aggregationRule.clusterRoleSelectors[{i}]")
    return found


def _subject_errors(subject: Message, namespaced: bool, field: str) -> list[FieldError]:
    found = [] if subject.name else [FieldError.required(f"{field}.name")]
    if subject.kind == "ServiceAccount":
        if subject.name:
            found += check(f"{field}.name", subject.name, dns1123_subdomain_problems)
        if subject.apiGroup:
            found.append(FieldError.not_supported(f"{field}.apiGroup", subject.apiGroup, ("",)))
        if not namespaced and not subject.namespace:
            found.append(FieldError.required(f"{field}.namespace"))
    elif subject.kind in ("User", "Group"):
        if not subject.name:
            found.append(
                FieldError.invalid(f"{field}.name", subject.name, f"{subject.kind.lower()} name cannot be empty")
            )
        if subject.apiGroup and subject.apiGroup != GROUP:  # empty: defaulted to the RBAC group
            found.append(FieldError.not_supported(f"{field}.apiGroup", subject.apiGroup, (GROUP,)))
    else:
        found.append(FieldError.not_supported(f"{field}.kind", subject.kind, ("ServiceAccount", "User", "Group")))
    return found


def _binding_errors(
    binding: Message, old: Message | None, kinds: tuple[str, ...], namespaced: bool
) -> list[FieldError]:
    ref = binding.roleRef
    found: list[FieldError] = []
    if ref.apiGroup != GROUP:
        found.append(FieldError.not_supported("roleRef.apiGroup", ref.apiGroup, (GROUP,)))
    if ref.kind not in kinds:
        found.append(FieldError.not_supported("roleRef.kind", ref.kind, kinds))
    if not ref.name:
        found.append(FieldError.required("roleRef.name"))
    else:
        found += check("roleRef.name", ref.name, _path_segment_problems)
    for i, subject in enumerate(binding.subjects):
        found += _subject_errors(subject, namespaced, f"subjects[{i}]")
    if old is not None and (ref.apiGroup, ref.kind, ref.name) != (
        old.roleRef.apiGroup,
        old.roleRef.kind,
        old.roleRef.name,
    ):
        shown = GoText(
            f"rbac.RoleRef{{APIGroup:{go_quote(ref.apiGroup)}, Kind:{go_quote(ref.kind)}, Name:{go_quote(ref.name)}}}"
        )
        found.append(FieldError.invalid("roleRef", shown, "cannot change roleRef"))
    return found


@validator(_RBAC + "RoleBinding")
def validate_role_binding(binding: Message, old: Message | None) -> list[FieldError]:
    return _binding_errors(binding, old, ("Role", "ClusterRole"), True)


@validator(_RBAC + "ClusterRoleBinding")
def validate_cluster_role_binding(binding: Message, old: Message | None) -> list[FieldError]:
    return _binding_errors(binding, old, ("ClusterRole",), False)
