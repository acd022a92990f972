"""Applying upstream's defaults to an object (the generated ``SetObjectDefaults_<Kind>`` of each
group: k8s.io/kubernetes pkg/apis/<group>/<version>/zz_generated.defaults.go).

Two kinds of default exist upstream, and both are applied here while walking the object:
- constant ``+default=`` markers, which the protos carry as the field option ``default_json``
  (they show up in OpenAPI too): an unset field gets the value;
- ``SetDefaults_<Type>`` functions for what depends on other fields, registered here with
  ``@defaulter("<message full name>")`` by one module per group in this package.

Each message is visited before the messages inside it, as upstream's generated walkers call a
type's function before those of its members; a field's marker is applied before its type's
function. Pointer (``nullable``) messages are visited only when set; Go's non-pointer structs
always exist, so they are visited set or not (protobuf marks them set once a default lands).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.schema import jsondecode
from protokube.schema.shape import MESSAGE, FieldShape, shape

Defaulter = Callable[[Message], None]
# The functions of each message type, by its full name, in registration order.
DEFAULTERS: dict[str, list[Defaulter]] = {}


def defaulter(full_name: str) -> Callable[[Defaulter], Defaulter]:
    """Register a function that defaults messages of type ``full_name`` in place."""

    def register(func: Defaulter) -> Defaulter:
        DEFAULTERS.setdefault(full_name, []).append(func)
        _plan.cache_clear()
        return func

    return register


@dataclass(frozen=True, slots=True)
class _Plan:
    """What defaulting a message of one type does: constant defaults, functions, members to visit."""

    constants: tuple[tuple[FieldShape, object], ...]
    functions: tuple[Defaulter, ...]
    # Member messages whose subtree defaults something: (field, visited when unset).
    members: tuple[tuple[FieldShape, bool], ...]

    @property
    def empty(self) -> bool:
        return not (self.constants or self.functions or self.members)


@functools.cache
def _plan(full_name: str, seen: frozenset[str] = frozenset()) -> _Plan:
    msg_shape = shape(full_name)
    constants = []
    for f in msg_shape.fields:
        default = f.descriptor.GetOptions().Extensions[opts.field].default_json
        if default:
            constants.append((f, orjson.loads(default)))
    members = []
    for f in msg_shape.fields:
        if f.kind != MESSAGE or f.special is not None or f.message is None or f.message in seen:
            continue
        if not _plan(f.message, seen | {full_name}).empty:
            members.append((f, not (f.nullable or f.repeated or f.is_map)))
    return _Plan(tuple(constants), tuple(DEFAULTERS.get(full_name, ())), tuple(members))


def apply_defaults(message: Message) -> None:
    """Default ``message`` and everything inside it, in place."""
    plan = _plan(message.DESCRIPTOR.full_name)
    if plan.empty:
        return
    for f, value in plan.constants:
        if not _is_set(message, f):
            jsondecode.set_field(message, f, value)
    for func in plan.functions:
        func(message)
    for f, always in plan.members:
        if f.is_map:
            for item in getattr(message, f.name).values():
                apply_defaults(item)
        elif f.repeated:
            for item in getattr(message, f.name):
                apply_defaults(item)
        elif always or message.HasField(f.name):
            apply_defaults(getattr(message, f.name))


def _is_set(message: Message, f: FieldShape) -> bool:
    """Whether Go would see a value: set pointers, non-empty lists and maps, non-zero scalars."""
    if f.repeated or f.is_map:
        return len(getattr(message, f.name)) > 0
    if f.nullable or f.kind == MESSAGE:
        return message.HasField(f.name)
    return getattr(message, f.name) != f.zero
