"""What the transpiled code of a program calls, charging the meter of the evaluation (cost.py):
cel-python's transpiler writes every call as ``celpy.evaluation.<function>``,
``celpy.evaluation.k8s.<function>`` (this package's library) or ``operator.<function>``, names a
program's own globals resolve. ``names()`` gives those globals: namespaces holding the same
functions, each charging its cost first — nothing of cel-python's is changed.

Costs follow cel-go's: 1 a call, plus a tenth of the size of each string or bytes argument (its
traversal; not the receiver of size, startsWith and endsWith), plus the size of a list or map an
operator compares or searches; 2 a macro iteration; a regular expression (matches, find,
findAll) a tenth of the text's size (plus one) for each four characters of its pattern. all()
stops at its first false and exists() at its first true, as cel-go's do (cel-python's go on).
"""

from __future__ import annotations

import functools
import operator
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import celpy
import celpy.evaluation
from celpy.evaluation import CELEvalError

from protokube.gateway.cel import values
from protokube.gateway.cel.cost import charge
from protokube.gateway.cel.library import exposed_name
from protokube.gateway.cel.regex import FUNCTIONS as REGEX_FUNCTIONS
from protokube.gateway.cel.regex import cost_of

MACROS = ("macro_all", "macro_exists", "macro_exists_one", "macro_filter", "macro_map")
# Functions that walk the lists or maps they are given (equality, membership, the list library).
_TRAVERSING = frozenset(
    {"bool_eq", "bool_ne", "operator_in", "eq", "ne", "contains", "add"}
    | {exposed_name(name) for name in ("_==_", "_!=_", "isSorted", "sum", "max", "indexOf", "lastIndexOf")}
)
_UNCHARGED = frozenset({"result"})  # the transpiler's wrapping of every operand
# What may take an error and still decide (false && error is false); every other function given
# an error answers with it, as cel-go's strict calls do (cel-python's would say "no such overload").
_NON_STRICT = frozenset(
    {"logical_and", "logical_or", "logical_condition"} | {exposed_name(name) for name in ("_&&_", "_||_", "_?_:_")}
)
# Functions whose cost does not grow with their receiver: size() reads a length, startsWith()
# and endsWith() traverse their argument only.
_RECEIVER_FREE = frozenset({"function_size", "function_startsWith", "function_endsWith"})
# Regular expressions cost a traversal of the text for each four characters of the pattern.
_REGEX = frozenset({"function_matches"} | {exposed_name(name) for name in REGEX_FUNCTIONS})
_SIZED = (str, bytes)
_CONTAINERS = (list, dict)


def _cost(args: tuple[Any, ...], containers: bool) -> int:
    cost = 1
    for arg in args:
        if isinstance(arg, _SIZED):
            cost += len(arg) // 10
        elif containers and isinstance(arg, _CONTAINERS):
            cost += len(arg)
    return cost


def _charged(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    containers = name in _TRAVERSING
    first = 1 if name in _RECEIVER_FREE else 0
    regex = name in _REGEX
    strict = name not in _NON_STRICT

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        if strict:
            for arg in args:
                if isinstance(arg, CELEvalError):
                    return arg
        if regex and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
            charge(cost_of(args[0], args[1]))
        else:
            charge(_cost(args[first:], containers))
        return func(*args, **kwargs)

    return call


# The value that ends a macro's loop, as cel-go's loop conditions do (the result is the one of the
# whole loop: false absorbs the errors of all, true those of exists).
_DECISIVE = {"macro_all": False, "macro_exists": True}


def _macro(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    decisive = _DECISIVE.get(name)

    def call(activation: Any, variable: str, expression: Callable[[Any], Any], source: Any) -> Any:
        decided = False

        def step(nested: Any) -> Any:
            nonlocal decided
            charge(2)
            value = expression(nested)
            decided = isinstance(value, celpy.celtypes.BoolType) and bool(value) is decisive
            return value

        def items(outer: Any) -> Iterator[Any]:
            for item in source(outer):
                if decided:
                    return
                yield item

        return func(activation, variable, step, items if decisive is not None else source)

    return call


def _size(container: Any) -> Any:
    """size(): cel-python's function_size, its int made at once (values.INT)."""
    return values.INT(0 if container is None else len(container))


# cel-python's functions that build a wrapper at every call, in place of theirs: its comparisons
# (bool_le is boolean(operator.le)(a, b), a functools.wraps each time), built once, and size().
_PREBUILT: dict[str, Callable[..., Any]] = {
    **{f"bool_{op}": celpy.evaluation.boolean(getattr(operator, op)) for op in ("lt", "le", "gt", "ge", "eq", "ne")},
    "function_size": _size,
}


def _namespace(members: Iterable[tuple[str, Any]]) -> types.SimpleNamespace:
    space = types.SimpleNamespace()
    for name, value in members:
        if name in MACROS:
            value = _macro(value, name)
        elif isinstance(value, types.FunctionType | types.BuiltinFunctionType) and name not in _UNCHARGED:
            value = _charged(value, name)
        setattr(space, name, value)
    return space


@functools.cache
def names() -> dict[str, Any]:
    """The globals a program's code runs with in place of cel-python's ``celpy`` and ``operator``
    (made once the library's functions are registered)."""
    evaluation = _namespace({**vars(celpy.evaluation), **_PREBUILT}.items())
    evaluation.k8s = _namespace(vars(celpy.evaluation.k8s).items())  # type: ignore[attr-defined]
    # The code's literals and int()/uint() conversions, made without cel-python's slow constructors;
    # type(), which the transpiler writes as TypeType(x).
    literals = types.SimpleNamespace(
        **{**vars(celpy.celtypes), "IntType": values.INT, "UintType": values.UINT, "TypeType": values.type_of}
    )
    package = types.SimpleNamespace(evaluation=evaluation, celtypes=literals)
    return {"celpy": package, "operator": _namespace(vars(operator).items())}
