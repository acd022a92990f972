"""``protokube wire``: print protobuf bytes as an annotated tree, field by field.

For people studying the wire format: every field shows its byte offset, field number, wire type,
the field's name and type from our descriptors, and its decoded value. Envelopes (``k8s\\x00`` +
runtime.Unknown) are opened and their raw bytes decoded as the kind the typeMeta names; so are
the objects inside watch events. Field numbers the descriptors do not know are shown as unknown,
never dropped. Input: a single enveloped object or list, a length-prefixed watch stream (as
served with ``;stream=watch``), or plain message bytes with ``--type``.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from protokube.schema import descriptors
from protokube.schema.envelope import MAGIC
from protokube.schema.registry import GroupVersionKind, registry

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
WIRE_NAMES = {VARINT: "VARINT", I64: "I64", LEN: "LEN", SGROUP: "SGROUP", EGROUP: "EGROUP", I32: "I32"}
UNKNOWN_MESSAGE = "k8s.io.apimachinery.pkg.runtime.Unknown"
WATCH_EVENT = "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent"


class WireError(ValueError):
    """Bytes that are not valid protobuf wire format at a given offset."""


@dataclass(frozen=True, slots=True)
class RawField:
    offset: int  # where the tag starts
    number: int
    wire_type: int
    value: int | bytes
    value_offset: int  # where the value (after a length prefix) starts
    end: int  # one past the field's last byte


def read_varint(data: bytes, pos: int, base: int = 0) -> tuple[int, int]:
    """A varint at ``pos``; errors name offsets relative to ``base``."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError(f"offset {base + pos}: truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError(f"offset {base + pos}: varint too long")


def iter_fields(data: bytes, base: int = 0) -> Iterator[RawField]:
    """Split bytes into fields; offsets are reported relative to ``base``."""
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = read_varint(data, pos, base)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise WireError(f"offset {base + start}: field number 0 is invalid")
        if wire_type == VARINT:
            value_start = pos
            value, pos = read_varint(data, pos, base)
            yield RawField(base + start, number, wire_type, value, base + value_start, base + pos)
        elif wire_type in (I64, I32):
            size = 8 if wire_type == I64 else 4
            if pos + size > len(data):
                raise WireError(f"offset {base + pos}: truncated fixed{size * 8} value")
            value = int.from_bytes(data[pos : pos + size], "little")
            yield RawField(base + start, number, wire_type, value, base + pos, base + pos + size)
            pos += size
        elif wire_type == LEN:
            length, pos = read_varint(data, pos, base)
            if pos + length > len(data):
                raise WireError(f"offset {base + pos}: length {length} runs past the end ({len(data) - pos} left)")
            yield RawField(base + start, number, wire_type, data[pos : pos + length], base + pos, base + pos + length)
            pos += length
        else:
            raise WireError(f"offset {base + start}: unsupported wire type {wire_type} (groups are not used)")


_TYPE_NAMES = {
    FieldDescriptor.TYPE_DOUBLE: "double",
    FieldDescriptor.TYPE_FLOAT: "float",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_UINT64: "uint64",
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_FIXED64: "fixed64",
    FieldDescriptor.TYPE_FIXED32: "fixed32",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BYTES: "bytes",
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_ENUM: "enum",
    FieldDescriptor.TYPE_SFIXED32: "sfixed32",
    FieldDescriptor.TYPE_SFIXED64: "sfixed64",
    FieldDescriptor.TYPE_SINT32: "sint32",
    FieldDescriptor.TYPE_SINT64: "sint64",
}


def _type_name(fd: FieldDescriptor) -> str:
    if fd.message_type is not None:
        return fd.message_type.full_name
    return _TYPE_NAMES.get(fd.type, "?")


def _scalar(fd: FieldDescriptor | None, f: RawField) -> str:
    value = f.value
    if isinstance(value, bytes):
        if fd is not None and fd.type == FieldDescriptor.TYPE_STRING:
            return repr(value.decode("utf-8", "backslashreplace")).replace("'", '"', 2) if value else '""'
        return f"{len(value)} bytes {value[:48].hex(' ')}{' …' if len(value) > 48 else ''}"
    if fd is None:
        return str(value)
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return "true" if value else "false"
    if fd.type in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_INT32) and value >= 2**63:
        return str(value - 2**64)
    if fd.type in (FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64):
        return str((value >> 1) ^ -(value & 1))
    if fd.type == FieldDescriptor.TYPE_DOUBLE:
        return str(struct.unpack("<d", value.to_bytes(8, "little"))[0])
    if fd.type == FieldDescriptor.TYPE_FLOAT:
        return str(struct.unpack("<f", value.to_bytes(4, "little"))[0])
    if fd.type == FieldDescriptor.TYPE_ENUM and fd.enum_type is not None:
        named = fd.enum_type.values_by_number.get(value)
        return f"{named.name} ({value})" if named else str(value)
    return str(value)


@dataclass
class Node:
    """One line of the annotated tree: a field (or an envelope, object or frame) and the bytes it
    covers, ``start`` to ``end``; a field's value starts at ``value_start``."""

    start: int
    end: int
    text: str  # the line as ``protokube wire`` prints it
    number: int = 0  # field number (0: not a field)
    wire_type: str = ""
    name: str = ""  # from the descriptors ("" when unknown)
    type: str = ""
    value: str = ""  # the decoded scalar, as printed
    value_start: int = -1
    unknown: bool = False  # a field number the message's descriptor does not have
    children: list[Node] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The node as JSON values (what /debug/wire/decode answers)."""
        out: dict[str, Any] = {"start": self.start, "end": self.end, "text": self.text}
        if self.number:
            out.update(number=self.number, wireType=self.wire_type, name=self.name, type=self.type)
            out.update(value=self.value, valueStart=self.value_start, unknown=self.unknown)
        out["children"] = [child.to_dict() for child in self.children]
        return out


class Decoder:
    """Builds the tree of one input; ``root.children`` keeps what was read before a WireError."""

    def __init__(self) -> None:
        self.root = Node(0, 0, "")
        self.stack = [self.root]

    def add(self, start: int, end: int, text: str, **facts: Any) -> Node:
        node = Node(start, end, text, **facts)
        self.stack[-1].children.append(node)
        return node

    @contextmanager
    def under(self, node: Node) -> Iterator[None]:
        self.stack.append(node)
        try:
            yield
        finally:
            self.stack.pop()

    def field_node(self, f: RawField, text: str, fd: FieldDescriptor | None, unknown: bool, value: str = "") -> Node:
        name, type_ = (fd.name, _type_name(fd)) if fd is not None else ("", "")
        wire = WIRE_NAMES[f.wire_type]
        return self.add(
            f.offset, f.end, text, number=f.number, wire_type=wire, name=name, type=type_, value=value,
            value_start=f.value_offset, unknown=unknown,
        )  # fmt: skip

    def message(self, data: bytes, desc: Descriptor | None, base: int) -> None:
        kind_hint: GroupVersionKind | None = None
        for f in iter_fields(data, base):
            fd = desc.fields_by_number.get(f.number) if desc is not None else None
            head = f"[{f.number}] {WIRE_NAMES[f.wire_type]:<6}"
            if fd is None:
                label = "unknown field" if desc is not None else "field"
                value = _scalar(None, f)
                node = self.field_node(f, f"{head} ({label}) = {value}", None, desc is not None, value)
                if f.wire_type == LEN and desc is not None:
                    with self.under(node):
                        self._try_nested(f)
                continue
            name = f"{fd.name}: {_type_name(fd)}"
            if fd.message_type is not None and f.wire_type == LEN:
                node = self.field_node(f, f"{head} {name} ({len(f.value)} bytes)", fd, False)
                with self.under(node):
                    self.message(f.value, fd.message_type, f.value_offset)
            elif fd.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES) or f.wire_type != LEN:
                value = _scalar(fd, f)
                node = self.field_node(f, f"{head} {name} = {value}", fd, False, value)
                if fd.name in ("raw", "Raw") and isinstance(f.value, bytes):
                    with self.under(node):
                        self.open_raw(f.value, f.value_offset, kind_hint)
            else:  # packed repeated scalars
                node = self.field_node(f, f"{head} {name} (packed, {len(f.value)} bytes)", fd, False)
                with self.under(node):
                    pos = 0
                    while pos < len(f.value):
                        value, end = read_varint(f.value, pos)
                        at = f.value_offset + pos
                        packed = RawField(at, f.number, VARINT, value, at, f.value_offset + end)
                        self.add(packed.offset, packed.end, f"= {_scalar(fd, packed)}", value=_scalar(fd, packed))
                        pos = end
            if desc is not None and desc.full_name == UNKNOWN_MESSAGE and fd.name == "typeMeta":
                kind_hint = _type_meta(f.value)

    def open_raw(self, raw: bytes, base: int, hint: GroupVersionKind | None) -> None:
        """Open the bytes of a raw field: an envelope, or an object of the kind the envelope named."""
        if raw.startswith(MAGIC):
            self.add(base, base + 4, "magic k8s\\x00 (6b 38 73 00): Kubernetes protobuf envelope")
            node = self.add(base + 4, base + len(raw), f"runtime.Unknown ({len(raw) - 4} bytes)")
            with self.under(node):
                self.message(raw[4:], descriptors.descriptor(UNKNOWN_MESSAGE), base + 4)
        elif hint is not None:
            message = registry().kinds.get(hint)
            desc = descriptors.descriptor(message) if message else None
            title = f"{hint.kind} ({message})" if message else f"{hint.kind} (no message known; raw fields)"
            with self.under(self.add(base, base + len(raw), f"object {title}", type=message or "")):
                self.message(raw, desc, base)

    def _try_nested(self, f: RawField) -> None:
        try:
            list(iter_fields(f.value))
        except WireError:
            return
        if f.value:
            self.message(f.value, None, f.value_offset)


def _type_meta(data: bytes) -> GroupVersionKind | None:
    fields = {f.number: f.value for f in iter_fields(data)}
    api_version = fields.get(1, b"").decode("utf-8", "replace") if isinstance(fields.get(1), bytes) else ""
    kind = fields.get(2, b"").decode("utf-8", "replace") if isinstance(fields.get(2), bytes) else ""
    group, _, version = api_version.rpartition("/")
    return GroupVersionKind(group, version, kind) if kind else None


def split_watch_frames(data: bytes) -> list[tuple[int, bytes]]:
    """Split a length-prefixed stream into (offset, frame); WireError if it is not one."""
    frames, pos = [], 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise WireError(f"offset {pos}: truncated frame length")
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if pos + 4 + length > len(data):
            raise WireError(f"offset {pos}: frame of {length} bytes runs past the end")
        frames.append((pos, data[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    return frames


def decode(data: bytes, form: str = "auto", type_name: str | None = None, into: Decoder | None = None) -> Node:
    """The annotated tree of some bytes; ``form`` is auto, envelope, watch or message (with
    ``type_name``). On a WireError, ``into.root`` keeps what was read before it."""
    decoder = into if into is not None else Decoder()
    if form == "auto":
        form = _detect(data, type_name)
    if form == "envelope":
        decoder.open_raw(data, 0, None)
    elif form == "watch":
        event = descriptors.descriptor(WATCH_EVENT)
        for offset, frame in split_watch_frames(data):
            text = f"frame: 4-byte big-endian length {len(frame)}, then {WATCH_EVENT}"
            with decoder.under(decoder.add(offset, offset + 4 + len(frame), text, type=WATCH_EVENT)):
                decoder.message(frame, event, offset + 4)
    else:
        desc = descriptors.descriptor(resolve_type(type_name)) if type_name else None
        decoder.message(data, desc, 0)
    decoder.root.end = len(data)
    return decoder.root


def lines(root: Node) -> list[str]:
    """The tree as ``protokube wire`` prints it: offset, indentation by depth, text."""
    out: list[str] = []

    def walk(node: Node, depth: int) -> None:
        for child in node.children:
            out.append(f"{child.start:06d}  {'  ' * depth}{child.text}")
            walk(child, depth + 1)

    walk(root, 0)
    return out


def _detect(data: bytes, type_name: str | None) -> str:
    if data.startswith(MAGIC):
        return "envelope"
    if type_name:
        return "message"
    try:
        frames = split_watch_frames(data)
        for _, frame in frames:
            list(iter_fields(frame))
        if frames:
            return "watch"
    except WireError:
        pass
    return "message"


class UnknownType(ValueError):
    """A --type that names no message, or several."""


def resolve_type(name: str) -> str:
    """A full message name, or a kind name such as Pod or apps/v1/Deployment."""
    if "." in name:
        descriptors.descriptor(name)  # KeyError when the project defines none
        return name
    matches = [m for gvk, m in registry().kinds.items() if gvk.kind == name or f"{gvk.api_version}/{gvk.kind}" == name]
    if len(matches) != 1:
        raise UnknownType(f"type {name!r} names {len(matches)} kinds; give a full message name")
    return matches[0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="protokube wire", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="input file (default: standard input)")
    parser.add_argument("--form", choices=["auto", "envelope", "watch", "message"], default="auto")
    parser.add_argument("--type", help="message full name or kind, for bytes without an envelope")
    args = parser.parse_args(argv)
    data = open(args.file, "rb").read() if args.file else sys.stdin.buffer.read()  # noqa: SIM115
    decoder = Decoder()
    try:
        decode(data, args.form, args.type, decoder)
    except (WireError, UnknownType, KeyError) as err:
        print("\n".join(["offset  field", *lines(decoder.root)]))
        print(f"protokube wire: {err.args[0] if err.args else err}", file=sys.stderr)
        return 1
    print("\n".join(["offset  field", *lines(decoder.root)]))
    return 0
