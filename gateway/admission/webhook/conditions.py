"""A webhook's matchConditions (CEL, gateway/cel): checked when a configuration is written, as
upstream's validation does, and evaluated after the webhook's rules and selectors matched (the
matchconditions package): any false condition skips the webhook; errors without a false one
refuse the request (failurePolicy Fail: 403 naming the errors) or skip the webhook (Ignore)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from celpy import celtypes
from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.cel import CELCompileError, CELEvaluationError, Program, compile, cost, to_cel
from protokube.gateway.cel.admission import authorizer_value, request_map
from protokube.gateway.errors import FieldError
from protokube.gateway.registry.admission import Attributes
from protokube.gateway.syntax import qualified_name_problems

# What upstream declares for webhooks' conditions (no params; namespaceObject is null for them).
VARIABLES = ("object", "oldObject", "request", "namespaceObject", "authorizer")
MAX_CONDITIONS = 64


@dataclass(frozen=True, slots=True)
class Condition:
    name: str
    expression: str
    program: Program | None  # None: it does not compile (``error`` says why)
    error: str = ""


def compiled(conditions: Sequence[Message]) -> tuple[Condition, ...]:
    found = []
    for condition in conditions:
        try:
            found.append(Condition(condition.name, condition.expression, compile(condition.expression, VARIABLES)))
        except CELCompileError as err:
            found.append(Condition(condition.name, condition.expression, None, str(err)))
    return tuple(found)


def validation_errors(conditions: Sequence[Message], field: str) -> list[FieldError]:
    """upstream's validateMatchConditions for webhooks."""
    found: list[FieldError] = []
    if len(conditions) > MAX_CONDITIONS:
        found.append(FieldError.too_many(field, len(conditions), MAX_CONDITIONS))
    names: set[str] = set()
    for i, condition in enumerate(conditions):
        where = f"{field}[{i}]"
        expression = condition.expression.strip()
        if not expression:
            found.append(FieldError.required(f"{where}.expression"))
        else:
            try:
                compile(expression, VARIABLES)
            except CELCompileError as err:
                found.append(FieldError.invalid(f"{where}.expression", expression, str(err)))
        if not condition.name:
            found.append(FieldError.required(f"{where}.name"))
        else:
            problems = qualified_name_problems(condition.name)
            found += [FieldError.invalid(f"{where}.name", condition.name, problem) for problem in problems]
            if condition.name in names:
                found.append(FieldError.duplicate(f"{where}.name", condition.name))
            names.add(condition.name)
    return found


def matches(
    conditions: Sequence[Condition],
    fail: bool,
    attributes: Attributes,
    obj: dict[str, Any] | None,
    old: dict[str, Any] | None,
    authorizer: Authorizer,
) -> bool:
    """Whether the webhook is called; raises upstream's Forbidden when a condition erred and none
    was false under failurePolicy Fail. Within a runtime cost budget when run with a meter
    (``cost.offloaded``): each expression's per-call limit, all of them RUNTIME_BUDGET."""
    activation = {
        "object": to_cel(obj),
        "oldObject": to_cel(old),
        "request": to_cel(request_map(attributes)),
        "namespaceObject": to_cel(None),
        "authorizer": authorizer_value(authorizer, attributes),
    }
    failures: list[str] = []
    for condition in conditions:
        if condition.program is None:
            failures.append(condition.error)
            continue
        try:
            value = condition.program.evaluate(activation)
        except CELEvaluationError as err:
            value = err
        meter = cost.current()
        if meter is not None and meter.total > cost.RUNTIME_BUDGET:  # no further expression runs
            failures.append(cost.OUT_OF_BUDGET)
            break
        if isinstance(value, CELEvaluationError):
            failures.append(f"expression '{condition.expression}' resulted in error: {value}")
        elif not isinstance(value, bool | celtypes.BoolType):
            failures.append(f"expression '{condition.expression}' resulted in error: no such overload")
        elif not value:
            return False
    if failures and fail:
        resource = attributes.resource
        raise errors.forbidden(resource.group, resource.plural, attributes.name, errors.aggregate(failures))
    return not failures
