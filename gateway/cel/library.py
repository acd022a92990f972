"""The registry of the Kubernetes CEL library functions written on cel-python's extension point
(the functions a Runner is given): each name maps to overloads chosen by the type of the first
argument (the receiver of a method), falling back on cel-python's own function of that name."""

from __future__ import annotations

import operator
import types
from collections.abc import Callable
from typing import Any

import celpy.evaluation
from celpy.celtypes import BoolType
from celpy.evaluation import CELEvalError, base_functions, boolean

Function = Callable[..., Any]

_OVERLOADS: dict[str, list[tuple[type | tuple[type, ...], Function]]] = {}
# cel-python's transpiler writes a call as ``<module>.<qualname>`` of the function and runs the code
# in its evaluation module's globals: the dispatchers live there, under ``k8s``.
_NAMESPACE = types.SimpleNamespace()
celpy.evaluation.k8s = _NAMESPACE  # type: ignore[attr-defined]
# Names callable as methods (``x.f()``) and as global functions (``f(x)``), for the compile check.
METHODS: set[str] = set()
GLOBALS: set[str] = set()
# Functions named within a namespace (``sets.contains(a, b)``), by namespace; Kubernetes' format
# library and cel-go's optional types are namespaces whose functions this server does not have
# (a call is refused naming the function: ``format.dns1123Label``).
NAMESPACED: dict[str, set[str]] = {"format": set(), "optional": set()}


def fail(message: str) -> CELEvalError:
    """An evaluation error worded as cel-go's (functions return it; CEL propagates it)."""
    return CELEvalError(message)


def method(name: str, receiver: type | tuple[type, ...]) -> Callable[[Function], Function]:
    """Register ``receiver.name(...)``."""
    METHODS.add(name)
    return register(name, receiver)


def function(name: str, first: type | tuple[type, ...] = object) -> Callable[[Function], Function]:
    """Register the global function ``name(first, ...)``."""
    GLOBALS.add(name)
    return register(name, first)


def namespaced(namespace: str, name: str) -> Callable[[Function], Function]:
    """Register ``namespace.name(...)`` (the program calls it by its qualified name)."""
    NAMESPACED.setdefault(namespace, set()).add(name)
    return register(f"{namespace}.{name}", object)


def register(name: str, first: type | tuple[type, ...]) -> Callable[[Function], Function]:
    """Register an overload of ``name`` (neither a method nor a global function for the checker)."""

    def add(func: Function) -> Function:
        _OVERLOADS.setdefault(name, []).append((first, func))
        return func

    return add


# cel-python's transpiler writes has() as a Python bool, which its logical operators refuse: they
# get it as CEL's bool.
BOOLEAN_OPERATORS = ("!_", "_&&_", "_||_", "_?_:_", "_==_", "_!=_")
# cel-python's == and != wrap operator.eq anew on every call (most of a comparison's time): wrapped once here.
_COMPARISONS = {"_==_": boolean(operator.eq), "_!=_": boolean(operator.ne)}


def exposed_name(name: str) -> str:
    """The attribute of ``celpy.evaluation.k8s`` the function ``name`` is (one per name)."""
    return "f_" + "".join(c if c.isalnum() else f"_{ord(c)}_" for c in name)


def _exposed(name: str, func: Function) -> Function:
    """``func`` where the transpiler's code finds it: ``celpy.evaluation.k8s.<attribute>``."""
    attribute = exposed_name(name)
    func.__name__ = attribute
    func.__module__ = "celpy.evaluation"
    func.__qualname__ = f"k8s.{attribute}"
    setattr(_NAMESPACE, attribute, func)
    return func


def _boolean_operator(name: str) -> Function:
    function = _COMPARISONS.get(name) or base_functions[name]

    def coerced(*args: Any) -> Any:
        return function(*[BoolType(arg) if type(arg) is bool else arg for arg in args])

    return _exposed(name, coerced)


def _dispatcher(name: str) -> Function:
    overloads = _OVERLOADS[name]
    fallback = base_functions.get(name)

    def dispatch(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        if args:
            for first, func in overloads:
                if isinstance(args[0], first):
                    return func(*args)
        if fallback is not None:
            return fallback(*args)
        raise TypeError(f"no such overload: {name}")

    return _exposed(name, dispatch)


def functions() -> dict[str, Function]:
    """Every registered function, for ``Environment.program`` (once the library modules are imported)."""
    found = {name: _dispatcher(name) for name in _OVERLOADS}
    found.update((name, _boolean_operator(name)) for name in BOOLEAN_OPERATORS)
    return found


def standard_names() -> frozenset[str]:
    """What cel-python provides itself: its functions and macros."""
    return frozenset({*base_functions, *("has", "all", "exists", "exists_one", "map", "filter", "dyn", "min")})
