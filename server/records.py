"""In-memory records (a key's state, a watch event) and their protobuf encoding.

Hot paths (Range over many keys, watch fan-out) send pre-encoded bytes: each record encodes
itself once, and responses are assembled by concatenation, byte-identical to what the
generated classes would produce (fields in number order, proto3 defaults omitted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from protokube.gen.mvccpb import kv_pb2

PUT: Final = 0
DELETE: Final = 1
# Every byte below 0x80 as bytes of its own: a one-byte varint, and every tag byte these messages have
# (``bytes((n,))`` builds a tuple and calls the bytes type each time).
_SMALL: Final = tuple(bytes((n,)) for n in range(0x80))


def varint(n: int) -> bytes:
    """Protobuf base-128 varint; negative int64 values use their 64-bit two's complement."""
    if n < 0:
        n += 1 << 64
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field_bytes(tag: int, data: bytes) -> bytes:
    """A length-delimited field: tag byte, length, data."""
    return _SMALL[tag] + varint(len(data)) + data


def field_int(tag: int, n: int) -> bytes:
    """A varint field, omitted when zero (proto3)."""
    return _SMALL[tag] + varint(n) if n else b""


class Entry:
    """One key's state at one revision (a live key, never a tombstone)."""

    __slots__ = ("_encoded", "create", "key", "lease", "mod", "value", "version")

    def __init__(self, key: bytes, create: int, mod: int, version: int, value: bytes, lease: int) -> None:
        self.key = key
        self.create = create
        self.mod = mod
        self.version = version
        self.value = value
        self.lease = lease
        self._encoded: bytes | None = None

    def encoded(self) -> bytes:
        """This entry as serialized mvccpb.KeyValue bytes (computed once)."""
        if self._encoded is None:
            self._encoded = (
                field_bytes(0x0A, self.key)
                + field_int(0x10, self.create)
                + field_int(0x18, self.mod)
                + field_int(0x20, self.version)
                + (field_bytes(0x2A, self.value) if self.value else b"")
                + field_int(0x30, self.lease)
            )
        return self._encoded

    def encoded_key_only(self) -> bytes:
        """mvccpb.KeyValue bytes without the value (RangeRequest.keys_only)."""
        return (
            field_bytes(0x0A, self.key)
            + field_int(0x10, self.create)
            + field_int(0x18, self.mod)
            + field_int(0x20, self.version)
            + field_int(0x30, self.lease)
        )

    def message(self) -> kv_pb2.KeyValue:
        return kv_pb2.KeyValue(
            key=self.key,
            create_revision=self.create,
            mod_revision=self.mod,
            version=self.version,
            value=self.value,
            lease=self.lease,
        )


class Event:
    """One committed change of one key: PUT with the new entry, or DELETE (key + revision)."""

    __slots__ = ("_encoded", "_encoded_prev", "entry", "key", "prev", "rev", "type")

    def __init__(self, type_: int, key: bytes, rev: int, entry: Entry | None, prev: Entry | None) -> None:
        self.type = type_
        self.key = key
        self.rev = rev
        self.entry = entry
        self.prev = prev
        self._encoded: bytes | None = None
        self._encoded_prev: bytes | None = None

    def _kv(self) -> bytes:
        if self.entry is not None:
            return self.entry.encoded()
        return field_bytes(0x0A, self.key) + field_int(0x18, self.rev)

    def encoded(self, with_prev: bool) -> bytes:
        """Serialized mvccpb.Event bytes, with or without prev_kv (each computed once)."""
        if with_prev and self.prev is not None:
            if self._encoded_prev is None:
                self._encoded_prev = (
                    field_int(0x08, self.type) + field_bytes(0x12, self._kv()) + field_bytes(0x1A, self.prev.encoded())
                )
            return self._encoded_prev
        if self._encoded is None:
            self._encoded = field_int(0x08, self.type) + field_bytes(0x12, self._kv())
        return self._encoded


def put_response(header: bytes, prev_kv: bytes | None) -> bytes:
    """Serialized etcdserverpb.PutResponse."""
    return field_bytes(0x0A, header) + (field_bytes(0x12, prev_kv) if prev_kv is not None else b"")


def range_response(header: bytes, kvs: list[bytes], more: bool, count: int) -> bytes:
    """Serialized etcdserverpb.RangeResponse."""
    parts = [field_bytes(0x0A, header)]
    parts += [b"\x12" + varint(len(kv)) + kv for kv in kvs]
    if more:
        parts.append(b"\x18\x01")
    parts.append(field_int(0x20, count))
    return b"".join(parts)


def watch_response(
    header: bytes,
    watch_id: int,
    events: Sequence[bytes] = (),
    *,
    created: bool = False,
    canceled: bool = False,
    compact_revision: int = 0,
    cancel_reason: str = "",
    fragment: bool = False,
) -> bytes:
    """Serialized etcdserverpb.WatchResponse."""
    parts = [field_bytes(0x0A, header), field_int(0x10, watch_id)]
    if created:
        parts.append(b"\x18\x01")
    if canceled:
        parts.append(b"\x20\x01")
    parts.append(field_int(0x28, compact_revision))
    if cancel_reason:
        parts.append(field_bytes(0x32, cancel_reason.encode()))
    if fragment:
        parts.append(b"\x38\x01")
    parts += [b"\x5a" + varint(len(ev)) + ev for ev in events]
    return b"".join(parts)
