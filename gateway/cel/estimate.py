"""Static cost estimation of a CEL expression (cel-go's checker/cost.go, with Kubernetes' size
estimates of schema values): the most an evaluation may cost, from the largest sizes the values
it reads may have — a schema's maxItems, maxProperties and maxLength, else what fits in a request
of MAX_REQUEST_SIZE bytes. Upstream refuses a CRD whose rules may cost too much when it is
written; this is what it compares with its limits.

Costs, as cel-go's: 1 a variable or field read and a call; a tenth of the size of each string a
function traverses (startsWith and endsWith: their argument only), for each four characters of
the pattern when it is a regular expression's (plus one to the text's size, and no call); the size of a list an operator
searches or compares; 10 a list literal and 30 a map literal; a macro costs its range, plus, for
each element the range may hold, its body and 2 for the loop (list-building macros 12).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lark

from protokube.gateway.cel.cost import MAX_REQUEST_SIZE
from protokube.gateway.cel.program import parse

LIST, MAP, OBJECT, STRING, SCALAR, DYN = "list", "map", "object", "string", "scalar", "dyn"
_STRING_FUNCTIONS = frozenset(
    {"contains", "startsWith", "endsWith", "matches", "find", "findAll", "lowerAscii", "upperAscii", "replace"}
    | {"split", "substring", "trim", "indexOf", "lastIndexOf", "charAt", "join", "format", "quote", "size"}
)
_LIST_FUNCTIONS = frozenset({"isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "join"})
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_COMPARISONS = ("relation_lt", "relation_le", "relation_gt", "relation_ge", "relation_eq", "relation_ne")


@dataclass
class Shape:
    """What the estimator knows of a value: its kind, its largest size (elements of a list or map,
    bytes of a string) and, read when needed, the shapes of its parts."""

    kind: str = DYN
    size: int = MAX_REQUEST_SIZE
    element: Callable[[], Shape] | None = None  # a list's items, a map's values
    fields: Callable[[str], Shape] | None = None  # an object's properties

    def item(self) -> Shape:
        if self.kind == STRING and self.element is None:
            return Shape(STRING, self.size)
        return self.element() if self.element is not None else Shape()

    def field(self, name: str) -> Shape:
        if self.fields is not None:
            return self.fields(name)
        return self.item() if self.kind == MAP else Shape()


@dataclass
class _Scope:
    variables: dict[str, Shape] = field(default_factory=dict)

    def bind(self, name: str, shape: Shape) -> _Scope:
        return _Scope({**self.variables, name: shape})


def estimate(expression: str, variables: dict[str, Shape]) -> int:
    """The largest cost of ``expression`` with values of these shapes (it must compile)."""
    return _Estimator().cost(_tree(expression), _Scope(dict(variables)))[0]


@functools.lru_cache(maxsize=4096)
def _tree(expression: str) -> lark.Tree[Any]:
    """The parse tree (read, never changed, here): a CRD's every write estimates all its rules."""
    return parse(expression)


def _tenth(size: int) -> int:
    return math.ceil(size / 10)


class _Estimator:
    def cost(self, node: Any, scope: _Scope) -> tuple[int, Shape]:
        if not isinstance(node, lark.Tree):
            return 0, Shape(SCALAR, 0)
        visit: Callable[[lark.Tree[Any], _Scope], tuple[int, Shape]] | None = getattr(self, f"_{node.data}", None)
        if visit is not None:
            return visit(node, scope)
        if len(node.children) == 1:  # the grammar's chains: expr -> conditionalor -> ... -> primary
            return self.cost(node.children[0], scope)
        return self._operator(node, scope)

    def _all(self, children: list[Any], scope: _Scope) -> tuple[int, list[Shape]]:
        total, shapes = 0, []
        for child in children:
            spent, shape = self.cost(child, scope)
            total += spent
            shapes.append(shape)
        return total, shapes

    # ---- leaves ----------------------------------------------------------------------------------
    def _literal(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        token = node.children[0]
        assert isinstance(token, lark.Token)
        if token.type in ("STRING_LIT", "MLSTRING_LIT", "BYTES_LIT"):
            text = str(token).lstrip("bBrR")
            quotes = 6 if text[:3] in ('"""', "'''") else 2
            return 0, Shape(STRING, len(text) - quotes)
        return 0, Shape(SCALAR, 0)

    def _ident(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        return 1, scope.variables.get(str(node.children[0]), Shape())

    _dot_ident = _ident

    # ---- structure -------------------------------------------------------------------------------
    def _expr(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        if len(node.children) == 1:
            return self.cost(node.children[0], scope)
        condition, _ = self.cost(node.children[0], scope)
        yes, shape = self.cost(node.children[1], scope)
        no, other = self.cost(node.children[2], scope)
        return condition + max(yes, no), shape if yes >= no else other

    def _list_lit(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        items = node.children[0].children if node.children and node.children[0] is not None else []
        spent, shapes = self._all(items, scope)
        element = shapes[0] if shapes else Shape(SCALAR, 0)
        return 10 + spent, Shape(LIST, len(items), lambda: element)

    def _map_lit(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        inits = node.children[0].children if node.children and node.children[0] is not None else []
        spent, shapes = self._all(inits, scope)
        value = shapes[1] if len(shapes) > 1 else Shape(SCALAR, 0)
        return 30 + spent, Shape(MAP, len(inits) // 2, lambda: value)

    def _member_object(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        spent, _ = self._all(node.children[1:], scope)
        return 40 + spent, Shape(OBJECT, 0)

    def _member_dot(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        spent, shape = self.cost(node.children[0], scope)
        return spent + 1, shape.field(str(node.children[1]))

    def _member_index(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        spent, shapes = self._all(node.children, scope)
        return spent + 1, shapes[0].item()

    def _ident_arg(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        name = str(node.children[0])
        args = node.children[1].children if len(node.children) > 1 and node.children[1] is not None else []
        if name == "has":
            spent, _ = self._all(args, scope)
            return spent + 1, Shape(SCALAR, 0)
        spent, shapes = self._all(args, scope)
        return spent + self._call(name, shapes), self._result(name, shapes)

    _dot_ident_arg = _ident_arg

    def _member_dot_arg(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        member, name = node.children[0], str(node.children[1])
        args = node.children[2].children if len(node.children) > 2 and node.children[2] is not None else []
        if name in _MACROS and args:
            return self._macro(name, member, args, scope)
        spent, shapes = self._all([member, *args], scope)
        return spent + self._call(name, shapes), self._result(name, shapes)

    def _macro(self, name: str, member: Any, args: list[Any], scope: _Scope) -> tuple[int, Shape]:
        spent, source = self.cost(member, scope)
        variable = _name(args[0])
        element = Shape(STRING, source.size) if source.kind == MAP and source.fields is None else source.item()
        if source.kind == OBJECT:
            element = Shape(STRING, MAX_REQUEST_SIZE)
        inner = scope.bind(variable, element) if variable else scope
        body, results = self._all(args[1:], inner)
        step = 12 if name in ("map", "filter") else 2
        count = source.size if source.kind in (LIST, MAP, DYN) else 1
        result = Shape(SCALAR, 0)
        if name == "map":
            value = results[-1] if results else Shape()
            result = Shape(LIST, count, lambda: value)
        elif name == "filter":
            result = Shape(LIST, count, lambda: element)
        return spent + count * (body + step), result

    # ---- operators and calls ---------------------------------------------------------------------
    def _operator(self, node: lark.Tree[Any], scope: _Scope) -> tuple[int, Shape]:
        """``a || b`` is [conditionalor, conditionaland]; a binary operator is
        [relation_eq(left), right] (likewise addition_*, multiplication_*); a unary one
        [unary_not, operand]."""
        if node.data in ("conditionalor", "conditionaland"):  # both sides may run
            spent, _ = self._all(node.children, scope)
            return spent, Shape(SCALAR, 0)
        operator, operand = node.children[0], node.children[1]
        spent, shapes = self._all([*operator.children, operand], scope)
        kind = operator.data
        if kind == "relation_in" and len(shapes) == 2:
            container = shapes[1]
            return spent + 1 + (container.size if container.kind == LIST else 0), Shape(SCALAR, 0)
        if kind in _COMPARISONS and len(shapes) == 2:
            return spent + 1 + _comparison(shapes[0], shapes[1]), Shape(SCALAR, 0)
        if kind == "addition_add" and len(shapes) == 2 and shapes[0].kind in (STRING, LIST):
            left, right = shapes
            joined = Shape(left.kind, left.size + right.size, left.element)
            return spent + 1 + _tenth(left.size + right.size), joined
        return spent + 1, Shape(SCALAR, 0)

    @staticmethod
    def _call(name: str, shapes: list[Shape]) -> int:
        receiver = shapes[0] if shapes else Shape(SCALAR, 0)
        if name in _LIST_FUNCTIONS and receiver.kind == LIST:
            return 1 + receiver.size
        if name in _STRING_FUNCTIONS and name != "size":
            traversed = shapes[1:] if name in ("startsWith", "endsWith") else shapes
            sizes = sum(s.size for s in traversed if s.kind in (STRING, DYN))
            if name in ("matches", "find", "findAll") and len(shapes) > 1:
                return _tenth(receiver.size + 1) * math.ceil(shapes[1].size / 4)
            return 1 + _tenth(sizes)
        return 1

    @staticmethod
    def _result(name: str, shapes: list[Shape]) -> Shape:
        receiver = shapes[0] if shapes else Shape(SCALAR, 0)
        if name in ("split", "findAll"):
            return Shape(LIST, receiver.size, lambda: Shape(STRING, receiver.size))
        if name in ("lowerAscii", "upperAscii", "replace", "substring", "trim", "join", "format", "string", "quote"):
            return Shape(STRING, receiver.size)
        if name in ("dyn",) and shapes:
            return receiver
        return Shape(SCALAR, 0)


def _comparison(left: Shape, right: Shape) -> int:
    if left.kind == STRING and right.kind == STRING:
        return _tenth(min(left.size, right.size))
    if left.kind in (LIST, MAP) and right.kind in (LIST, MAP):
        return min(left.size, right.size)
    return 0


def _name(node: Any) -> str:
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data != "ident":
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0])
    return ""
