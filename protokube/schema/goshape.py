"""Bringing a message into the shape Go's encoder gives it, so our protobuf bytes match upstream's.

Go writes every non-pointer scalar and struct field, even when empty; a proto2 message in Python
writes only the fields that are set. ``normalize`` sets those fields explicitly (recursively), so
that serializing the message yields the bytes a Go client would produce for the same object.

Each message type gets a plan once: the scalars and structs to set, and the message fields worth
descending into — those whose subtree has anything to set at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.schema.shape import MESSAGE, FieldShape, shape

QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
# A zero Time or MicroTime is an empty message (Go writes no seconds): nothing to set inside.
_LEAVE_AS_IS = frozenset({"time", "microtime"})


@dataclass(frozen=True, slots=True)
class _Plan:
    scalars: tuple[tuple[str, object], ...]  # always written: (field name, Go zero value)
    structs: tuple[str, ...]  # always-written message fields
    descend: frozenset[str]  # message fields whose contents may need work (structs included)


def _needs_work(f: FieldShape, seen: frozenset[str]) -> bool:
    if f.kind != MESSAGE or f.message is None or f.special in _LEAVE_AS_IS:
        return False
    return f.message == QUANTITY or _subtree_active(f.message, seen)


def _subtree_active(full_name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether normalizing a message of this type can ever change anything (recursion-safe)."""
    if full_name in seen:
        return False
    msg_shape = shape(full_name)
    return bool(msg_shape.always_written) or any(_needs_work(f, seen | {full_name}) for f in msg_shape.fields)


@functools.cache
def _plan(full_name: str) -> _Plan:
    msg_shape = shape(full_name)
    return _Plan(
        scalars=tuple((f.name, f.zero) for f in msg_shape.always_written if f.kind != MESSAGE),
        structs=tuple(f.name for f in msg_shape.always_written if f.kind == MESSAGE),
        descend=frozenset(f.name for f in msg_shape.fields if _needs_work(f, frozenset())),
    )


def normalize(message: Message) -> Message:
    """Set every field Go always writes; returns the same message."""
    plan = _plan(message.DESCRIPTOR.full_name)
    for name, zero in plan.scalars:
        if not message.HasField(name):
            setattr(message, name, zero)
    for name in plan.structs:
        getattr(message, name).SetInParent()
    if plan.descend:
        for fd, value in message.ListFields():
            if fd.name not in plan.descend:
                continue
            if fd.message_type.GetOptions().map_entry:
                for item in value.values():
                    _normalize_value(item)
            elif fd.is_repeated:
                for item in value:
                    _normalize_value(item)
            else:
                _normalize_value(value)
    return message


def _normalize_value(value: Message) -> None:
    if value.DESCRIPTOR.full_name == QUANTITY:
        if not value.string:
            value.string = "0"  # Go writes a zero Quantity as "0"
        return
    normalize(value)
