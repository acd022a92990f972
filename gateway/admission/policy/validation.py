"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (k8s.io/kubernetes pkg/apis/
admissionregistration/validation, 1.32): every CEL expression is compiled when the object is
written, with the variables it may use, and refused with upstream's ``compilation failed: ...``
when it does not compile. An expression calling a Kubernetes CEL function this server does not
have is refused the same way, naming the function — never stored and ignored.

Registered into registry/validation's table by the composition root (gateway/app.py), as the
webhooks' rules are (admission/webhook/validation.py)."""

from __future__ import annotations

import re

from google.protobuf.message import Message

from protokube.gateway.admission.policy.compiled import declared
from protokube.gateway.admission.webhook.validation import rule_errors
from protokube.gateway.cel import CELCompileError, compile
from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import label_selector_errors
from protokube.gateway.syntax import qualified_name_problems

_ADMISSION = "k8s.io.api.admissionregistration.v1."
FAILURE_POLICIES = ("Fail", "Ignore")
REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized")
ACTIONS = ("Audit", "Deny", "Warn")
NOT_FOUND_ACTIONS = ("Allow", "Deny")
_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


def _expression(
    expression: str,
    field: str,
    variables: tuple[str, ...],
    names: list[str],
    required: str = "expression is not specified",
) -> list[FieldError]:
    if not expression.strip():
        return [FieldError.required(field, required)]
    try:
        compile(expression, variables, names)
    except CELCompileError as err:
        return [FieldError.invalid(field, expression, str(err))]
    return []


def _match_resources(match: Message, field: str, need_rules: bool) -> list[FieldError]:
    found: list[FieldError] = []
    if match.HasField("matchPolicy") and match.matchPolicy not in ("Equivalent", "Exact"):
        found.append(FieldError.not_supported(f"{field}.matchPolicy", match.matchPolicy, ["Equivalent", "Exact"]))
    for name in ("namespaceSelector", "objectSelector"):
        found += label_selector_errors(getattr(match, name), f"{field}.{name}")
    for name in ("resourceRules", "excludeResourceRules"):
        for i, named in enumerate(getattr(match, name)):
            found += rule_errors(named.ruleWithOperations, f"{field}.{name}[{i}]")
    if need_rules and not match.resourceRules:
        found.append(FieldError.required(f"{field}.resourceRules"))
    return found


def _validation(
    rule: Message, field: str, variables: tuple[str, ...], names: list[str], has_params: bool
) -> list[FieldError]:
    found = _expression(rule.Expression, f"{field}.expression", variables, names)
    message_expression = rule.messageExpression
    if message_expression and not message_expression.strip():
        found.append(
            FieldError.invalid(f"{field}.messageExpression", message_expression, "must be non-empty if specified")
        )
    elif message_expression.strip():
        found += _expression(
            message_expression, f"{field}.messageExpression", declared(has_params, authorizer=False), names
        )
    message = rule.message
    if message and not message.strip():
        found.append(FieldError.invalid(f"{field}.message", message, "message must be non-empty if specified"))
    elif "\n" in message.strip():
        found.append(FieldError.invalid(f"{field}.message", message, "message must not contain line breaks"))
    if rule.HasField("reason") and rule.reason not in REASONS:
        found.append(FieldError.not_supported(f"{field}.reason", rule.reason, REASONS))
    return found


@validator(_ADMISSION + "ValidatingAdmissionPolicy")
def validate_policy(policy: Message, old: Message | None) -> list[FieldError]:
    spec, found = policy.spec, []
    if spec.HasField("failurePolicy") and spec.failurePolicy not in FAILURE_POLICIES:
        found.append(FieldError.not_supported("spec.failurePolicy", spec.failurePolicy, FAILURE_POLICIES))
    has_params = spec.HasField("paramKind")
    if has_params:
        if not spec.paramKind.apiVersion:
            found.append(FieldError.required("spec.paramKind.apiVersion"))
        if not spec.paramKind.kind:
            found.append(FieldError.required("spec.paramKind.kind"))
    if not spec.HasField("matchConstraints"):
        found.append(FieldError.required("spec.matchConstraints"))
    else:
        found += _match_resources(spec.matchConstraints, "spec.matchConstraints", need_rules=True)
    variables = declared(has_params)
    names = [v.Name for v in spec.variables]
    seen: set[str] = set()
    for i, condition in enumerate(spec.matchConditions):
        field = f"spec.matchConditions[{i}]"
        found += _expression(condition.expression, f"{field}.expression", variables, names, required="")
        if not condition.name:
            found.append(FieldError.required(f"{field}.name"))
        else:
            found += [
                FieldError.invalid(f"{field}.name", condition.name, p) for p in qualified_name_problems(condition.name)
            ]
            if condition.name in seen:
                found.append(FieldError.duplicate(f"{field}.name", condition.name))
            seen.add(condition.name)
    for i, variable in enumerate(spec.variables):
        field = f"spec.variables[{i}]"
        if not variable.Name.strip():
            found.append(FieldError.required(f"{field}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.fullmatch(variable.Name) or variable.Name in _RESERVED:
            found.append(FieldError.invalid(f"{field}.name", variable.Name, "name is not a valid CEL identifier"))
        found += _expression(variable.Expression, f"{field}.expression", variables, names)
    if not spec.validations and not spec.auditAnnotations:
        detail = "validations or auditAnnotations must contain at least one item"
        found += [FieldError.required("spec.validations", detail), FieldError.required("spec.auditAnnotations", detail)]
    for i, rule in enumerate(spec.validations):
        found += _validation(rule, f"spec.validations[{i}]", variables, names, has_params)
    keys: set[str] = set()
    for i, annotation in enumerate(spec.auditAnnotations):
        field = f"spec.auditAnnotations[{i}]"
        if not annotation.key:
            found.append(FieldError.required(f"{field}.key"))
        elif annotation.key in keys:
            found.append(FieldError.duplicate(f"{field}.key", annotation.key))
        keys.add(annotation.key)
        found += _expression(
            annotation.valueExpression, f"{field}.valueExpression", variables, names, "valueExpression is not specified"
        )
    return found


@validator(_ADMISSION + "ValidatingAdmissionPolicyBinding")
def validate_binding(binding: Message, old: Message | None) -> list[FieldError]:
    spec, found = binding.spec, []
    if not spec.policyName:
        found.append(FieldError.required("spec.policyName"))
    if spec.HasField("matchResources"):
        found += _match_resources(spec.matchResources, "spec.matchResources", need_rules=False)
    if spec.HasField("paramRef"):
        ref, field = spec.paramRef, "spec.paramRef"
        if ref.name and ref.HasField("selector"):
            found.append(FieldError.forbidden(f"{field}.name", "name and selector are mutually exclusive"))
        elif not ref.name and not ref.HasField("selector"):
            found.append(FieldError.required(field, "one of name or selector must be specified"))
        if ref.HasField("selector"):
            found += label_selector_errors(ref.selector, f"{field}.selector")
        if not ref.HasField("parameterNotFoundAction"):
            found.append(FieldError.required(f"{field}.parameterNotFoundAction", ""))
        elif ref.parameterNotFoundAction not in NOT_FOUND_ACTIONS:
            found.append(
                FieldError.not_supported(
                    f"{field}.parameterNotFoundAction", ref.parameterNotFoundAction, NOT_FOUND_ACTIONS
                )
            )
    actions = list(spec.validationActions)
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            found.append(FieldError.not_supported(f"spec.validationActions[{i}]", action, ACTIONS))
        if action in actions[:i]:
            found.append(FieldError.duplicate(f"spec.validationActions[{i}]", action))
    if "Deny" in actions and "Warn" in actions:
        found.append(
            FieldError.invalid(
                "spec.validationActions",
                actions,
                "must not contain both Deny and Warn (repeating the same validation failure information in the API "
                "response and headers serves no purpose)",
            )
        )
    if not actions:
        found.append(FieldError.required("spec.validationActions", "at least one validation action is required"))
    return found
