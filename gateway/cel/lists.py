"""Kubernetes' CEL list library: isSorted, sum, max (min is cel-python's), indexOf, lastIndexOf."""

from __future__ import annotations

from typing import Any

from celpy import celtypes

from gateway.cel.library import fail, method


@method("isSorted", celtypes.ListType)
def is_sorted(items: celtypes.ListType) -> Any:
    try:
        return celtypes.BoolType(all(not items[i + 1] < items[i] for i in range(len(items) - 1)))
    except TypeError:
        return fail("no such overload")


@method("sum", celtypes.ListType)
def total(items: celtypes.ListType) -> Any:
    if not items:
        return celtypes.IntType(0)
    result = items[0]
    for item in items[1:]:
        result = result + item
    return result


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
            return celtypes.IntType(i)
    return celtypes.IntType(-1)


@method("lastIndexOf", celtypes.ListType)
def last_index_of(items: celtypes.ListType, value: Any) -> celtypes.IntType:
    for i in range(len(items) - 1, -1, -1):
        if type(items[i]) is type(value) and items[i] == value:
            return celtypes.IntType(i)
    return celtypes.IntType(-1)
