"""JSON-like values to CEL values and back, with Go's numbers (an integer beyond int64 is the
float64 Go's JSON decoder makes of it).

``to_cel`` runs for every object a policy reads, most of which its expressions never look at, so a
JSON object becomes a map whose values are converted when first read (``object.spec.replicas``
converts ``spec``, then ``replicas``, nothing else); lists are converted without recursion, as
custom objects nest up to 10,000 levels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes

from protokube.gateway.cel.cost import charge

_INT64 = 2**63
_String, _Int, _Double, _Bool = celtypes.StringType, celtypes.IntType, celtypes.DoubleType, celtypes.BoolType
_List = celtypes.ListType
_RAW = frozenset({dict, list, str, int, float, bool})
_CHUNK = 4096


def _int_maker(cls: type[int], low: int, high: int) -> Callable[..., Any]:
    """``cls``'s constructor, a plain int within [low, high) made at once: cel-python's IntType and
    UintType wrap a new range check (functools.wraps) around the conversion at every call, some 30
    times the cost of the value itself; any other source, or an out-of-range int, goes to ``cls``."""

    def make(source: Any, *args: Any, **kwargs: Any) -> Any:
        if type(source) is int and low <= source < high and not args and not kwargs:
            return int.__new__(cls, source)
        return cls(source, *args, **kwargs)

    return make


INT = _int_maker(celtypes.IntType, -_INT64, _INT64)
UINT = _int_maker(celtypes.UintType, 0, 2 * _INT64)

# CEL's type denotations (``type(x) == int``), the values their names evaluate to.
TYPES: dict[str, type] = {
    "bool": celtypes.BoolType,
    "bytes": celtypes.BytesType,
    "double": celtypes.DoubleType,
    "int": celtypes.IntType,
    "uint": celtypes.UintType,
    "string": celtypes.StringType,
    "list": celtypes.ListType,
    "map": celtypes.MapType,
    "null_type": type(None),
    "type": celtypes.TypeType,
}
# A value's class, or one it derives from, as its CEL type: our lazily converted maps are maps, a
# library's plain Python result is what CEL makes of it.
_TYPE_OF: dict[type, type] = {
    **{cel_type: cel_type for cel_type in TYPES.values()},
    bool: celtypes.BoolType,
    int: celtypes.IntType,
    float: celtypes.DoubleType,
    str: celtypes.StringType,
    bytes: celtypes.BytesType,
    list: celtypes.ListType,
    dict: celtypes.MapType,
}


def type_of(value: Any) -> type:
    """CEL's ``type(value)``: a type's type is ``type``; a value's, the CEL type its class is or
    derives from (cel-python's TypeType answers the class itself: a map made here would be no ``map``)."""
    if isinstance(value, type):
        return celtypes.TypeType
    for cls in type(value).__mro__:
        found = _TYPE_OF.get(cls)
        if found is not None:
            return found
    return type(value)


class _JSONMap(celtypes.MapType):
    """A JSON object as a CEL map: its keys are CEL strings, each value is converted when read."""

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) in _RAW:
            value = to_cel(value)
            dict.__setitem__(self, key, value)
        return value

    def get(self, key: Any, default: Any = None) -> Any:  # the transpiler's field selection
        if key in self:
            return self[key]
        if default is not None:
            return default
        raise KeyError(key)

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in self]


def _map(source: dict[str, Any]) -> _JSONMap:
    converted = _JSONMap()
    dict.update(converted, {str.__new__(_String, k): v for k, v in source.items()})
    return converted


def to_cel(value: Any) -> Any:
    """A JSON-like value (dicts, lists, str, int, float, bool, None) as a CEL value; CEL values
    and the library's own types pass through."""
    pending: list[tuple[list[Any], Any]] = []

    def one(item: Any) -> Any:
        kind = type(item)
        if kind is str:
            return str.__new__(_String, item)
        if kind is dict:
            return _map(item)
        if kind is list:
            converted = _List()
            pending.append((item, converted))
            return converted
        if kind is bool:
            return _Bool(item)
        if kind is int:
            return int.__new__(_Int, item) if -_INT64 <= item < _INT64 else _Double(item)
        if kind is float:
            return _Double(item)
        return item  # None, and values that are CEL's already

    result = one(value)
    while pending:
        source, target = pending.pop()
        for start in range(0, len(source), _CHUNK):
            charge(0)  # a long list is converted where the evaluation may stop or leave the event loop
            list.extend(target, [one(v) for v in source[start : start + _CHUNK]])
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
