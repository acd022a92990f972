"""How deeply messages nest: which kinds can nest without bound, and how deeply protobuf bytes nest,
found without parsing them.

Most kinds nest no deeper than their messages do; a CustomResourceDefinition's schema is a
JSONSchemaProps within JSONSchemaProps, as deep as a client makes it. The walks over messages
(decoding, normalizing, encoding) recurse, and upb, which parses stored objects with its depth
limit raised (see envelope.py), recurses in C: bodies of such kinds are refused beyond
``MAX_DEPTH`` levels before either runs.
"""

from __future__ import annotations

import functools

from google.protobuf.descriptor import Descriptor

MAX_DEPTH = 200  # levels of nested messages (or of nested JSON objects and arrays for them)
_LENGTH_DELIMITED = 2
_SKIP = {0: -1, 1: 8, 5: 4}  # wire type → bytes to skip (-1: a varint)


@functools.cache
def unbounded(descriptor: Descriptor) -> bool:
    """Whether messages of this type can nest without bound: a message type it reaches (itself
    included) reaches itself."""
    on_path, done = {descriptor.full_name}, set()
    stack = [(descriptor, iter(_inner(descriptor)))]
    while stack:
        message, inner = stack[-1]
        for child in inner:
            if child.full_name in on_path:
                return True
            if child.full_name not in done:
                on_path.add(child.full_name)
                stack.append((child, iter(_inner(child))))
                break
        else:
            on_path.discard(message.full_name)
            done.add(message.full_name)
            stack.pop()
    return False


def _inner(descriptor: Descriptor) -> list[Descriptor]:
    return [field.message_type for field in descriptor.fields if field.message_type is not None]


def too_deep(data: bytes, descriptor: Descriptor, limit: int = MAX_DEPTH) -> bool:
    """Whether protobuf bytes of a ``descriptor`` message nest more than ``limit`` messages deep
    (maps' entries count, as upb counts them). Malformed bytes are left to the parser: False."""
    pos, size = 0, len(data)
    stack = [(size, descriptor)]  # the messages being read: where each ends, and its type
    while stack:
        end, message = stack[-1]
        if pos >= end:
            stack.pop()
            continue
        key, pos = _varint(data, pos)
        if key < 0:
            return False
        wire = key & 7
        if wire == _LENGTH_DELIMITED:
            length, pos = _varint(data, pos)
            if length < 0 or pos + length > end:
                return False
            field = message.fields_by_number.get(key >> 3)
            if field is not None and field.message_type is not None:
                if len(stack) >= limit:
                    return True
                stack.append((pos + length, field.message_type))
                continue
            pos += length
        elif wire in _SKIP:
            if _SKIP[wire] < 0:
                _, pos = _varint(data, pos)
            else:
                pos += _SKIP[wire]
            if pos < 0 or pos > end:
                return False
        else:
            return False  # groups are no Kubernetes encoding
    return False


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and where it ends; (-1, -1) when it is cut short."""
    value, shift = 0, 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    return -1, -1
