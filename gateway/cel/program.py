"""Compile and evaluate one CEL expression with declared variables (cel-python's parser and
interpreter, the Kubernetes libraries of this package).

Compilation parses the expression and checks every name it uses: variables must be declared (or
bound by a macro), functions must exist — cel-python's standard ones or this package's — and
``variables.<name>`` must name a declared composition variable. Errors are worded as cel-go's
issues (``ERROR: <input>:1:5: undeclared reference to 'foo' (in container '')`` and the source
line with a caret), prefixed with ``compilation failed: `` as upstream reports them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError

from gateway.cel import admission, lists, net, quantity, strings, urls  # noqa: F401  (they register their functions)
from gateway.cel.library import GLOBALS, METHODS, functions, standard_names
from gateway.cel.values import to_cel

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_ENV = celpy.Environment()


class CELCompileError(ValueError):
    """The expression does not compile; the message is upstream's (``compilation failed: ...``)."""


class CELEvaluationError(RuntimeError):
    """The expression failed at run time (cel-go's words: ``no such key: x``, ``no such overload``...)."""


class Program:
    """A compiled expression, evaluated with an activation of the declared variables."""

    def __init__(self, expression: str, runner: celpy.Runner) -> None:
        self.expression = expression
        self._runner = runner

    def evaluate(self, activation: dict[str, Any]) -> Any:
        """The result as a CEL value (``from_cel`` makes it plain Python)."""
        context = {name: to_cel(value) for name, value in activation.items()}
        try:
            result = self._runner.evaluate(context)
        except CELEvalError as err:
            raise CELEvaluationError(error_text(err)) from None
        except RecursionError:
            raise CELEvaluationError("expression nested too deeply") from None
        if isinstance(result, CELEvalError):
            raise CELEvaluationError(error_text(result))
        return result


class LazyMap(celtypes.MapType):
    """``variables``: each composition variable evaluated when first read, then kept; ``compute``
    returns its value or a ``celpy.CELEvalError``."""

    def __init__(self, compute: Callable[[str], Any], names: Iterable[str]) -> None:
        super().__init__()
        self._compute = compute
        self._names = frozenset(names)

    def __getitem__(self, key: Any) -> Any:
        if not dict.__contains__(self, key):
            if key not in self._names:
                raise KeyError(key)
            dict.__setitem__(self, key, self._compute(str(key)))
        return dict.__getitem__(self, key)  # an error is a value: CEL's || and && may absorb it

    def __contains__(self, key: object) -> bool:
        return key in self._names


def error_text(err: CELEvalError) -> str:
    """cel-go's wording of cel-python's evaluation errors."""
    message = str(err.args[0]) if err.args else str(err)
    if message.startswith("no such member in mapping"):
        return "no such key: " + message.rpartition(": ")[2].strip("'")
    if message == "no such key" and len(err.args) > 2 and err.args[2]:
        return f"no such key: {err.args[2][0]}"
    if message.startswith(("found no matching overload", "no such overload")):
        return "no such overload"
    if message.startswith("modulus or divide by zero"):
        return "division by zero" if "division" in str(err.args[2:]) else "modulus by zero"
    if message.startswith("undeclared reference"):
        return message.partition(" (in activation")[0]
    return message


def compile(expression: str, variables: Iterable[str], composition: Iterable[str] = ()) -> Program:
    """Compile ``expression`` with ``variables`` declared (``composition``: the names declared
    under ``variables``, when that variable is). Raises CELCompileError."""
    return _compile(expression, frozenset(variables), frozenset(composition))


@functools.lru_cache(maxsize=4096)
def _compile(expression: str, variables: frozenset[str], composition: frozenset[str]) -> Program:
    try:
        ast = _ENV.compile(expression)
    except celpy.CELParseError as err:
        line, column = err.line or 1, err.column or 1
        raise CELCompileError(
            "compilation failed: " + _issue(expression, line, column, "Syntax error: " + _syntax(err))
        ) from None
    issues = _Checker(expression, variables, composition).check(ast)
    if issues:
        raise CELCompileError("compilation failed: " + "\n".join(issues))
    return Program(expression, _ENV.program(ast, functions=_functions()))


@functools.cache
def _functions() -> dict[str, Any]:
    return functions()


def _syntax(err: celpy.CELParseError) -> str:
    cause = err.__cause__ or err.__context__
    if isinstance(cause, lark.exceptions.UnexpectedInput):
        token = getattr(cause, "token", None)
        if token is not None and getattr(token, "type", "") == "$END":
            return "mismatched input '<EOF>'"
        if token is not None:
            return f"mismatched input '{token}'"
        char = getattr(cause, "char", None)
        if char is not None:
            return f"token recognition error at: '{char}'"
    return "invalid expression"


def _issue(expression: str, line: int, column: int, message: str) -> str:
    """One cel-go issue: location, message, the source line and a caret under the column."""
    lines = expression.splitlines() or [""]
    source = lines[min(line, len(lines)) - 1]
    return f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


class _Checker:
    """Every undeclared name of a parsed expression, as cel-go's checker reports them."""

    def __init__(self, expression: str, variables: frozenset[str], composition: frozenset[str]) -> None:
        self.expression = expression
        self.variables = variables
        self.composition = composition
        self.globals = standard_names() | GLOBALS
        self.methods = standard_names() | METHODS
        self.issues: list[str] = []

    def check(self, ast: lark.Tree) -> list[str]:
        stack: list[tuple[Any, frozenset[str]]] = [(ast, frozenset())]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, lark.Tree):
                stack.extend(reversed(self._visit(node, scope)))
        return self.issues

    def _report(self, token: lark.Token, message: str) -> None:
        self.issues.append(_issue(self.expression, token.line or 1, token.column or 1, message))

    def _undeclared(self, token: lark.Token) -> None:
        self._report(token, f"undeclared reference to '{token.value}' (in container '')")

    def _visit(self, node: lark.Tree, scope: frozenset[str]) -> list[tuple[Any, frozenset[str]]]:
        kind, children = node.data, node.children
        if kind in ("ident", "dot_ident"):
            token = children[0]
            if token.value not in self.variables and token.value not in scope:
                self._undeclared(token)
            return []
        if kind in ("ident_arg", "dot_ident_arg"):
            if children[0].value not in self.globals:
                self._undeclared(children[0])
            return [(child, scope) for child in children[1:]]
        if kind == "member_dot_arg":
            member, token = children[0], children[1]
            args = children[2].children if len(children) > 2 and children[2] is not None else []
            if token.value in MACROS and args:
                bound = _bound_name(args[0])
                inner = scope | {bound} if bound else scope
                return [(member, scope), *((arg, inner) for arg in args[1:])]
            if token.value not in self.methods:
                self._undeclared(token)
            return [(member, scope), *((arg, scope) for arg in args)]
        if kind == "member_dot":
            member, token = children
            declared = "variables" in self.variables and "variables" not in scope
            if declared and _is_ident(member, "variables") and token.value not in self.composition:
                self._report(token, f"undefined field '{token.value}'")
            return [(member, scope)]
        return [(child, scope) for child in children]


def _chain(node: Any) -> Any:
    """The one node a chain of single-child nodes comes down to."""
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data not in ("ident", "literal"):
        node = node.children[0]
    return node


def _is_ident(node: Any, name: str) -> bool:
    node = _chain(node)
    return isinstance(node, lark.Tree) and node.data == "ident" and node.children[0].value == name


def _bound_name(node: Any) -> str:
    node = _chain(node)
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0].value)
    return ""
