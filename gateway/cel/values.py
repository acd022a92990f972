"""JSON-like values to CEL values and back, with Go's numbers (an integer beyond int64 is the
float64 Go's JSON decoder makes of it).

``to_cel`` runs once per request and object a policy reads, so it is written for speed (exact
types, containers filled without celpy's per-item checks) and without recursion (custom objects
nest up to 10,000 levels)."""

from __future__ import annotations

from typing import Any

from celpy import celtypes

_INT64 = 2**63
_String, _Int, _Double, _Bool = celtypes.StringType, celtypes.IntType, celtypes.DoubleType, celtypes.BoolType
_Map, _List = celtypes.MapType, celtypes.ListType


def to_cel(value: Any) -> Any:
    """A JSON-like value (dicts, lists, str, int, float, bool, None) as a CEL value; CEL values
    and the library's own types pass through."""
    pending: list[tuple[Any, Any]] = []

    def one(item: Any) -> Any:
        kind = type(item)
        if kind is str:
            return str.__new__(_String, item)
        if kind is dict:
            converted = _Map()
            pending.append((item, converted))
            return converted
        if kind is list:
            converted = _List()
            pending.append((item, converted))
            return converted
        if kind is bool:
            return _Bool(item)
        if kind is int:
            return _Int(item) if -_INT64 <= item < _INT64 else _Double(item)
        if kind is float:
            return _Double(item)
        return item  # None, and values that are CEL's already

    result = one(value)
    while pending:
        source, target = pending.pop()
        if type(source) is dict:
            dict.update(target, {str.__new__(_String, k): one(v) for k, v in source.items()})
        else:
            list.extend(target, [one(v) for v in source])
    return result


def from_cel(value: Any) -> Any:
    """A CEL result as plain Python (bool, int, float, str, list, dict, None)."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.MapType):
        return {from_cel(k): from_cel(v) for k, v in value.items()}
    if isinstance(value, celtypes.ListType):
        return [from_cel(v) for v in value]
    return value
