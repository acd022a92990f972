"""CBOR pieces the encoders and codecs share (RFC 8949), written as upstream's CBOR serializer does.

Strings and map keys are byte strings, map keys in bytewise-lexical order of their encodings; every
top-level item starts with the self-described tag 55799 (``d9 d9 f7``). Bodies are read in cbordecode.py.
"""

from __future__ import annotations

from typing import Any

import cbor2

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
    """As upstream's CBOR encoder writes: every string and map key a byte string of its UTF-8
    (StringToByteString, FieldNameToByteString), map keys in bytewise-lexical order of their encodings."""
    return cbor2.dumps(_byte_strings(value), canonical=True)


def _byte_strings(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dict):
        return {k.encode() if isinstance(k, str) else k: _byte_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_byte_strings(v) for v in value]
    return value


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
