"""Bringing a message into the shape Go's encoder gives it, so our protobuf bytes match upstream's.

Go writes every non-pointer scalar and struct field, even when empty; a proto2 message in Python
writes only the fields that are set. ``normalize`` sets those fields explicitly (recursively), so
that serializing the message yields the bytes a Go client would produce for the same object.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.schema.shape import MESSAGE, shape


def normalize(message: Message) -> Message:
    """Set every field Go always writes; returns the same message."""
    msg_shape = shape(message.DESCRIPTOR.full_name)
    for field in msg_shape.always_written:
        if field.kind != MESSAGE:
            if not message.HasField(field.name):
                setattr(message, field.name, field.zero)
            continue
        child = getattr(message, field.name)
        child.SetInParent()
        _normalize_value(field.special, child)
    for field in msg_shape.fields:
        if field.kind != MESSAGE or field.always_written:
            continue
        if field.is_map:
            container = getattr(message, field.name)
            if field.value_kind == MESSAGE:
                for value in container.values():
                    _normalize_value(field.special, value)
        elif field.repeated:
            for value in getattr(message, field.name):
                _normalize_value(field.special, value)
        elif message.HasField(field.name):
            _normalize_value(field.special, getattr(message, field.name))
    return message


def _normalize_value(special: str | None, value: Message) -> None:
    if special in ("time", "microtime"):
        return  # zero time: an empty message; otherwise seconds (and nanos) as set
    if special == "quantity":
        if not value.string:
            value.string = "0"
        return
    normalize(value)
