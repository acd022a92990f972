"""Protobuf message → Kubernetes JSON, following upstream's Go encoding/json conventions.

- Keys in Go struct order (the .proto declaration order); map keys sorted, as encoding/json does.
- omitempty as upstream: a non-pointer scalar, list or map is left out when empty unless its
  field says ``emit_empty``; a pointer (``nullable``) field is written whenever it is set, and
  as null when unset but ``emit_empty`` (a Go pointer without omitempty); a non-pointer struct is
  always written (encoding/json never omits structs).
- int64 as JSON numbers; bytes as base64; Time, MicroTime, Duration, Quantity, IntOrString,
  RawExtension and FieldsV1 in their custom forms.
- Output bytes escape ``<``, ``>``, ``&``, U+2028 and U+2029 like Go's encoder does.
"""

from __future__ import annotations

import base64
from typing import Any, Final

import cbor2
import orjson
from google.protobuf.message import Message

from protokube.schema import deep, descriptors, wellknown
from protokube.schema.shape import BYTES, FLOAT, MESSAGE, SCHEMA_UNIONS, FieldShape, shape

JSONValue = Any


def to_dict(message: Message, *, raw_bytes: bool = False) -> dict[str, JSONValue]:
    """The JSON object of a message (without kind/apiVersion).

    ``raw_bytes`` keeps bytes fields as bytes instead of base64 text, for CBOR, which has byte
    strings: under tag 22 (expected conversion to base64, RFC 8949 3.4.5.2), as upstream writes []byte.
    """
    return (_RAW if raw_bytes else _TEXT).to_dict(message)


# How a field is written when present: a step of a message's plan (see _plan).
# singular (inline: written even when absent)
_PLAIN: Final = 0
_SCALAR: Final = 1
_OBJECT: Final = 2
_SPECIAL: Final = 3
_UNION: Final = 4
_INLINE: Final = 5
# maps and lists
_MAP_PLAIN: Final = 6
_MAP_SCALAR: Final = 7
_MAP_VALUES: Final = 8
_LIST_PLAIN: Final = 9
_LIST_SCALAR: Final = 10
_LIST_VALUES: Final = 11
# What is written when it is absent: nothing, a constant (emit_empty's, a zero special form), a zero struct.
_SKIP: Final = 0
_CONSTANT: Final = 1
_ZERO_STRUCT: Final = 2

# A field's step: name, JSON key, how it is written (present), what when absent, the constant written
# when absent, whether a present scalar is written even when falsy, the field.
Step = tuple[str, str, int, int, JSONValue, bool, FieldShape]


class _Encoder:
    def __init__(self, raw_bytes: bool) -> None:
        self.raw_bytes = raw_bytes
        self._plans: dict[object, tuple[Step, ...]] = {}  # by the message's descriptor

    def to_dict(self, message: Message) -> dict[str, JSONValue]:
        plan = self._plans.get(message.DESCRIPTOR)
        if plan is None:
            plan = self._plans[message.DESCRIPTOR] = _plan(message.DESCRIPTOR.full_name)
        present = {fd.name: value for fd, value in message.ListFields()}
        out: dict[str, JSONValue] = {}
        for name, json_name, how, absent, constant, always, field in plan:
            value = present.get(name, _ABSENT)
            if value is _ABSENT:
                if how == _INLINE:
                    out.update(self.to_dict(getattr(message, name)))
                elif absent == _CONSTANT:
                    out[json_name] = constant
                elif absent == _ZERO_STRUCT:
                    out[json_name] = self.special_or_object(field, getattr(message, name))
            elif how == _PLAIN:
                if always or value:
                    out[json_name] = value
            elif how == _OBJECT:
                out[json_name] = self.to_dict(value)
            elif how == _MAP_PLAIN:
                out[json_name] = {k: value[k] for k in sorted(value)}  # faster than upb's items()
            elif how == _LIST_PLAIN:
                # A slice, not a loop: upb's repeated containers have no iterator of their own, so a loop
                # over one goes through the sequence protocol, which ends it with a formatted IndexError
                # (about 1 µs, even for an empty one); a slice is one call that makes a list.
                out[json_name] = value[:]
            elif how == _LIST_VALUES:
                out[json_name] = [self.special_or_object(field, item) for item in value[:]]
            elif how == _SPECIAL:
                out[json_name] = SPECIAL_ENCODERS[field.special](value)  # type: ignore[index]
            elif how == _SCALAR:
                if always or value:
                    out[json_name] = self.scalar(field.kind, value)
            elif how == _MAP_VALUES:
                out[json_name] = {k: self.special_or_object(field, value[k]) for k in sorted(value)}
            elif how == _MAP_SCALAR:
                out[json_name] = {k: self.scalar(field.value_kind, value[k]) for k in sorted(value)}  # type: ignore[arg-type]
            elif how == _LIST_SCALAR:
                out[json_name] = [self.scalar(field.kind, item) for item in value[:]]
            elif how == _INLINE:
                out.update(self.to_dict(value))
            else:  # _UNION
                out[json_name] = self.schema_union(field.special, value)  # type: ignore[arg-type]
        return out

    def scalar(self, kind: str, value: JSONValue) -> JSONValue:
        if self.raw_bytes:  # CBOR keeps floats as they are, and bytes as upstream writes []byte:
            return cbor2.CBORTag(22, value) if kind == BYTES else value  # a byte string under tag 22
        if kind == BYTES:
            return base64.b64encode(value).decode()
        if kind == FLOAT and value.is_integer() and abs(value) < 2**63:
            return int(value)  # Go writes a whole float64 without a fraction: 1, not 1.0
        return value

    def special_or_object(self, field: FieldShape, value: Message) -> JSONValue:
        if field.special is None:
            return self.to_dict(value)
        if field.special in SCHEMA_UNIONS:
            return self.schema_union(field.special, value)
        return SPECIAL_ENCODERS[field.special](value)

    def schema_union(self, special: str, value: Message) -> JSONValue:
        """apiextensions' MarshalJSON of JSONSchemaPropsOrArray, OrBool and OrStringArray."""
        schema = self.to_dict(value.schema) if value.HasField("schema") else None
        if special == "schemaorarray":
            return [self.to_dict(item) for item in value.jSONSchemas] if len(value.jSONSchemas) else schema
        if special == "schemaorbool":
            return value.allows if schema is None else schema
        return list(value.property) if len(value.property) else schema


def _converted(kind: str | None) -> bool:
    """Whether ``scalar`` writes a value of this kind otherwise than as it is (bytes, floats)."""
    return kind in (BYTES, FLOAT)


def _plan(full_name: str) -> tuple[Step, ...]:
    """A message's fields in Go struct order, each with how it is written: the branches the shape
    decides (kinds, maps, lists, special forms, omitempty) taken once per message type, not per field
    written."""
    return tuple(_step(field) for field in shape(full_name).fields)


def _step(field: FieldShape) -> Step:
    absent, constant = _SKIP, None
    if field.kind == MESSAGE and not (field.nullable or field.repeated or field.is_map):
        absent = _ZERO_STRUCT  # a Go struct: always written, its zero value when absent
        if field.special is not None and field.special not in SCHEMA_UNIONS:  # a zero special form: constant
            absent, constant = _CONSTANT, SPECIAL_ENCODERS[field.special](descriptors.message_class(field.message)())
    elif field.emit_empty:
        absent, constant = _CONSTANT, None if (field.repeated or field.is_map or field.nullable) else field.zero
    if field.inline:
        how = _INLINE
    elif field.is_map:
        how = (
            _MAP_VALUES if field.value_kind == MESSAGE else _MAP_SCALAR if _converted(field.value_kind) else _MAP_PLAIN
        )
    elif field.repeated:
        how = _LIST_VALUES if field.kind == MESSAGE else _LIST_SCALAR if _converted(field.kind) else _LIST_PLAIN
    elif field.kind == MESSAGE:
        how = _OBJECT if field.special is None else _UNION if field.special in SCHEMA_UNIONS else _SPECIAL
    else:
        how = _SCALAR if _converted(field.kind) else _PLAIN
    return (field.name, field.json_name, how, absent, constant, field.nullable or field.emit_empty, field)


_TEXT: Final = _Encoder(raw_bytes=False)
_RAW: Final = _Encoder(raw_bytes=True)


def object_to_dict(message: Message, kind: str, api_version: str, *, raw_bytes: bool = False) -> dict[str, JSONValue]:
    """A top-level object: kind and apiVersion first, as upstream's inlined TypeMeta."""
    out: dict[str, JSONValue] = {"kind": kind, "apiVersion": api_version}
    out.update(to_dict(message, raw_bytes=raw_bytes))
    return out


def dumps(value: JSONValue, *, pretty: bool = False) -> bytes:
    """Serialize to JSON bytes the way Go's encoding/json writes them."""
    data = deep.dumps(value, orjson.OPT_INDENT_2 if pretty else 0)
    return go_escape(data)


def go_escape(data: bytes) -> bytes:
    """Escape what Go escapes in strings; these bytes can only occur inside JSON strings."""
    # Bytes searched for as ints (``60 in data``: a memchr); ``b"<" in data`` first tries the bytes as an
    # int and pays for the TypeError that raises, several times the search.
    if 60 in data or 62 in data or 38 in data:  # < > &
        data = data.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    if 0xE2 in data and (b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data):
        data = data.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
    return data


_ABSENT: Final = object()


def _time(m: Message) -> str | None:
    return wellknown.format_time(m.seconds) if m.HasField("seconds") else None


def _micro_time(m: Message) -> str | None:
    return wellknown.format_micro_time(m.seconds, m.nanos) if m.HasField("seconds") else None


def _int_or_string(m: Message) -> int | str:
    return m.strVal if m.type == 1 else m.intVal


def _raw_json(raw: bytes) -> JSONValue:
    return deep.loads(raw) if raw else None


SPECIAL_ENCODERS: Final = {
    "time": _time,
    "microtime": _micro_time,
    "duration": lambda m: wellknown.format_duration(m.duration),
    "quantity": lambda m: m.string or "0",
    "intorstring": _int_or_string,
    "rawjson": lambda m: _raw_json(m.raw),
    "fieldsv1": lambda m: _raw_json(m.Raw),
    "strings": lambda m: list(m.items) or None,  # Go: a nil slice after protobuf
}
