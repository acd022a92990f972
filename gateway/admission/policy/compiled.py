"""A ValidatingAdmissionPolicy and its bindings as the plugin runs them: every expression
compiled once, when the stored object changes (upstream compiles a policy when its informer
sees it). An expression that does not compile — which write validation refuses, so only a policy
stored before would have one — is kept as the policy's configuration error: requests it matches
are denied or let through by its failurePolicy, as upstream does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protokube.gateway.admission.webhook.rules import Rule
from protokube.gateway.cel import CELCompileError, Program, compile
from protokube.gateway.selectors import EVERYTHING, LabelSelector, SelectorError, label_selector_text, parse_labels

Value = dict[str, Any]
BASE_VARIABLES = ("object", "oldObject", "request", "namespaceObject", "variables")


def declared(has_params: bool, authorizer: bool = True) -> tuple[str, ...]:
    """The variables a policy's expressions may use (messageExpression has no authorizer)."""
    return (*BASE_VARIABLES, *(("params",) if has_params else ()), *(("authorizer",) if authorizer else ()))


def selector(value: Value | None) -> LabelSelector:
    """A metav1.LabelSelector (JSON): nil and {} select everything."""
    text = label_selector_text(value)
    return parse_labels(text) if text else EVERYTHING


@dataclass(frozen=True)
class ResourceRule:
    """A NamedRuleWithOperations: a webhook's rule, and the names it is limited to (none: all)."""

    rule: Rule
    names: tuple[str, ...]

    @classmethod
    def of(cls, value: Value) -> ResourceRule:
        resources = tuple((r.partition("/")[0], r.partition("/")[2]) for r in value.get("resources") or ())
        rule = Rule(
            tuple(value.get("operations") or ()),
            tuple(value.get("apiGroups") or ()),
            tuple(value.get("apiVersions") or ()),
            resources,
            value.get("scope") or "*",
        )
        return cls(rule, tuple(value.get("resourceNames") or ()))


@dataclass(frozen=True)
class MatchResources:
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    rules: tuple[ResourceRule, ...]
    excluded: tuple[ResourceRule, ...]
    equivalent: bool  # matchPolicy Equivalent (the default) rather than Exact

    @classmethod
    def of(cls, value: Value | None) -> MatchResources | None:
        if value is None:
            return None
        return cls(
            selector(value.get("namespaceSelector")),
            selector(value.get("objectSelector")),
            tuple(ResourceRule.of(r) for r in value.get("resourceRules") or ()),
            tuple(ResourceRule.of(r) for r in value.get("excludeResourceRules") or ()),
            (value.get("matchPolicy") or "Equivalent") == "Equivalent",
        )


@dataclass(frozen=True)
class Validation:
    expression: str
    program: Program
    message: str
    message_program: Program | None
    reason: str


@dataclass
class Policy:
    name: str
    generation: int
    fail: bool  # failurePolicy Fail (the default) rather than Ignore
    param_kind: tuple[str, str] | None  # (apiVersion, kind)
    match: MatchResources | None
    conditions: tuple[tuple[str, Program], ...] = ()
    variables: tuple[tuple[str, Program], ...] = ()
    validations: tuple[Validation, ...] = ()
    audit_annotations: tuple[Program, ...] = ()
    error: str = ""  # a configuration error: what does not compile
    uses: frozenset[str] = frozenset()  # the variables its expressions read


@dataclass(frozen=True)
class ParamRef:
    name: str
    namespace: str
    selector: LabelSelector | None
    deny_when_missing: bool  # parameterNotFoundAction Deny


@dataclass(frozen=True)
class Binding:
    name: str
    policy: str
    actions: tuple[str, ...]
    param_ref: ParamRef | None
    match: MatchResources | None
    error: str = ""


@dataclass
class PolicySet:
    """The policies with their bindings, by policy name."""

    policies: dict[str, Policy] = field(default_factory=dict)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)


def compile_policy(value: Value) -> Policy:
    meta, spec = value.get("metadata") or {}, value.get("spec") or {}
    kind = spec.get("paramKind")
    param_kind = (kind.get("apiVersion") or "", kind.get("kind") or "") if kind else None
    try:
        match = MatchResources.of(spec.get("matchConstraints"))
    except SelectorError as err:
        match, error = None, f"failed to compile matchConstraints: {err}"
    else:
        error = ""
    policy = Policy(
        meta.get("name", ""),
        int(meta.get("generation") or 0),
        spec.get("failurePolicy") != "Ignore",
        param_kind,
        match,
        error=error,
    )
    names = [v.get("name", "") for v in spec.get("variables") or ()]
    full, message_vars = declared(param_kind is not None), declared(param_kind is not None, authorizer=False)
    try:
        policy.variables = tuple(_named(v, full, names) for v in spec.get("variables") or ())
        policy.conditions = tuple(_named(c, full, names) for c in spec.get("matchConditions") or ())
        policy.validations = tuple(_validation(v, full, message_vars, names) for v in spec.get("validations") or ())
        policy.audit_annotations = tuple(
            compile(a.get("valueExpression", ""), full, names) for a in spec.get("auditAnnotations") or ()
        )
    except CELCompileError as err:
        policy.error = str(err)
    programs = [
        *(p for _, p in policy.variables),
        *(p for _, p in policy.conditions),
        *(v.program for v in policy.validations),
        *(v.message_program for v in policy.validations if v.message_program is not None),
        *policy.audit_annotations,
    ]
    policy.uses = frozenset().union(*(p.names for p in programs))
    return policy


def _named(value: Value, variables: tuple[str, ...], names: list[str]) -> tuple[str, Program]:
    """A matchCondition or a variable: its name and its compiled expression."""
    return value.get("name", ""), compile(value.get("expression", ""), variables, names)


def _validation(value: Value, full: tuple[str, ...], message_vars: tuple[str, ...], names: list[str]) -> Validation:
    expression = value.get("expression", "")
    message_expression = value.get("messageExpression") or ""
    return Validation(
        expression,
        compile(expression, full, names),
        value.get("message") or "",
        compile(message_expression, message_vars, names) if message_expression else None,
        value.get("reason") or "",
    )


def compile_binding(value: Value) -> Binding:
    meta, spec = value.get("metadata") or {}, value.get("spec") or {}
    name = meta.get("name", "")
    ref, error = None, ""
    try:
        match = MatchResources.of(spec.get("matchResources"))
        raw = spec.get("paramRef")
        if raw is not None:
            chosen = raw.get("selector")
            ref = ParamRef(
                raw.get("name") or "",
                raw.get("namespace") or "",
                selector(chosen) if chosen is not None else None,
                raw.get("parameterNotFoundAction") == "Deny",
            )
    except SelectorError as err:
        match, error = None, f"failed to compile matchResources: {err}"
    return Binding(name, spec.get("policyName", ""), tuple(spec.get("validationActions") or ()), ref, match, error)
