"""An object's type as JSON, with the merge semantics that patches and server-side apply need.

Strategic merge patch and server-side apply walk an object's JSON form together with its type:
which keys a struct has, which lists merge by key and which are replaced whole, which maps and
structs are atomic. This module states that once, independent of where the type comes from —
today from the compiled messages and their options (``proto_type``); custom resources will build
the same tree from their OpenAPI schema.

Kinds of types (structured-merge-diff's terms in parentheses):
- ``scalar``  a JSON string, number or boolean (scalar); Time, Quantity and IntOrString are scalars.
- ``list``    a JSON array (list) with ``list_type`` atomic, set or map, and ``map_keys`` for map lists.
- ``map``     a JSON object with arbitrary keys and one ``element`` type (map with elementType).
- ``struct``  a JSON object with named ``fields`` (map with fields).
- ``untyped`` any JSON, owned as a whole: RawExtension, FieldsV1.
- ``deduced`` any JSON whose form decides (deduced): an object is a map of deduced values, a list is
  atomic, anything else a scalar. A custom resource's preserved unknown fields are deduced.
Maps and structs may be ``atomic`` (replaced as a whole, owned as a whole). A struct's ``element``,
when set, is the type of the keys that are not among its fields (a CRD object preserving unknown
fields: structured-merge-diff's map with fields and an elementType).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.schema.shape import BOOL, BYTES, FLOAT, INT, MESSAGE, SCHEMA_UNIONS, STRING, FieldShape, shape

SCALAR: Final = "scalar"
LIST: Final = "list"
MAP: Final = "map"
STRUCT: Final = "struct"
UNTYPED: Final = "untyped"
DEDUCED: Final = "deduced"
ATOMIC: Final = "atomic"
SET: Final = "set"
ASSOCIATIVE: Final = "map"

# Messages whose JSON is a single value, and the scalar each one is.
_SCALAR_MESSAGES = {
    "time": "string",
    "microtime": "string",
    "duration": "string",
    "quantity": "int-or-string",
    "intorstring": "int-or-string",
}
_UNTYPED_MESSAGES = frozenset({"rawjson", "fieldsv1", *SCHEMA_UNIONS})
_SCALAR_KINDS = {STRING: "string", BYTES: "string", INT: "integer", FLOAT: "number", BOOL: "boolean"}


@dataclass(frozen=True, slots=True)
class Field:
    """A named field of a struct, with the strategic-merge-patch facts its Go tag states."""

    name: str  # the JSON name
    type: Type
    # Strategic merge patch: {"merge"}, {"replace"}, {"retainKeys"}, {"merge", "retainKeys"}, or empty.
    patch_strategy: frozenset[str] = frozenset()
    patch_merge_key: str = ""


@dataclass(frozen=True, slots=True)
class Type:
    kind: str  # SCALAR, LIST, MAP, STRUCT, UNTYPED or DEDUCED
    scalar: str = ""  # for scalars: string, integer, number, boolean, int-or-string or untyped
    element: Type | None = None  # list elements, map values, a struct's undeclared keys
    list_type: str = ""  # for lists: ATOMIC, SET or ASSOCIATIVE
    map_keys: tuple[str, ...] = ()  # for associative lists: the keys that identify an element
    atomic: bool = False  # for maps and structs: replaced and owned as a whole
    name: str = ""  # for structs: where the fields come from (a message full name)
    _fields: Mapping[str, Field] | None = field(default=None, compare=False, repr=False)

    @property
    def fields(self) -> Mapping[str, Field]:
        """A struct's fields by JSON name (inlined structs' fields included)."""
        if self._fields is not None:
            return self._fields
        return _message_fields(self.name) if self.kind == STRUCT else {}


UNTYPED_TYPE = Type(UNTYPED)
DEDUCED_TYPE = Type(DEDUCED)


def proto_type(full_name: str) -> Type:
    """The type of a compiled message (a kind, or any message inside one)."""
    return Type(STRUCT, name=full_name, atomic=shape(full_name).atomic)


@functools.cache
def _message_fields(full_name: str) -> Mapping[str, Field]:
    fields: dict[str, Field] = {}
    for f in shape(full_name).fields:
        if f.inline and f.message:
            fields.update(_message_fields(f.message))
            continue
        strategy = frozenset(s for s in f.patch_strategy.split(",") if s)
        fields[f.json_name] = Field(f.json_name, _field_type(f), strategy, f.patch_merge_key)
    return fields


def _value_type(f: FieldShape, kind: str) -> Type:
    """The type of one value of a field: its element when it is a list or a map."""
    if kind != MESSAGE:
        return Type(SCALAR, scalar=_SCALAR_KINDS.get(kind, "integer"))
    if f.special in _SCALAR_MESSAGES:
        return Type(SCALAR, scalar=_SCALAR_MESSAGES[f.special])
    if f.special in _UNTYPED_MESSAGES:
        return UNTYPED_TYPE
    if f.special == "strings":
        return Type(LIST, element=Type(SCALAR, scalar="string"), list_type=ATOMIC)
    assert f.message is not None
    return proto_type(f.message)


def _field_type(f: FieldShape) -> Type:
    if f.is_map:
        atomic = f.granularity == opts.GRANULARITY_ATOMIC
        return Type(MAP, element=_value_type(f, f.value_kind or STRING), atomic=atomic)
    if f.repeated:
        element = _value_type(f, f.kind)
        return Type(LIST, element=element, list_type=_list_type(f, element), map_keys=_map_keys(f))
    value = _value_type(f, f.kind)
    if value.kind == STRUCT and f.granularity == opts.GRANULARITY_ATOMIC:
        return Type(STRUCT, name=value.name, atomic=True)
    return value


def _list_type(f: FieldShape, element: Type) -> str:
    """+listType when stated; otherwise as upstream derives it from the patch strategy (a merge list
    with a merge key is a map list, a merge list of scalars a set), else atomic."""
    if f.list_type == opts.LIST_TYPE_MAP:
        return ASSOCIATIVE
    if f.list_type == opts.LIST_TYPE_SET:
        return SET
    if f.list_type == opts.LIST_TYPE_ATOMIC:
        return ATOMIC
    if "merge" in f.patch_strategy.split(","):
        if f.patch_merge_key:
            return ASSOCIATIVE
        if element.kind == SCALAR:
            return SET
    return ATOMIC


def _map_keys(f: FieldShape) -> tuple[str, ...]:
    if f.list_map_keys:
        return f.list_map_keys
    return (f.patch_merge_key,) if f.patch_merge_key and "merge" in f.patch_strategy.split(",") else ()
