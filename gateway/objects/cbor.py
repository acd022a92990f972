"""CBOR pieces the encoders and codecs share (RFC 8949), written as upstream's CBOR serializer does.

Map keys in bytewise-lexical order of their encodings; every top-level item starts with the
self-described tag 55799 (``d9 d9 f7``). Bodies are read as upstream's decode mode reads them
(k8s.io/apimachinery runtime/serializer/cbor/internal/modes/decode.go): JSON's values only.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from typing import Any

import cbor2

from protokube.schema.jsondecode import DecodeError

SELF_DESCRIBED = b"\xd9\xd9\xf7"


def head(major: int, length: int) -> bytes:
    """The initial bytes of a CBOR item of ``major`` type with ``length`` (RFC 8949 3.1)."""
    if length < 24:
        return bytes([(major << 5) | length])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes([(major << 5) | info]) + length.to_bytes(size, "big")
    raise ValueError("CBOR length too large")


def dumps(value: Any) -> bytes:
    """Map keys in bytewise-lexical order of their encodings, as upstream's CBOR encoder sorts them."""
    return cbor2.dumps(value, canonical=True)


def list_body(kind: str, api_version: str, list_meta: dict[str, Any], items: list[bytes]) -> bytes:
    """A list from its items' encoded bytes; keys in canonical order: kind, items, metadata, apiVersion."""
    return b"".join(
        (
            head(5, 4),
            dumps("kind"),
            dumps(kind),
            dumps("items"),
            head(4, len(items)),
            *items,
            dumps("metadata"),
            dumps(list_meta),
            dumps("apiVersion"),
            dumps(api_version),
        )
    )


# upstream's decode mode limits
MAX_NESTED_LEVELS = 64
MAX_ELEMENTS = 1024
INT64 = (-(2**63), 2**63 - 1)


def loads(body: bytes) -> Any:
    """CBOR bytes → JSON values (dicts, lists, str, int, float, bool, None) and byte strings,
    as upstream's decoder reads them: an unrecognized tag stands for its content, time tags
    become RFC 3339 strings; NaN, ±Inf, integers beyond int64, bignums, other simple values and
    nesting or sizes beyond upstream's limits are refused (DecodeError)."""
    try:
        value = cbor2.loads(body)  # the self-described tag 55799, if present, is dropped
    except (cbor2.CBORDecodeError, ValueError, TypeError, RecursionError, OverflowError) as err:
        raise DecodeError(f"cbor: {err}") from None
    return _json_value(value, 1)


def _json_value(value: Any, level: int) -> Any:
    if level > MAX_NESTED_LEVELS:
        raise DecodeError(f"cbor: exceeded max nested level {MAX_NESTED_LEVELS}")
    while isinstance(value, cbor2.CBORTag):
        value = value.value
    if value is None or isinstance(value, bool | str | bytes):
        return value
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise DecodeError(f"cbor: {value} overflows Go's int64")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DecodeError(f"cbor: floating-point number {value} is not accepted")
        return value
    if isinstance(value, datetime.datetime):
        return _rfc3339_nano(value)
    if isinstance(value, Mapping):
        if len(value) > MAX_ELEMENTS:
            raise DecodeError(f"cbor: exceeded max number of key-value pairs {MAX_ELEMENTS} for CBOR map")
        if not all(isinstance(k, str) for k in value):
            raise DecodeError("cbor: map keys must be text strings")
        return {k: _json_value(v, level + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if len(value) > MAX_ELEMENTS:
            raise DecodeError(f"cbor: exceeded max number of elements {MAX_ELEMENTS} for CBOR array")
        return [_json_value(v, level + 1) for v in value]
    raise DecodeError(f"cbor: cannot decode {type(value).__name__} into a JSON value")


def _rfc3339_nano(moment: datetime.datetime) -> str:
    """Go's time.RFC3339Nano: the fraction without trailing zeros, Z for UTC."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    offset = moment.utcoffset()
    if not offset:
        return text + "Z"
    return text + moment.isoformat()[-6:]
