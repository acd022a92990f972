"""The estimated cost of a CRD schema's x-kubernetes-validations, checked when the CRD is written
(apiextensions-apiserver's validation.go with its CELSchemaContext, 1.32): each rule's and
messageExpression's largest cost, times how many values of its schema one object may hold (the
product of maxItems and maxProperties above it, else what fits in a request), may not pass
STATIC_EXPRESSION_LIMIT, and all of them together not STATIC_CRD_LIMIT.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protokube.gateway.apiextensions.schema.node import Node
from protokube.gateway.cel import CELCompileError
from protokube.gateway.cel.cost import MAX_REQUEST_SIZE, STATIC_CRD_LIMIT, STATIC_EXPRESSION_LIMIT
from protokube.gateway.cel.estimate import DYN, LIST, MAP, OBJECT, SCALAR, STRING, Shape, estimate
from protokube.gateway.errors import FieldError

# The JSON sizes of formatted strings (apiserver/pkg/cel: MaxDurationSizeJSON, JSONDateSize, MaxDatetimeSizeJSON).
FORMAT_SIZES = {"duration": 32, "date": 10, "date-time": 32}
_MIN_JSON_SIZE = {"string": 2, "integer": 1, "number": 1, "boolean": 4, "object": 2, "array": 2}
MOST_EXPENSIVE = 4  # the rules named when the total is too high
HINT = (
    "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, "
    "and strings are declared)"
)


def shape(node: Node) -> Shape:
    """The largest value ``node``'s schema allows, as the estimator sees it."""
    if node.type == "array":
        items = node.items
        count = node.max_items if node.max_items is not None else _fitting(_min_size(items), 1)
        return Shape(LIST, max(count, 0), (lambda: shape(items)) if items is not None else None)
    if node.type == "object":
        additional = node.additional
        if additional is not None:
            count = node.max_properties if node.max_properties is not None else _fitting(_min_size(additional), 6)
            return Shape(MAP, max(count, 0), lambda: shape(additional))
        if node.properties:
            properties = node.properties
            return Shape(OBJECT, len(properties), fields=lambda name: _property(properties, name))
        return Shape()
    if node.type == "string":
        return Shape(STRING, _string_size(node))
    if node.int_or_string:
        return Shape(STRING, MAX_REQUEST_SIZE - 2)
    if node.type:
        return Shape(SCALAR, 0)
    return Shape(DYN)


def _property(properties: dict[str, Node], name: str) -> Shape:
    return shape(properties[name]) if name in properties else Shape()


def _string_size(node: Node) -> int:
    if node.max_length is not None:
        return 4 * max(node.max_length, 0)  # maxLength counts characters, of up to 4 bytes each
    if node.enum:
        return max((len(v) for v in node.enum if isinstance(v, str)), default=0)
    return FORMAT_SIZES.get(node.format, MAX_REQUEST_SIZE - 2)


def _min_size(node: Node | None) -> int:
    return _MIN_JSON_SIZE.get(node.type, 1) if node is not None else 1


def _fitting(min_size: int, separator: int) -> int:
    """How many values of ``min_size`` bytes a request holds (upstream's estimateMax*FromMinSize)."""
    return (MAX_REQUEST_SIZE - 2) // (min_size + separator)


def _cardinality(node: Node) -> int:
    """How many values each value of ``node`` may hold of its items or map values."""
    if node.type == "array":
        return node.max_items if node.max_items is not None else _fitting(_min_size(node.items), 1)
    if node.type == "object" and node.additional is not None:
        if node.max_properties is not None:
            return node.max_properties
        return _fitting(_min_size(node.additional), 6)
    return 1


@dataclass
class _Total:
    total: int = 0
    expensive: list[tuple[int, str]] = field(default_factory=list)

    def observe(self, path: str, cost: int) -> None:
        self.total += cost
        if cost < STATIC_CRD_LIMIT // 100:  # upstream names only rules of 1% of the limit or more
            return
        self.expensive.append((cost, path))
        self.expensive.sort(key=lambda entry: -entry[0])
        del self.expensive[MOST_EXPENSIVE:]


def cost_errors(root: Node, path: str, *, expression_costs: bool = True) -> list[FieldError]:
    """The rules of the schema at ``path`` that may cost too much (unless not ``expression_costs``:
    a stored version's unchanged schema), and the total if it does."""
    found: list[FieldError] = []
    total = _Total()
    stack = [(root, path, 1)]
    while stack:
        node, where, cardinality = stack.pop()
        _rules(node, where, cardinality, total, found if expression_costs else [])
        for name, sub in reversed(node.properties.items()):
            stack.append((sub, f"{where}.properties[{name}]", cardinality))
        inner = cardinality * _cardinality(node)
        if node.additional is not None:
            stack.append((node.additional, f"{where}.additionalProperties", inner))
        if node.items is not None:
            stack.append((node.items, f"{where}.items", inner))
    if total.total > STATIC_CRD_LIMIT:
        for _, where in total.expensive:
            found.append(
                FieldError.forbidden(
                    where, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
                )
            )
        name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        found.append(FieldError.forbidden(path, message(name, total.total, STATIC_CRD_LIMIT)))
    return found


def _rules(node: Node, where: str, cardinality: int, total: _Total, found: list[FieldError]) -> None:
    if not node.rules:
        return
    self_shape = shape(node)
    for i, rule in enumerate(node.rules):
        for key, name in (("rule", "estimated rule cost"), ("messageExpression", "estimated messageExpression cost")):
            expression = rule.get(key)
            if not expression:
                continue
            try:
                cost = estimate(expression, {"self": self_shape, "oldSelf": self_shape}) * cardinality
            except CELCompileError:  # reported by compile_errors
                continue
            at = f"{where}.x-kubernetes-validations[{i}].{key}"
            if cost > STATIC_EXPRESSION_LIMIT:
                found.append(FieldError.forbidden(at, message(name, cost, STATIC_EXPRESSION_LIMIT)))
            total.observe(at, cost)


def message(name: str, cost: int, limit: int) -> str:
    """upstream's getCostErrorMessage."""
    factor = cost / limit
    if factor > 100:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return f"{name} exceeds budget by factor of {shown} {HINT}"
