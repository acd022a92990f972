"""What the merge algorithms ask of an object's type (protokube.schema.typetree.Type).

structured-merge-diff resolves a schema per value; here a ``Type`` is already resolved. The few
questions it asks: the type of a struct field or map value, whether a list/map/struct is atomic, and
the default of a map-list key field (upstream fills a missing key field from the schema's default,
e.g. a container port without ``protocol`` is ``k:{"containerPort":80,"protocol":"TCP"}``).
"""

from __future__ import annotations

import functools
from typing import Any

import orjson

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.schema.shape import shape
from protokube.schema.typetree import (
    ATOMIC,
    DEDUCED,
    LIST,
    MAP,
    SCALAR,
    STRUCT,
    UNTYPED,
    Field,
    Type,
)

NO_DEFAULT: Any = object()

# The +default markers of list-map key fields in Kubernetes 1.32 (k8s.io/api core/v1 types.go), used
# while the .proto files do not carry them as ``default_json`` (see the package README in the report).
_KEY_DEFAULTS: dict[tuple[str, str], Any] = {
    ("k8s.io.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("k8s.io.api.core.v1.ServicePort", "protocol"): "TCP",
    ("k8s.io.api.core.v1.LocalObjectReference", "name"): "",
}

_STRING = Type(SCALAR, scalar="string")


def field_type(t: Type, name: str) -> Type | None:
    """The type of key ``name`` in an object of type ``t`` (None: not declared, upstream's empty TypeRef)."""
    if t.kind == STRUCT:
        f = t.fields.get(name)
        return f.type if f is not None else t.element
    if t.kind == MAP:
        return t.element
    if t.kind in (UNTYPED, DEDUCED):
        return t
    return None


def is_declared_field(t: Type, name: str) -> bool:
    """upstream's Map.FindField: a named field of a struct (map keys are not fields)."""
    return t.kind == STRUCT and name in t.fields


def is_atomic(t: Type) -> bool:
    if t.kind == LIST:
        return t.list_type == ATOMIC
    return t.atomic or t.kind == UNTYPED


@functools.cache
def _message_defaults(full_name: str) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    try:
        fields = shape(full_name).fields
    except (KeyError, LookupError):
        return defaults
    for f in fields:
        extensions: Any = f.descriptor.GetOptions().Extensions
        text: str = extensions[opts.field].default_json
        if text:
            defaults[f.json_name] = orjson.loads(text)
    return defaults


def key_default(element: Type, name: str) -> Any:
    """The schema default of a map-list key field, or NO_DEFAULT."""
    if element.kind != STRUCT or not element.name:
        return NO_DEFAULT
    defaults = _message_defaults(element.name)
    if name in defaults:
        return defaults[name]
    return _KEY_DEFAULTS.get((element.name, name), NO_DEFAULT)


_EXACT: dict[int, tuple[Type, bool]] = {}


def python_equality_is_exact(t: Type) -> bool:
    """Whether Python's ``==`` on values of this type is upstream's value.Equals, so that equal
    subtrees can be skipped at C speed. It is, unless untyped values occur (where ``true == 1``
    would hold in Python): typed scalars of one field never mix booleans and numbers."""
    known = _EXACT.get(id(t))
    if known is not None and known[0] is t:
        return known[1]
    exact = not _reaches_untyped(t, set())
    _EXACT[id(t)] = (t, exact)
    return exact


def _reaches_untyped(t: Type, seen: set[int]) -> bool:
    if t.kind in (UNTYPED, DEDUCED):
        return True
    if t.kind == SCALAR or id(t) in seen:
        return False
    seen.add(id(t))
    if t.element is not None and _reaches_untyped(t.element, seen):
        return True
    return t.kind == STRUCT and any(_reaches_untyped(f.type, seen) for f in t.fields.values())


# Keyed by identity: types built by hand (tests, custom resources) may compare equal by name alone.
_OBJECT_TYPES: dict[int, tuple[Type, Type]] = {}


def object_type(t: Type) -> Type:
    """A kind's type as the OpenAPI schema states it: its fields plus ``apiVersion`` and ``kind``."""
    if t.kind != STRUCT or ("apiVersion" in t.fields and "kind" in t.fields):
        return t
    cached = _OBJECT_TYPES.get(id(t))
    if cached is not None and cached[0] is t:
        return cached[1]
    fields: dict[str, Field] = {"apiVersion": Field("apiVersion", _STRING), "kind": Field("kind", _STRING)}
    fields.update(t.fields)
    out = Type(STRUCT, name=t.name, element=t.element, atomic=t.atomic, _fields=fields)
    _OBJECT_TYPES[id(t)] = (t, out)
    return out


def empty_object(t: Type, kind: str, api_version: str) -> dict[str, Any]:
    """What upstream's ``Creater.New(kind)`` is as JSON: the Go zero value of the kind (non-pointer
    structs present, ``creationTimestamp: null``...), from the compiled message through the codec."""
    from protokube.schema.jsonencode import object_to_dict

    if t.kind == STRUCT and t.name:
        try:
            return object_to_dict(shape(t.name).cls(), kind, api_version)
        except (KeyError, LookupError):
            pass
    return {"apiVersion": api_version, "kind": kind}
