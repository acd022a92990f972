"""JSON-like values to CEL values and back, with Go's numbers (an integer beyond int64 is the
float64 Go's JSON decoder makes of it)."""

from __future__ import annotations

from typing import Any

import celpy
from celpy import celtypes

_INT64 = 2**63


def to_cel(value: Any) -> Any:
    """A JSON-like value (dicts, lists, str, int, float, bool, None) as a CEL value; CEL values
    and the library's own types pass through."""
    if isinstance(value, celtypes.BoolType | celtypes.IntType | celtypes.DoubleType | celtypes.StringType):
        return value
    if isinstance(value, celtypes.ListType | celtypes.MapType):
        return value
    try:
        return celpy.json_to_cel(value)
    except (ValueError, OverflowError):
        return celpy.json_to_cel(_go_numbers(value))


def _go_numbers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return float(value)
    return value


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
