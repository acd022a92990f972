"""A protobuf decoder that knows nothing but wirefacts/k8s-fields.json.

It reads the server's protobuf bytes with upstream's field facts alone (numbers, types, labels,
map shapes of Kubernetes 1.36's generated.proto files), not with this project's compiled
messages, so a test built on it checks the wire format against upstream, not against itself.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

FACTS: dict[str, Any] = json.loads((Path(__file__).parents[2] / "wirefacts" / "k8s-fields.json").read_text())
MAGIC = b"k8s\x00"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_SIGNED_VARINTS = {"TYPE_INT32", "TYPE_INT64"}
_UNSIGNED_VARINTS = {"TYPE_UINT32", "TYPE_UINT64", "TYPE_ENUM"}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, raw value) of every field, in order."""
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire == FIXED64:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == LENGTH:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == FIXED32:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire} of field {number} is not used by Kubernetes")
        out.append((number, wire, value))
    return out


def _scalar(kind: str, raw: Any) -> Any:
    if kind == "TYPE_STRING":
        return raw.decode()
    if kind == "TYPE_BYTES":
        return bytes(raw)
    if kind == "TYPE_BOOL":
        return bool(raw)
    if kind in _SIGNED_VARINTS:
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if kind in _UNSIGNED_VARINTS:
        return raw
    if kind == "TYPE_DOUBLE":
        return struct.unpack("<d", raw)[0]
    if kind == "TYPE_FLOAT":
        return struct.unpack("<f", raw)[0]
    raise ValueError(f"field type {kind} is not used by Kubernetes")


def decode(data: bytes, message: str) -> dict[str, Any]:
    """A message as a dict of field name -> value (lists for repeated fields, dicts for maps)."""
    facts = {f["number"]: f for f in FACTS[message]}
    out: dict[str, Any] = {}
    for number, _wire, raw in _fields(data):
        field = facts.get(number)
        if field is None:
            out.setdefault("?unknown", []).append(number)
            continue
        name = field["name"]
        if "map" in field:
            entry = dict(((n, r) for n, _w, r in _fields(raw)))
            shape = field["map"]
            key = _scalar(shape["key"], entry.get(1, b"" if shape["key"] == "TYPE_STRING" else 0))
            if shape["value_type"] == "TYPE_MESSAGE":
                value = decode(entry.get(2, b""), shape["value"])
            else:
                value = _scalar(shape["value_type"], entry.get(2, b"" if shape["value_type"] == "TYPE_STRING" else 0))
            out.setdefault(name, {})[key] = value
            continue
        value = decode(raw, field["type_name"]) if field["type"] == "TYPE_MESSAGE" else _scalar(field["type"], raw)
        if field["label"] == "LABEL_REPEATED":
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    return out


def decode_object(body: bytes, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An enveloped object (``k8s\\0`` + runtime.Unknown): its type meta and the object itself."""
    assert body[:4] == MAGIC, body[:8]
    unknown = decode(body[4:], UNKNOWN)
    return unknown.get("typeMeta", {}), decode(unknown.get("raw", b""), message)
