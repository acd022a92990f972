"""The error gogo-protobuf's generated Unmarshal returns for a malformed envelope (runtime.Unknown
and its TypeMeta), in its words: ``proto: illegal wireType 7``, ``unexpected EOF``, ``proto: wrong
wireType = 0 for field Raw``. kube-apiserver reads a protobuf body's envelope with that code.

Both messages hold length-delimited fields only; any other field is skipped as skipGenerated does.
"""

from __future__ import annotations

UNEXPECTED_EOF = "unexpected EOF"
INTEGER_OVERFLOW = "proto: integer overflow"
NEGATIVE_LENGTH = "proto: negative length found during unmarshaling"

# message name → {field number: (Go field name, nested message or None)}
MESSAGES: dict[str, dict[int, tuple[str, str | None]]] = {
    "Unknown": {1: ("TypeMeta", "TypeMeta"), 2: ("Raw", None), 3: ("ContentEncoding", None), 4: ("ContentType", None)},
    "TypeMeta": {1: ("APIVersion", None), 2: ("Kind", None)},
}


class _Malformed(Exception):
    pass


def unknown_error(data: bytes) -> str | None:
    """The generated Unknown.Unmarshal's error for ``data`` (after the magic), None if it has none."""
    try:
        _unmarshal(data, "Unknown")
    except _Malformed as err:
        return str(err)
    return None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A varint as Go's generated loop reads it (uint64); the value and the index after it."""
    value = 0
    for shift in range(0, 64, 7):
        if at >= len(data):
            raise _Malformed(UNEXPECTED_EOF)
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & (2**64 - 1), at
    raise _Malformed(INTEGER_OVERFLOW)


def _length(data: bytes, at: int) -> tuple[int, int]:
    """A length: a varint read into Go's int (negative past 2**63)."""
    value, at = _varint(data, at)
    if value >= 2**63:
        raise _Malformed(NEGATIVE_LENGTH)
    return value, at


def _unmarshal(data: bytes, message: str) -> None:
    fields = MESSAGES[message]
    at = 0
    while at < len(data):
        start = at
        wire, at = _varint(data, at)
        number, wire_type = _int32(wire >> 3), wire & 7  # Go's int32(wire >> 3) keeps the low 32 bits
        if wire_type == 4:
            raise _Malformed(f"proto: {message}: wiretype end group for non-group")
        if number <= 0:
            raise _Malformed(f"proto: {message}: illegal tag {number} (wire type {wire})")
        if number in fields:
            name, nested = fields[number]
            if wire_type != 2:
                raise _Malformed(f"proto: wrong wireType = {wire_type} for field {name}")
            length, at = _length(data, at)
            if at + length > len(data):
                raise _Malformed(UNEXPECTED_EOF)
            if nested is not None:
                _unmarshal(data[at : at + length], nested)
            at += length
        else:
            at = start + _skip(data[start:])
            if at > len(data):
                raise _Malformed(UNEXPECTED_EOF)


def _int32(number: int) -> int:
    number &= 2**32 - 1
    return number - 2**32 if number >= 2**31 else number


def _skip(data: bytes) -> int:
    """skipGenerated: the length of the field at the start of ``data``."""
    at, depth = 0, 0
    while at < len(data):
        wire, at = _varint(data, at)
        wire_type = wire & 7
        if wire_type == 0:
            _, at = _varint(data, at)
        elif wire_type == 1:
            at += 8
        elif wire_type == 2:
            length, at = _length(data, at)
            at += length
        elif wire_type == 3:
            depth += 1
        elif wire_type == 4:
            if depth == 0:
                raise _Malformed("proto: unexpected end of group")
            depth -= 1
        elif wire_type == 5:
            at += 4
        else:
            raise _Malformed(f"proto: illegal wireType {wire_type}")
        if depth == 0:
            return at
    raise _Malformed(UNEXPECTED_EOF)
