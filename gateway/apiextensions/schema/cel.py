"""x-kubernetes-validations: CEL rules of a CRD's schema, compiled when the CRD is written and
evaluated on every write of a custom object (upstream's pkg/apiserver/schema/cel), on gateway/cel:
cel-python with the Kubernetes CEL libraries written there (lists, strings, regex, url, quantity,
ip/cidr). A rule calling a function that is not available is refused when the CRD is written,
naming the function — never accepted and ignored.
"""

from __future__ import annotations

from typing import Any

import orjson
from celpy import celtypes

from protokube.gateway.apiextensions.schema.node import Node
from protokube.gateway.cel import CELCompileError, CELEvaluationError, Program, compile, cost
from protokube.gateway.cel.values import to_cel
from protokube.gateway.errors import FieldError

VARIABLES = ("self", "oldSelf")
REASONS = {
    "FieldValueInvalid": "FieldValueInvalid",
    "FieldValueForbidden": "FieldValueForbidden",
    "FieldValueRequired": "FieldValueRequired",
    "FieldValueDuplicate": "FieldValueDuplicate",
}


def _program(expression: str) -> Program:
    return compile(expression, VARIABLES)


def compile_errors(props: dict[str, Any], path: str) -> list[FieldError]:
    """What is wrong with the rules of one schema node (it is checked at every level)."""
    found: list[FieldError] = []
    for i, rule in enumerate(props.get("x-kubernetes-validations") or ()):
        where = f"{path}.x-kubernetes-validations[{i}]"
        text = rule.get("rule") or ""
        if not text:
            found.append(FieldError.required(f"{where}.rule", ""))
            continue
        for key in ("rule", "messageExpression"):
            expression = rule.get(key)
            if not expression:
                continue
            try:
                _program(expression)
            except CELCompileError as err:
                found.append(FieldError.invalid(f"{where}.{key}", expression, str(err)))
        reason = rule.get("reason")
        if reason and reason not in REASONS:
            found.append(FieldError.not_supported(f"{where}.reason", reason, list(REASONS)))
    return found


class _OutOfBudget(Exception):
    """No further rule runs: the object's cost budget is spent, or one rule went past its limit."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(error.detail)
        self.error = error


def evaluate(node: Node, value: Any, old: Any, path: str = "") -> list[FieldError]:
    """Every failed rule in ``value`` and below (``old``: the stored value, for transition rules).

    As upstream, the rules of one object share a runtime cost budget (cost.RUNTIME_BUDGET) and
    each rule has its own limit (cost.PER_CALL_LIMIT), when the work runs with a meter (see
    ``cost.offloaded``): once either is exceeded no further rule runs. Values whose schema has no
    rule below are not walked."""
    found: list[FieldError] = []
    try:
        _Walk().evaluate(node, value, old, path, found)
    except _OutOfBudget as stop:
        found.append(stop.error)
    return found


def has_rules(node: Node) -> bool:
    """Whether ``node`` or a schema below it has rules."""
    return _Walk().ruled(node)


class _Walk:
    def __init__(self) -> None:
        self._ruled: dict[int, bool] = {}  # by id(node): nodes live as long as the walk

    def ruled(self, node: Node) -> bool:
        """Whether ``node`` or a schema below it has rules."""
        known = self._ruled.get(id(node))
        if known is None:
            below = [*node.properties.values(), node.items, node.additional]
            known = bool(node.rules) or any(sub is not None and self.ruled(sub) for sub in below)
            self._ruled[id(node)] = known
        return known

    def evaluate(self, node: Node, value: Any, old: Any, path: str, found: list[FieldError]) -> None:
        if value is None or not self.ruled(node):
            return
        cost.charge(0)  # a moment to stop, or to leave the event loop, between values
        if node.rules:
            found += _rules(node, value, old, path)
        if isinstance(value, dict):
            prefix = f"{path}." if path else ""
            old_map = old if isinstance(old, dict) else {}
            for key, item in value.items():
                sub = node.properties.get(key) or node.additional
                if sub is not None:
                    self.evaluate(sub, item, old_map.get(key), f"{prefix}{key}", found)
        elif isinstance(value, list) and node.items is not None and self.ruled(node.items):
            old_items = _correlatable(node, old)
            for i, item in enumerate(value):
                self.evaluate(node.items, item, old_items.get(_map_key(node, item)), f"{path}[{i}]", found)


def _rules(node: Node, value: Any, old: Any, path: str) -> list[FieldError]:
    """The failed rules of one value: its activation is made once, for all its rules."""
    found: list[FieldError] = []
    activation = {"self": to_cel(value)}
    if old is not None:
        activation["oldSelf"] = to_cel(old)
    meter = cost.current()
    for rule in node.rules:
        transition = "oldSelf" in rule.get("rule", "")
        if transition and old is None:
            continue  # transition rules run only on updates of a value that existed
        if meter is not None and meter.total >= cost.RUNTIME_BUDGET:  # upstream: no budget left
            raise _OutOfBudget(FieldError.invalid(path, node.type or "object", cost.OUT_OF_BUDGET))
        failed = _run(rule, node, activation, path)
        if meter is not None and meter.total > cost.RUNTIME_BUDGET:  # this rule cost more than was left
            raise _OutOfBudget(FieldError.invalid(path, node.type or "object", cost.OUT_OF_BUDGET))
        found += failed
    return found


def _correlatable(node: Node, old: Any) -> dict[tuple[Any, ...], Any]:
    """The old items a new item's transition rules see: those of a map list with the same keys
    (upstream correlates no other list's items, so their transition rules do not run)."""
    if node.list_type != "map" or not node.list_map_keys or not isinstance(old, list):
        return {}
    return {_map_key(node, item): item for item in old if isinstance(item, dict)}


def _map_key(node: Node, item: Any) -> tuple[Any, ...]:
    if not isinstance(item, dict) or node.list_type != "map":
        return ()
    return tuple(orjson.dumps(item.get(key)) for key in node.list_map_keys)


def _run(rule: dict[str, Any], node: Node, activation: dict[str, Any], path: str) -> list[FieldError]:
    where = path + (rule.get("fieldPath") or "") if path or rule.get("fieldPath") else path
    where = where.lstrip(".")
    shown = node.type or "object"
    try:
        result = _program(rule["rule"]).evaluate(activation)
    except CELEvaluationError as err:
        if str(err).startswith(cost.COST_LIMIT_EXCEEDED):
            detail = f"'{err}': no further validation rules will be run due to call cost exceeds limit for rule: "
            raise _OutOfBudget(FieldError.invalid(path, shown, detail + _rule_text(rule))) from None
        return [FieldError.invalid(where, shown, f"{rule['rule']}: {err}")]
    except CELCompileError as err:  # a CRD stored before its check
        return [FieldError.invalid(where, shown, f"{rule['rule']}: {err}")]
    if isinstance(result, bool | celtypes.BoolType) and result:
        return []
    message = _message(rule, activation)
    reason = rule.get("reason") or "FieldValueInvalid"
    if reason == "FieldValueRequired":
        return [FieldError.required(where, message)]
    if reason == "FieldValueForbidden":
        return [FieldError.forbidden(where, message)]
    if reason == "FieldValueDuplicate":
        return [FieldError("FieldValueDuplicate", where, message, shown, True)]
    return [FieldError.invalid(where, shown, message)]


def _rule_text(rule: dict[str, Any]) -> str:
    """How upstream names a rule in errors (ruleErrorString): its message, else the rule."""
    return (rule.get("message") or "").strip() or rule.get("rule", "").strip()


def _message(rule: dict[str, Any], activation: dict[str, Any]) -> str:
    """messageExpression's string, else message, else upstream's "failed rule: RULE"."""
    expression = rule.get("messageExpression")
    if expression:
        try:
            text = _program(expression).evaluate(activation)
        except (CELEvaluationError, CELCompileError):
            text = None
        if isinstance(text, str) and text.strip():
            return str(text)
    return rule.get("message") or f"failed rule: {rule['rule']}"
