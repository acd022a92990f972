"""Kubernetes' CEL list library: isSorted, sum, min, max, indexOf, lastIndexOf."""

from __future__ import annotations

from typing import Any

from celpy import celtypes

from protokube.gateway.cel.library import fail, method, register
from protokube.gateway.cel.values import INT

# cel-python's transpiler takes ``.min(...)`` for its own macro (min with a variable): the program
# renames a call without arguments to this name, which no expression can write.
LIST_MIN = "list.min"


@method("isSorted", celtypes.ListType)
def is_sorted(items: celtypes.ListType) -> Any:
    try:
        return celtypes.BoolType(all(not items[i + 1] < items[i] for i in range(len(items) - 1)))
    except TypeError:
        return fail("no such overload")


@method("sum", celtypes.ListType)
def total(items: celtypes.ListType) -> Any:
    if not items:
        return INT(0)
    result = items[0]
    for item in items[1:]:
        result = result + item
    return result


@register(LIST_MIN, celtypes.ListType)
def minimum(items: celtypes.ListType) -> Any:
    if not items:
        return fail("min called on empty list")
    try:
        return min(items)
    except TypeError:
        return fail("no such overload")


@method("max", celtypes.ListType)
def maximum(items: celtypes.ListType) -> Any:
    if not items:
        return fail("max called on empty list")
    try:
        return max(items)
    except TypeError:
        return fail("no such overload")


@method("indexOf", celtypes.ListType)
def index_of(items: celtypes.ListType, value: Any) -> celtypes.IntType:
    for i, item in enumerate(items):
        if type(item) is type(value) and item == value:
            return INT(i)
    return INT(-1)


@method("lastIndexOf", celtypes.ListType)
def last_index_of(items: celtypes.ListType, value: Any) -> celtypes.IntType:
    for i in range(len(items) - 1, -1, -1):
        if type(items[i]) is type(value) and items[i] == value:
            return INT(i)
    return INT(-1)
