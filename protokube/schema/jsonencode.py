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
from typing import Any

import cbor2
import orjson
from google.protobuf.message import Message

from protokube.schema import deep, wellknown
from protokube.schema.shape import BYTES, FLOAT, MESSAGE, SCHEMA_UNIONS, FieldShape, shape

JSONValue = Any


def to_dict(message: Message, *, raw_bytes: bool = False) -> dict[str, JSONValue]:
    """The JSON object of a message (without kind/apiVersion).

    ``raw_bytes`` keeps bytes fields as bytes instead of base64 text, for CBOR, which has byte
    strings: under tag 22 (expected conversion to base64, RFC 8949 3.4.5.2), as upstream writes []byte.
    """
    return (_RAW if raw_bytes else _TEXT).to_dict(message)


class _Encoder:
    def __init__(self, raw_bytes: bool) -> None:
        self.raw_bytes = raw_bytes

    def to_dict(self, message: Message) -> dict[str, JSONValue]:
        present = {fd.name: value for fd, value in message.ListFields()}
        out: dict[str, JSONValue] = {}
        for field in shape(message.DESCRIPTOR.full_name).fields:
            value = present.get(field.name, _ABSENT)
            if field.inline:
                out.update(self.to_dict(getattr(message, field.name)))
                continue
            if value is _ABSENT:
                if field.kind == MESSAGE and not (field.nullable or field.repeated or field.is_map):
                    out[field.json_name] = self.special_or_object(field, getattr(message, field.name))
                elif field.emit_empty:
                    out[field.json_name] = None if (field.repeated or field.is_map or field.nullable) else field.zero
                continue
            if field.is_map:
                out[field.json_name] = self.map(field, value)
            elif field.repeated:
                out[field.json_name] = [self.single(field, item) for item in value]
            elif field.kind == MESSAGE:
                out[field.json_name] = self.special_or_object(field, value)
            elif field.nullable or field.emit_empty or value:
                out[field.json_name] = self.scalar(field.kind, value)
        return out

    def scalar(self, kind: str, value: JSONValue) -> JSONValue:
        if self.raw_bytes:  # CBOR keeps floats as they are, and bytes as upstream writes []byte:
            return cbor2.CBORTag(22, value) if kind == BYTES else value  # a byte string under tag 22
        if kind == BYTES:
            return base64.b64encode(value).decode()
        if kind == FLOAT and value.is_integer() and abs(value) < 2**63:
            return int(value)  # Go writes a whole float64 without a fraction: 1, not 1.0
        return value

    def single(self, field: FieldShape, value: JSONValue) -> JSONValue:
        return self.special_or_object(field, value) if field.kind == MESSAGE else self.scalar(field.kind, value)

    def map(self, field: FieldShape, value: Any) -> dict[str, JSONValue]:
        keys = sorted(value)
        if field.value_kind == MESSAGE:
            return {k: self.special_or_object(field, value[k]) for k in keys}
        return {k: self.scalar(field.value_kind, value[k]) for k in keys}

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


_TEXT = _Encoder(raw_bytes=False)
_RAW = _Encoder(raw_bytes=True)


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
    if b"<" in data or b">" in data or b"&" in data:
        data = data.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    if b"\xe2\x80\xa8" in data or b"\xe2\x80\xa9" in data:
        data = data.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
    return data


_ABSENT = object()


def _time(m: Message) -> str | None:
    return wellknown.format_time(m.seconds) if m.HasField("seconds") else None


def _micro_time(m: Message) -> str | None:
    return wellknown.format_micro_time(m.seconds, m.nanos) if m.HasField("seconds") else None


def _int_or_string(m: Message) -> int | str:
    return m.strVal if m.type == 1 else m.intVal


def _raw_json(raw: bytes) -> JSONValue:
    return deep.loads(raw) if raw else None


SPECIAL_ENCODERS = {
    "time": _time,
    "microtime": _micro_time,
    "duration": lambda m: wellknown.format_duration(m.duration),
    "quantity": lambda m: m.string or "0",
    "intorstring": _int_or_string,
    "rawjson": lambda m: _raw_json(m.raw),
    "fieldsv1": lambda m: _raw_json(m.Raw),
    "strings": lambda m: list(m.items) or None,  # Go: a nil slice after protobuf
}
