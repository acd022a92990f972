"""Kubernetes JSON (or YAML, already parsed) → protobuf message, reporting what upstream reports.

Decoding follows sigs.k8s.io/json, the decoder kube-apiserver uses: case-sensitive keys, JSON
null leaves a field unset, numbers must fit the Go integer type. A value of the wrong type is
fatal (``DecodeError``, worded like Go's ``json: cannot unmarshal …``); unknown and duplicate
fields are collected with their paths (``spec.containers[0].imagePullPolcy``) so the caller can
apply fieldValidation=Ignore|Warn|Strict.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any, Final

import orjson
from google.protobuf.message import Message
from mypy_extensions import mypyc_attr

from protokube.schema import deep, goshape, nesting, quantity, wellknown
from protokube.schema.shape import (
    BOOL,
    BYTES,
    FLOAT,
    INT,
    JSON_SCHEMA_PROPS,
    MESSAGE,
    SCHEMA_UNIONS,
    STRING,
    ZERO,
    FieldShape,
    MessageShape,
    shape,
)
from protokube.schema.validtext import valid_text

_INT_RANGES: Final = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}


@mypyc_attr(allow_interpreted_subclasses=True)  # gateway/objects/cbordecode.py's (tools/compile.py)
class DecodeError(ValueError):
    """The body cannot be decoded into the kind at all (upstream answers 400 BadRequest)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class Decoded:
    def __init__(
        self,
        message: Message,
        api_version: str = "",
        kind: str = "",
        unknown: list[str] | None = None,
        duplicates: list[str] | None = None,
    ) -> None:
        self.message = message
        # apiVersion and kind as the body states them ("" when absent).
        self.api_version = api_version
        self.kind = kind
        # Field-validation findings, in upstream's wording: 'unknown field "spec.foo"'.
        self.unknown: list[str] = [] if unknown is None else unknown
        self.duplicates: list[str] = [] if duplicates is None else duplicates

    @property
    def violations(self) -> list[str]:
        return [f'unknown field "{p}"' for p in self.unknown] + [f'duplicate field "{p}"' for p in self.duplicates]


class JSONObject(dict):
    """A parsed JSON object that remembers which keys it saw more than once."""

    __slots__ = ("duplicates", "yaml_errors")

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.duplicates: tuple[str, ...] = ()
        self.yaml_errors: tuple[str, ...] = ()
        if len(self) != len(pairs):
            seen: set[str] = set()
            dups = []
            for key, _ in pairs:
                if key in seen and key not in dups:
                    dups.append(key)
                seen.add(key)
            self.duplicates = tuple(dups)


def parse_json(data: bytes | str) -> Any:
    """Parse JSON as Go's decoder does, keeping track of duplicate keys.

    Like Go: invalid UTF-8 and lone UTF-16 surrogate escapes in strings become U+FFFD (Python would
    keep a lone surrogate, which no UTF-8 encoder accepts later); NaN and Infinity are not JSON.
    """
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    try:
        try:
            value = _DECODER.decode(data)
        except RecursionError:  # nested beyond Python's decoder, maybe not beyond Go's
            value = deep.parse(data, **_HOOKS)
    except ValueError as err:
        raise DecodeError(_json_syntax_message(err)) from None
    return without_lone_surrogates(value) if _ESCAPED_SURROGATE.search(data) else value


def _not_json(constant: str) -> None:
    raise DecodeError(f"json: invalid character '{constant[0]}' looking for beginning of value")


def _go_float(text: str) -> float:
    """A JSON number with a fraction or exponent; beyond float64 it is no number Go decodes."""
    number = float(text)
    if math.isinf(number):
        raise DecodeError(f"json: cannot unmarshal number {text} into Go value of type float64")
    return number


_HOOKS: Final[dict[str, Any]] = {"object_pairs_hook": JSONObject, "parse_constant": _not_json, "parse_float": _go_float}
_DECODER: Final = json.JSONDecoder(**_HOOKS)  # made once (json.loads with hooks makes a decoder per call)


# A \uD800-\uDFFF escape in JSON text (one of a pair, or a lone one).
_ESCAPED_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def go_values(value: Any) -> Any:
    """JSON values as Go decodes them into interface{} (unstructured objects): integers within
    int64, other numbers float64 (an integer beyond int64 becomes the nearest float64); NaN and
    ±Inf (which CBOR can carry) are refused; CBOR bytes under tag 22 (cbordecode.py keeps only
    those as bytes) are base64 text, as upstream's decoder makes them a string. Objects and arrays
    are changed in place."""
    return deep.transform(value, _go_scalar)


def _go_scalar(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, bytes):  # CBOR bytes under tag 22: base64 text, as Go decodes them into a string
        return base64.b64encode(value).decode()
    if isinstance(value, int):
        if _INT_RANGES["int64"][0] <= value <= _INT_RANGES["int64"][1]:
            return value
        try:
            return float(value)
        except OverflowError:
            raise DecodeError(f"json: cannot unmarshal number {value} into Go value of type float64") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise DecodeError(f"json: cannot unmarshal number {value} into Go value of type float64")
    return value


def without_lone_surrogates(value: Any) -> Any:
    """The same JSON values with every string (keys included) made valid text; objects in place."""
    return deep.transform(value, _valid_scalar, valid_text)


def _valid_scalar(value: Any) -> Any:
    return valid_text(value) if isinstance(value, str) else value


def _json_syntax_message(err: ValueError) -> str:
    if isinstance(err, DecodeError | deep.TooDeep):
        return str(err)
    if isinstance(err, json.JSONDecodeError):
        return f"json: {err.msg.lower()} at offset {err.pos}"
    return f"json: {err}"


def decode(data: Any, full_name: str, *, go_shape: bool = True) -> Decoded:
    """Decode a parsed JSON value into the message ``full_name``.

    ``go_shape`` brings the result into the shape Go's encoder gives it (goshape.normalize);
    callers that will change the message and normalize it afterwards may skip it here.
    """
    msg_shape = shape(full_name)
    if not isinstance(data, dict):
        go_type = _go_type_of_message(full_name)
        raise DecodeError(f"json: cannot unmarshal {_json_kind(data)} into Go value of type {go_type}")
    if nesting.unbounded(msg_shape.descriptor) and deep.depth(data) > nesting.MAX_DEPTH:
        limit = nesting.MAX_DEPTH
        raise DecodeError(f"json: exceeded max depth of {limit} for a {msg_shape.name} (this server's limit)")
    result = Decoded(message=msg_shape.cls())
    decoder = _Decoder(result)
    decoder.message(data, msg_shape, result.message, "", top=True)
    if go_shape:
        goshape.normalize(result.message)
    return result


def decode_bytes(body: bytes, full_name: str) -> Decoded:
    return decode(parse_json(body), full_name)


def set_field(target: Message, f: FieldShape, value: Any) -> None:
    """Set one field of ``target`` from a JSON value (e.g. a default the field's options state)."""
    msg_shape = shape(target.DESCRIPTOR.full_name)
    _Decoder(Decoded(message=target)).field(value, f, msg_shape, target, f.json_name)


class _Decoder:
    def __init__(self, result: Decoded) -> None:
        self.result = result

    def message(self, data: dict, msg_shape: MessageShape, target: Message, path: str, top: bool = False) -> None:
        if isinstance(data, JSONObject) and data.duplicates:
            self.result.duplicates.extend(_join(path, key) for key in data.duplicates)
        typemeta = msg_shape.has_type_meta
        for key, value in data.items():
            fields = msg_shape.by_json.get(key)
            if fields is None:
                if typemeta and key in ("kind", "apiVersion"):
                    if not isinstance(value, str | None):
                        raise DecodeError(self._type_error(value, msg_shape, _join(path, key), "string"))
                    if top:
                        setattr(self.result, "kind" if key == "kind" else "api_version", value or "")
                    continue
                self.result.unknown.append(_join(path, key))
                continue
            if value is None:
                continue
            owner, owner_shape = target, msg_shape
            for inline in fields[:-1]:
                owner = getattr(owner, inline.name)
                owner.SetInParent()
                owner_shape = shape(inline.message)
            self.field(value, fields[-1], owner_shape, owner, _join(path, key))

    def field(self, value: Any, f: FieldShape, parent: MessageShape, target: Message, path: str) -> None:
        if f.is_map:
            if not isinstance(value, dict):
                raise DecodeError(self._type_error(value, parent, path, _go_type(f)))
            if isinstance(value, JSONObject) and value.duplicates:
                self.result.duplicates.extend(_join(path, key) for key in value.duplicates)
            container = getattr(target, f.name)
            value_kind = f.value_kind
            assert value_kind is not None  # a map's values have a kind
            for key, item in value.items():
                if item is None:
                    if value_kind != MESSAGE:
                        container[key] = ZERO[value_kind]
                    continue
                if value_kind == MESSAGE:
                    self.into_message(item, f, parent, container[key], _join(path, key))
                else:
                    container[key] = self.scalar(item, value_kind, f, parent, path)
        elif f.repeated:
            if not isinstance(value, list):
                raise DecodeError(self._type_error(value, parent, path, _go_type(f)))
            container = getattr(target, f.name)
            if f.kind == MESSAGE:
                for i, item in enumerate(value):
                    element = container.add()
                    if item is not None:
                        self.into_message(item, f, parent, element, f"{path}[{i}]")
            else:
                container.extend(self.scalar(item, f.kind, f, parent, path) for item in value if item is not None)
        elif f.kind == MESSAGE:
            self.into_message(value, f, parent, getattr(target, f.name), path)
            getattr(target, f.name).SetInParent()
        else:
            setattr(target, f.name, self.scalar(value, f.kind, f, parent, path))

    def into_message(self, value: Any, f: FieldShape, parent: MessageShape, target: Message, path: str) -> None:
        if f.special in SCHEMA_UNIONS:
            self.schema_union(value, f, parent, target, path)
            return
        if f.special is not None:
            try:
                SPECIAL_DECODERS[f.special](value, target)
            except (TypeError, ValueError, KeyError) as err:
                raise DecodeError(self._special_error(value, f, parent, path, err), path) from None
            return
        if not isinstance(value, dict):
            raise DecodeError(self._type_error(value, parent, path, _go_type_of_message(f.message)))
        self.message(value, shape(f.message), target, path)

    def schema_union(self, value: Any, f: FieldShape, parent: MessageShape, target: Message, path: str) -> None:
        """apiextensions' UnmarshalJSON of JSONSchemaPropsOrArray, OrBool and OrStringArray: an
        object is the schema; other shapes than each union's second form leave it empty, except
        for OrBool, which refuses them."""
        props = shape(JSON_SCHEMA_PROPS)
        if isinstance(value, dict):
            if f.special == "schemaorbool":
                target.allows = True
            self.message(value, props, target.schema, path)
            target.schema.SetInParent()
        elif f.special == "schemaorbool":
            if not isinstance(value, bool):
                raise DecodeError("boolean or JSON schema expected", path)
            target.allows = value
        elif isinstance(value, list) and f.special == "schemaorarray":
            for i, item in enumerate(value):
                element = target.jSONSchemas.add()
                if item is not None:
                    if not isinstance(item, dict):
                        raise DecodeError(self._type_error(item, props, f"{path}[{i}]", "v1.JSONSchemaProps"), path)
                    self.message(item, props, element, f"{path}[{i}]")
        elif isinstance(value, list) and f.special == "schemaorstringarray":
            if not all(isinstance(item, str | None) for item in value):
                raise DecodeError(self._type_error(value, parent, path, "[]string"), path)
            target.property.extend(item or "" for item in value)

    def scalar(self, value: Any, kind: str, f: FieldShape, parent: MessageShape, path: str) -> Any:
        if kind == STRING:
            if isinstance(value, str):
                return value
            if isinstance(value, bytes):  # CBOR bytes under tag 22: a string expected as base64
                return base64.b64encode(value).decode()
        elif kind == BOOL:
            if isinstance(value, bool):
                return value
        elif kind == INT:
            if isinstance(value, int) and not isinstance(value, bool):
                low, high = _INT_RANGES.get(_go_scalar_type(f), _INT_RANGES["int64"])
                if low <= value <= high:
                    return value
                raise DecodeError(self._type_error(value, parent, path, _go_scalar_type(f), number=True), path)
            if isinstance(value, float):
                raise DecodeError(self._type_error(value, parent, path, _go_scalar_type(f), number=True), path)
        elif kind == FLOAT:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
        elif kind == BYTES and isinstance(value, bytes):  # CBOR bytes under tag 22, as []byte is written
            return value
        elif kind == BYTES and isinstance(value, str):
            try:
                return go_base64(value)
            except ValueError as err:
                raise DecodeError(f"json: {err} in Go struct field {parent.name}.{path}", path) from None
        raise DecodeError(self._type_error(value, parent, path, _go_scalar_type(f)), path)

    @staticmethod
    def _type_error(value: Any, parent: MessageShape, path: str, go_type: str, number: bool = False) -> str:
        described = f"number {value}" if number else _json_kind(value)
        where = f"{parent.name}.{_go_path(path)}"
        return f"json: cannot unmarshal {described} into Go struct field {where} of type {go_type}"

    @staticmethod
    def _special_error(value: Any, f: FieldShape, parent: MessageShape, path: str, err: Exception) -> str:
        if f.special == "quantity" and isinstance(value, str | int | float):
            return str(err)
        if f.special in ("time", "microtime", "duration") and isinstance(value, str):
            return str(err)
        return (
            f"json: cannot unmarshal {_json_kind(value)} into Go struct field {parent.name}.{_go_path(path)} "
            f"of type {_go_type_of_message(f.message)}"
        )


def _go_path(path: str) -> str:
    """Go names the field path without list indexes: spec.containers.ports.containerPort."""
    return _INDEX.sub("", path)


_INDEX: Final = re.compile(r"\[\d+\]")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def _go_scalar_type(f: FieldShape) -> str:
    fd = f.descriptor
    if f.is_map:
        entry = fd.message_type
        assert entry is not None  # a map field's entry message
        fd = entry.fields_by_name["value"]
    return _GO_SCALARS.get(fd.type, "string")


_GO_SCALARS: Final = {
    1: "float64",
    2: "float32",
    3: "int64",
    4: "uint64",
    5: "int32",
    8: "bool",
    9: "string",
    12: "[]uint8",
    13: "uint32",
}


def _go_type_of_message(full_name: str | None) -> str:
    package, _, name = (full_name or "").rpartition(".")
    return f"{package.rpartition('.')[2]}.{name}"


def _go_type(f: FieldShape) -> str:
    if f.is_map:
        value = _go_type_of_message(f.message) if f.value_kind == MESSAGE else _go_scalar_type(f)
        return f"map[string]{value}"
    element = _go_type_of_message(f.message) if f.kind == MESSAGE else _go_scalar_type(f)
    return f"[]{element}" if f.repeated else element


# Custom JSON forms (see jsonencode.SPECIAL_ENCODERS for the other direction).
def _set_time(value: Any, target: Message) -> None:
    seconds, _ = wellknown.parse_time(_expect_str(value))
    target.seconds = seconds


def _set_micro_time(value: Any, target: Message) -> None:
    seconds, nanos = wellknown.parse_time(_expect_str(value))
    target.seconds = seconds
    target.nanos = nanos // 1000 * 1000


def _set_quantity(value: Any, target: Message) -> None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TypeError("quantity")
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    target.string = quantity.canonical(text)


def _set_int_or_string(value: Any, target: Message) -> None:
    if isinstance(value, str):
        target.type, target.intVal, target.strVal = 1, 0, value
    elif isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        target.type, target.intVal, target.strVal = 0, value, ""
    else:
        raise TypeError("intorstring")


def _set_raw(value: Any, target: Message) -> None:
    target.raw = deep.dumps(value)


def _set_fields_v1(value: Any, target: Message) -> None:
    if not isinstance(value, dict):
        raise TypeError("fieldsv1")
    target.Raw = deep.dumps(value)


def _set_strings(value: Any, target: Message) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("strings")
    target.items.extend(value)


def _expect_str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("string expected")
    return value


SPECIAL_DECODERS: Final = {
    "time": _set_time,
    "microtime": _set_micro_time,
    "duration": lambda v, t: setattr(t, "duration", wellknown.parse_duration(_expect_str(v))),
    "quantity": _set_quantity,
    "intorstring": _set_int_or_string,
    "rawjson": _set_raw,
    "fieldsv1": _set_fields_v1,
    "strings": _set_strings,
}


BASE64_ALPHABET: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def go_base64(text: str) -> bytes:
    """Standard base64 as Go's decoder reads it: line breaks are skipped (``base64`` wraps its
    output at 76 columns), anything else outside the alphabet or bad padding is an error naming the
    offending input byte."""
    try:
        return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        offset = next((i for i, c in enumerate(text) if c not in BASE64_ALPHABET and c not in "\r\n"), 0)
        raise ValueError(f"illegal base64 data at input byte {offset}") from None
