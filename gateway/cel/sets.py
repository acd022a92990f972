"""cel-go's sets extension as Kubernetes enables it: sets.contains, sets.equivalent,
sets.intersects, on lists taken as sets (CEL's equality: 1 == 1.0)."""

from __future__ import annotations

from typing import Any

from celpy import celtypes

from protokube.gateway.cel.library import fail, namespaced


def _lists(*values: Any) -> bool:
    return all(isinstance(v, celtypes.ListType) for v in values)


def _has(items: celtypes.ListType, wanted: Any) -> bool:
    return any(_equal(item, wanted) for item in items)


_NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _equal(a: Any, b: Any) -> bool:
    """CEL's equality, numbers compared across types (1 == 1.0 == 1u) as cel-go's sets do."""
    if isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS) and not isinstance(a, celtypes.BoolType | bool):
        return not isinstance(b, celtypes.BoolType | bool) and float(a) == float(b) and int(a) == int(b)
    try:
        return bool(a == b)
    except TypeError:
        return False


@namespaced("sets", "contains")
def contains(items: Any, other: Any) -> Any:
    """Whether ``items`` holds every element of ``other``."""
    if not _lists(items, other):
        return fail("no such overload")
    return celtypes.BoolType(all(_has(items, x) for x in other))


@namespaced("sets", "equivalent")
def equivalent(items: Any, other: Any) -> Any:
    """Whether the two lists hold the same elements, whatever their order and repetitions."""
    if not _lists(items, other):
        return fail("no such overload")
    return celtypes.BoolType(all(_has(items, x) for x in other) and all(_has(other, x) for x in items))


@namespaced("sets", "intersects")
def intersects(items: Any, other: Any) -> Any:
    """Whether the two lists have an element in common."""
    if not _lists(items, other):
        return fail("no such overload")
    return celtypes.BoolType(any(_has(items, x) for x in other))
