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
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParser
from celpy.evaluation import CELEvalError, CELSyntaxError, TranspilerTree

# The libraries register their functions when imported.
import protokube.gateway.cel.admission
import protokube.gateway.cel.lists
import protokube.gateway.cel.net
import protokube.gateway.cel.quantity
import protokube.gateway.cel.sets
import protokube.gateway.cel.strings
import protokube.gateway.cel.urls  # noqa: F401
from protokube.gateway.cel import cost, metered, regex
from protokube.gateway.cel.library import GLOBALS, METHODS, NAMESPACED, functions, standard_names
from protokube.gateway.cel.lists import LIST_MIN
from protokube.gateway.cel.values import TYPES, to_cel

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
MAX_DEPTH = 250  # cel-go's parser's recursion limit
# Programs are transpiled to Python by cel-python (several times faster than its interpreter); it
# logs every evaluation error at ERROR level, which are answers here, not faults.
logging.getLogger("celpy.Transpiler").setLevel(logging.CRITICAL)


@functools.cache
def _environment() -> celpy.Environment:
    """cel-python's environment, made on first use: it builds a Lark parser (unused here: _parser's
    trees are compiled) that took a tenth of a second of every server's start (issue 33)."""
    return celpy.Environment(runner_class=celpy.CompiledRunner)


class _Parser:
    """cel-python's grammar with a Lark parser of our own making the transpiler's tree nodes
    (cel-python keeps one parser per process, made with whichever tree class asked first)."""

    def __init__(self) -> None:
        grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
        self.lark = lark.Lark(
            grammar,
            parser="lalr",
            start="expr",
            g_regex_flags=re.M,
            lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
            propagate_positions=True,
            maybe_placeholders=False,
            priority="invert",
            tree_class=TranspilerTree,
        )

    def parse(self, text: str) -> TranspilerTree:
        try:
            return self.lark.parse(text)
        except (lark.exceptions.UnexpectedToken, lark.exceptions.UnexpectedCharacters) as err:
            raise celpy.CELParseError(err.get_context(text), *err.args, line=err.line, column=err.column) from err
        except lark.exceptions.LarkError as err:
            raise celpy.CELParseError(str(err).splitlines()[0]) from err


@functools.cache
def _parser() -> _Parser:
    """The parser, built on first use (a tenth of a second: Lark's LALR tables)."""
    return _Parser()


class CELCompileError(ValueError):
    """The expression does not compile; the message is upstream's (``compilation failed: ...``)."""


class CELEvaluationError(RuntimeError):
    """The expression failed at run time (cel-go's words: ``no such key: x``, ``no such overload``...)."""


class _Frame:
    """The activation the transpiled code reads its variables from (``activation.object``), and the
    frames macros bind their variable in: a plain lookup, where cel-python's Activation resolves
    every name through package scopes (most of an evaluation's time)."""

    __slots__ = ("_parent", "_values")

    def __init__(self, values: dict[str, Any], parent: _Frame | None = None) -> None:
        self._values = values
        self._parent = parent

    def __getattr__(self, name: str) -> Any:
        frame: _Frame | None = self
        while frame is not None:
            if name in frame._values:
                return frame._values[name]
            frame = frame._parent
        raise NameError(name)

    def resolve_variable(self, name: str) -> Any:
        return self.__getattr__(name)

    def nested_activation(self, annotations: Any = None, vars: dict[str, Any] | None = None) -> _Frame:
        return _Frame(dict(vars or {}), self)


_TYPE_NAMES = _Frame(dict(TYPES))  # what a name no variable has may be: a type (``int``)


class Program:
    """A compiled expression, evaluated with an activation of the declared variables.

    The transpiled code runs in globals of its own (a copy of cel-python's evaluation module's, as
    its code expects, whose ``celpy`` and ``operator`` are metered.py's charging namespaces):
    cel-python runs every program in that module's globals, where the lambdas one program defines
    replace another's of the same number — and a composition variable is evaluated in the middle
    of the expression reading it."""

    def __init__(self, expression: str, runner: celpy.CompiledRunner, names: frozenset[str] = frozenset()) -> None:
        self.expression = expression
        self.names = names  # the declared variables it reads
        self._code = runner.tp.executable_code
        self._globals = {**celpy.evaluation.result.__globals__, **metered.names()}

    def evaluate(self, activation: dict[str, Any]) -> Any:
        """The result as a CEL value (``from_cel`` makes it plain Python). Its cost is charged to
        the meter of the work running it (cost.py), which may stop it."""
        space = dict(self._globals)  # its own: evaluations run on threads too (cost.offloaded)
        space["base_activation"] = _Frame({name: to_cel(value) for name, value in activation.items()}, _TYPE_NAMES)
        try:
            with cost.expression():
                exec(self._code, space)  # code transpiled from a checked CEL expression
            result = space["CEL"]
        except CELEvalError as err:
            raise CELEvaluationError(error_text(err)) from None
        except cost.LimitExceeded as err:
            raise CELEvaluationError(str(err)) from None
        except RecursionError:
            raise CELEvaluationError("expression nested too deeply") from None
        except Exception as err:  # what the transpiler's evaluate wraps: an error of the evaluation
            raise CELEvaluationError(error_text(CELEvalError("evaluation error", type(err), err.args))) from None
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

    def get(self, key: Any, default: Any = None) -> Any:  # the transpiler's field selection
        return self[key] if key in self._names else default

    def __contains__(self, key: object) -> bool:
        return key in self._names


def error_text(err: CELEvalError) -> str:
    """cel-go's wording of cel-python's evaluation errors."""
    while err.args and err.args[0] == "evaluation error" and len(err.args) > 2:  # the transpiler's wrapping
        cause, args = err.args[1], err.args[2]
        if cause is not CELEvalError:
            return str(args[0]) if args else str(cause)
        err = CELEvalError(*args)
    message = str(err.args[0]) if err.args else str(err)
    if message.startswith("no such member in mapping"):
        return "no such key: " + message.rpartition(": ")[2].strip("'")
    if message == "no such key" and len(err.args) > 2 and err.args[2]:
        return f"no such key: {err.args[2][0]}"
    if message.startswith(("found no matching overload", "no such overload")):
        return "no such overload"
    if message == "divide by zero":
        return "division by zero"
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
        ast = _parser().parse(expression)
    except celpy.CELParseError as err:
        line, column = err.line or 1, err.column or 1
        raise CELCompileError(
            "compilation failed: " + issue(expression, line, column, "Syntax error: " + _syntax(err))
        ) from None
    checker = _Checker(expression, variables, composition)
    issues = checker.check(ast)
    if issues:
        raise CELCompileError("compilation failed: " + "\n".join(issues))
    _check_constant_patterns(ast)
    _rewrite_calls(ast, variables)
    try:
        runner = _environment().program(ast, functions=_functions())
    except (RecursionError, MemoryError, SyntaxError):  # nested beyond the transpiler's or Python's limits
        raise CELCompileError(
            "compilation failed: " + issue(expression, 1, 1, f"expression recursion limit exceeded: {MAX_DEPTH}")
        ) from None
    except (CELSyntaxError, AttributeError) as err:  # what the transpiler cannot write
        raise CELCompileError(f"compilation failed: {err}") from None
    return Program(expression, runner, frozenset(checker.used))


def _check_constant_patterns(ast: lark.Tree) -> None:
    """cel-go compiles the literal patterns of matches, find and findAll when it makes the program
    (its regex optimizations): one that does not parse fails there, as upstream reports it."""
    for node in ast.iter_subtrees():
        if node.data == "member_dot_arg" and len(node.children) > 2 and node.children[2] is not None:
            name, args = node.children[1], node.children[2].children
        elif node.data == "ident_arg" and len(node.children) > 1 and node.children[1] is not None:
            name, args = node.children[0], node.children[1].children[1:]  # matches(text, pattern)
        else:
            continue
        pattern = _chain(args[0]) if name in regex.FUNCTIONS and args else None
        if isinstance(pattern, lark.Tree) and pattern.data == "literal":
            token = pattern.children[0]
            if token.type in ("STRING_LIT", "MLSTRING_LIT"):
                try:
                    regex.compiled(str(celpy.evaluation.celstr(token)))
                except regex.RegexError as err:
                    raise CELCompileError(f"program instantiation failed: {err}") from None


def _rewrite_calls(ast: lark.Tree, variables: frozenset[str]) -> None:
    """What the transpiler would misread: ``list.min()`` (it takes .min for its min macro: see
    lists.LIST_MIN), and ``sets.contains(a, b)``-style calls, which become calls of the qualified
    name (it would look the namespace up as a variable)."""
    for node in ast.iter_subtrees():
        if node.data != "member_dot_arg":
            continue
        member, token = node.children[0], node.children[1]
        namespace = _namespace(member, variables)
        if namespace:
            node.data = "ident_arg"
            node.children = [token.update(value=f"{namespace}.{token}"), *node.children[2:]]
        elif len(node.children) == 2 and token == "min":
            node.children[1] = token.update(value=LIST_MIN)


def _namespace(member: Any, declared: frozenset[str]) -> str:
    """The function namespace ``member`` names (``sets``), unless a variable has that name."""
    node = _chain(member)
    if isinstance(node, lark.Tree) and node.data == "ident":
        name = str(node.children[0].value)
        if name in NAMESPACED and name not in declared:
            return name
    return ""


@functools.cache
def _functions() -> dict[str, Any]:
    return functions()


def parse(expression: str) -> lark.Tree:
    """The expression's parse tree (CELCompileError when it does not parse)."""
    try:
        return _parser().parse(expression)
    except celpy.CELParseError as err:
        raise CELCompileError(f"compilation failed: {err}") from None


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


def issue(expression: str, line: int, column: int, message: str) -> str:
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
        self.used: set[str] = set()

    def check(self, ast: lark.Tree) -> list[str]:
        stack: list[tuple[Any, frozenset[str]]] = [(ast, frozenset())]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, lark.Tree):
                stack.extend(reversed(self._visit(node, scope)))
        return self.issues

    def _report(self, token: lark.Token, message: str) -> None:
        self.issues.append(issue(self.expression, token.line or 1, token.column or 1, message))

    def _undeclared(self, token: lark.Token) -> None:
        self._report(token, f"undeclared reference to '{token.value}' (in container '')")

    def _visit(self, node: lark.Tree, scope: frozenset[str]) -> list[tuple[Any, frozenset[str]]]:
        kind, children = node.data, node.children
        if kind in ("ident", "dot_ident"):
            token = children[0]
            if token.value in scope:
                return []
            if token.value in self.variables:
                self.used.add(str(token.value))
            elif token.value not in TYPES:
                self._undeclared(token)
            return []
        if kind in ("ident_arg", "dot_ident_arg"):
            if children[0].value not in self.globals:
                self._undeclared(children[0])
            return [(child, scope) for child in children[1:]]
        if kind == "member_dot_arg":
            member, token = children[0], children[1]
            args = children[2].children if len(children) > 2 and children[2] is not None else []
            namespace = _namespace(member, self.variables | scope)
            if namespace:
                if token.value not in NAMESPACED[namespace]:
                    self._report(token, f"undeclared reference to '{namespace}.{token.value}' (in container '')")
                return [(arg, scope) for arg in args]
            if token.value in MACROS and args:
                bound = _bound_name(args[0])
                inner = scope | {bound} if bound else scope
                return [(member, scope), *((arg, inner) for arg in args[1:])]
            if token.value not in self.methods:
                self._undeclared(token)
            return [(member, scope), *((arg, scope) for arg in args)]
        if kind == "member_dot":
            member, token = children
            type_name = _chain(member)
            if _is_type_name(type_name, self.variables | scope):  # int.x: no such qualified name
                self._undeclared(type_name.children[0].update(value=f"{type_name.children[0]}.{token}"))
                return []
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


def _is_type_name(node: Any, declared: frozenset[str]) -> bool:
    """Whether ``node`` is an identifier naming a type (``int``), not a variable."""
    name = _bound_name(node)
    return name in TYPES and name not in declared


def _bound_name(node: Any) -> str:
    node = _chain(node)
    if isinstance(node, lark.Tree) and node.data == "ident":
        return str(node.children[0].value)
    return ""
