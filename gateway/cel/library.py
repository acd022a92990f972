"""The registry of the Kubernetes CEL library functions written on cel-python's extension point
(the functions a Runner is given): each name maps to overloads chosen by the type of the first
argument (the receiver of a method), falling back on cel-python's own function of that name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy.evaluation import CELEvalError, base_functions

Function = Callable[..., Any]

_OVERLOADS: dict[str, list[tuple[type | tuple[type, ...], Function]]] = {}
# Names callable as methods (``x.f()``) and as global functions (``f(x)``), for the compile check.
METHODS: set[str] = set()
GLOBALS: set[str] = set()


def fail(message: str) -> CELEvalError:
    """An evaluation error worded as cel-go's (functions return it; CEL propagates it)."""
    return CELEvalError(message)


def method(name: str, receiver: type | tuple[type, ...]) -> Callable[[Function], Function]:
    """Register ``receiver.name(...)``."""
    METHODS.add(name)
    return _register(name, receiver)


def function(name: str, first: type | tuple[type, ...] = object) -> Callable[[Function], Function]:
    """Register the global function ``name(first, ...)``."""
    GLOBALS.add(name)
    return _register(name, first)


def _register(name: str, first: type | tuple[type, ...]) -> Callable[[Function], Function]:
    def register(func: Function) -> Function:
        _OVERLOADS.setdefault(name, []).append((first, func))
        return func

    return register


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

    dispatch.__name__ = name
    return dispatch


def functions() -> dict[str, Function]:
    """Every registered function, for ``Environment.program`` (once the library modules are imported)."""
    return {name: _dispatcher(name) for name in _OVERLOADS}


def standard_names() -> frozenset[str]:
    """What cel-python provides itself: its functions and macros."""
    return frozenset({*base_functions, *("has", "all", "exists", "exists_one", "map", "filter", "dyn", "min")})
