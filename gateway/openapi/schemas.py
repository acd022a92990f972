"""OpenAPI schemas of messages, named and shaped as upstream's openapi-gen makes them.

A message becomes a definition named after its Go package (``k8s.io/api/core/v1`` →
``io.k8s.api.core.v1.Pod``) with its fields as properties under their JSON names (from
``protokube.schema.shape``), descriptions from the .proto comments, and the extensions upstream
derives from struct tags and markers: patch strategy and merge key, list type and map keys, map
type, group-version-kind. Types with custom JSON forms (Time, Quantity, IntOrString ...) are
definitions of their own, as upstream's.

The two document versions differ in small ways, both as upstream: OpenAPI v3 wraps a reference
that has sibling keys in ``allOf`` and gives Quantity and IntOrString ``oneOf`` types; v2 keeps
siblings next to ``$ref`` and has no defaults (kube-apiserver prunes them from v2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.openapi import descriptions
from protokube.schema import descriptors
from protokube.schema.registry import GroupVersionKind
from protokube.schema.shape import BOOL, BYTES, FLOAT, MESSAGE, META, SPECIAL_JSON, STRING, FieldShape, shape

Schema = dict[str, Any]

INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
TYPE_META = META + "TypeMeta"
# Kinds whose Go struct has no embedded TypeMeta (no apiVersion and kind properties).
NO_TYPE_META = frozenset({META + "WatchEvent"})
# Kinds upstream registers in every group version (their definitions list all of them).
IN_EVERY_GROUP_VERSION = "meta.k8s.io"

# Definitions of the types with custom JSON forms: (v2 schema, v3 schema), without descriptions.
_SPECIAL: dict[str, tuple[Schema, Schema]] = {
    "time": ({"type": "string", "format": "date-time"},) * 2,
    "microtime": ({"type": "string", "format": "date-time"},) * 2,
    "duration": ({"type": "string"},) * 2,
    "quantity": ({"type": "string"}, {"oneOf": [{"type": "string"}, {"type": "number"}]}),
    "intorstring": (
        {"type": "string", "format": "int-or-string"},
        {"oneOf": [{"type": "integer"}, {"type": "string"}], "format": "int-or-string"},
    ),
    "fieldsv1": ({"type": "object"},) * 2,
    "rawjson": ({},) * 2,
    "schemaorarray": ({},) * 2,
    "schemaorbool": ({},) * 2,
    "schemaorstringarray": ({},) * 2,
}
# RawExtension is "any JSON" to the codecs but an object to OpenAPI.
_OBJECT_MESSAGES = frozenset({"k8s.io.apimachinery.pkg.runtime.RawExtension"})

_LIST_TYPES = {opts.LIST_TYPE_ATOMIC: "atomic", opts.LIST_TYPE_SET: "set", opts.LIST_TYPE_MAP: "map"}
_GRANULARITY = {opts.GRANULARITY_ATOMIC: "atomic", opts.GRANULARITY_GRANULAR: "granular"}
_64_BIT = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
    }
)


def definition_name(full_name: str) -> str:
    """upstream's canonical name: the Go package with its domain reversed, then the type name."""
    message = descriptors.descriptor(full_name)
    go_package = message.file.GetOptions().go_package.split(";")[0] or message.file.package.replace(".", "/")
    domain, _, path = go_package.partition("/")
    prefix = ".".join([*reversed(domain.split(".")), *filter(None, path.split("/"))])
    return f"{prefix}.{message.name}"


def _scalar(fd: FieldDescriptor, kind: str) -> Schema:
    if kind == STRING:
        return {"type": "string"}
    if kind == BOOL:
        return {"type": "boolean"}
    if kind == BYTES:
        return {"type": "string", "format": "byte"}
    if kind == FLOAT:
        return {"type": "number", "format": "double" if fd.type == FieldDescriptor.TYPE_DOUBLE else "float"}
    return {"type": "integer", "format": "int64" if fd.type in _64_BIT else "int32"}


_ZERO = {"string": "", "boolean": False, "integer": 0, "number": 0}


@dataclass(frozen=True, slots=True)
class Flavor:
    """What differs between OpenAPI v2 and v3 documents."""

    v3: bool

    @property
    def ref_prefix(self) -> str:
        return "#/components/schemas/" if self.v3 else "#/definitions/"

    def ref(self, name: str, **siblings: Any) -> Schema:
        """A reference to a definition, with sibling keys (description, default ...)."""
        target = {"$ref": self.ref_prefix + name}
        if not self.v3:
            siblings.pop("default", None)
            return {**target, **siblings}
        return {"allOf": [target], **siblings} if siblings else target


V2, V3 = Flavor(v3=False), Flavor(v3=True)


def unstructured_name(gvk: GroupVersionKind) -> str:
    """The definition of a kind without a compiled message, named as upstream names a custom
    resource's: the group's domain reversed, the version, the kind (com.example.v1.Widget)."""
    return ".".join([*reversed(gvk.group.split(".")), gvk.version, gvk.kind])


class SchemaBuilder:
    """Definitions of messages and everything they reference, for one document.

    Definitions are asked for by message full name, or, for a kind without a compiled message, by
    its ``unstructured_name`` (a kind of ``unstructured``). ``gvks`` says which group-version-kinds
    each message is served as (its definition's ``x-kubernetes-group-version-kind``).
    """

    def __init__(
        self,
        flavor: Flavor,
        gvks: dict[str, list[GroupVersionKind]],
        unstructured: dict[str, GroupVersionKind] | None = None,
        custom: dict[str, Schema] | None = None,
    ) -> None:
        self.flavor = flavor
        self.gvks = gvks
        self.unstructured = unstructured or {}
        self.custom = custom or {}  # a CRD version's openAPIV3Schema, by its kind's definition name
        self.definitions: dict[str, Schema] = {}

    def ref(self, target: str, **siblings: Any) -> Schema:
        """A reference to a definition, adding it (and its dependencies) to the document."""
        self.add(target)
        name = target if target in self.unstructured else definition_name(target)
        return self.flavor.ref(name, **siblings)

    def add(self, target: str) -> None:
        gvk = self.unstructured.get(target)
        name = target if gvk else definition_name(target)
        if name in self.definitions:
            return
        self.definitions[name] = {}  # placed first: recursive types refer to themselves
        self.definitions[name] = self._unstructured(gvk) if gvk else self._definition(target)

    def _type_meta(self) -> dict[str, Schema]:
        return {
            fd.json_name: {"description": descriptions.of_field(TYPE_META, fd.name), "type": "string"}
            for fd in descriptors.descriptor(TYPE_META).fields
        }

    def _unstructured(self, gvk: GroupVersionKind) -> Schema:
        """A kind whose objects are any JSON with standard metadata (a list kind: its items), or
        what a CRD's schema says of them."""
        custom = self.custom.get(unstructured_name(gvk))
        if custom is not None:
            return self._custom(gvk, custom)
        properties = self._type_meta()
        gvk_extension = [{"group": gvk.group, "kind": gvk.kind, "version": gvk.version}]
        if gvk.kind.endswith("List"):
            item = unstructured_name(GroupVersionKind(gvk.group, gvk.version, gvk.kind.removesuffix("List")))
            properties["items"] = {"type": "array", "items": self.ref(item)}
            properties["metadata"] = self.ref(META + "ListMeta")
            return {
                "description": f"{gvk.kind} is a list of {gvk.kind.removesuffix('List')}",
                "properties": properties,
                "required": ["items"],
                "type": "object",
                "x-kubernetes-group-version-kind": gvk_extension,
            }
        properties["metadata"] = self.ref(META + "ObjectMeta")
        return {
            "properties": properties,
            "type": "object",
            "x-kubernetes-group-version-kind": gvk_extension,
            "x-kubernetes-preserve-unknown-fields": True,
        }

    def _custom(self, gvk: GroupVersionKind, props: Schema) -> Schema:
        """A CRD version's schema as upstream publishes it (apiextensions-apiserver
        pkg/controller/openapi/builder): with apiVersion, kind and ObjectMeta's metadata, and without
        what OpenAPI v2 cannot say (nullable, int-or-string types, CEL rules)."""
        schema = _published(props, self.flavor.v3)
        properties = schema.setdefault("properties", {})
        properties.update(self._type_meta())
        properties["metadata"] = self.ref(META + "ObjectMeta")
        schema["x-kubernetes-group-version-kind"] = [{"group": gvk.group, "kind": gvk.kind, "version": gvk.version}]
        return schema

    def _definition(self, full_name: str) -> Schema:
        message = shape(full_name)
        schema: Schema = {}
        if description := descriptions.of_message(full_name):
            schema["description"] = description
        special = _special_kind(full_name)
        if special is not None:
            schema.update(_SPECIAL[special][self.flavor.v3])
            return schema
        if full_name in _OBJECT_MESSAGES:
            return {**schema, "type": "object"}
        properties: dict[str, Schema] = {}
        required: list[str] = []
        if message.has_type_meta and full_name not in NO_TYPE_META:
            properties.update(self._type_meta())
        self._members(full_name, properties, required)
        schema["type"] = "object"
        if properties:
            schema["properties"] = properties
        if required:
            schema["required"] = required
        if message.atomic:
            schema["x-kubernetes-map-type"] = "atomic"
        if gvks := self.gvks.get(full_name):
            schema["x-kubernetes-group-version-kind"] = [
                {"group": g.group, "kind": g.kind, "version": g.version} for g in gvks
            ]
        return schema

    def _members(self, full_name: str, properties: dict[str, Schema], required: list[str]) -> None:
        for field in shape(full_name).fields:
            if field.inline and field.message:
                self._members(field.message, properties, required)
                continue
            properties[field.json_name] = self._property(full_name, field)
            if field.descriptor.GetOptions().Extensions[opts.field].required:
                required.append(field.json_name)

    def _property(self, owner: str, field: FieldShape) -> Schema:
        options = field.descriptor.GetOptions().Extensions[opts.field]
        extras: Schema = {}
        if description := descriptions.of_field(owner, field.name):
            extras["description"] = description
        default = _default(field, options)
        if default is not None and self.flavor.v3:
            extras["default"] = default
        extras.update(_extensions(field))
        if field.kind == MESSAGE and not (field.repeated or field.is_map) and field.special != "strings":
            assert field.message is not None
            return self.ref(field.message, **extras)
        enum: Schema = {"enum": list(options.enum)} if options.enum else {}  # of the values, in a list or map
        if field.is_map:
            body: Schema = {"type": "object", "additionalProperties": {**self._element(field, True), **enum}}
        elif field.repeated:
            body = {"type": "array", "items": {**self._element(field, False), **enum}}
        elif field.special == "strings":
            body = self._strings()
        else:
            body = {**_scalar(field.descriptor, field.kind), **enum}
        return {**extras, **body}

    def _element(self, field: FieldShape, map_value: bool) -> Schema:
        """The schema of a list's items or a map's values (Go value types: zero defaults)."""
        if map_value:
            value_fd = field.descriptor.message_type.fields_by_name["value"]
            kind = field.value_kind
        else:
            value_fd, kind = field.descriptor, field.kind
        if kind != MESSAGE:
            scalar = _scalar(value_fd, kind)
            zero = None if kind == BYTES else _ZERO[scalar["type"]]
            return {**scalar, "default": zero} if self.flavor.v3 and zero is not None else scalar
        assert field.message is not None
        if field.special == "strings":
            return self._strings()
        if field.special is not None or field.message in _OBJECT_MESSAGES:
            return self.ref(field.message)
        return self.ref(field.message, default={})

    def _strings(self) -> Schema:
        """A Go []string given a type of its own (metav1.Verbs, ExtraValue): inlined, as upstream."""
        item: Schema = {"type": "string", "default": ""} if self.flavor.v3 else {"type": "string"}
        return {"type": "array", "items": item}


def _special_kind(full_name: str) -> str | None:
    kind = SPECIAL_JSON.get(full_name)
    return None if kind in (None, "strings") else kind


def _default(field: FieldShape, options: opts.Field) -> Any:
    """The +default marker's value, or the zero value upstream enforces: {} for a struct held by
    value, the zero of a scalar without omitempty (never for pointers, lists, maps and the types
    with custom JSON forms, whose zero is null)."""
    if options.default_json:
        return json.loads(options.default_json)
    if field.nullable or field.repeated or field.is_map:
        return None
    if field.kind == MESSAGE:
        return {} if field.special is None and field.message not in _OBJECT_MESSAGES else None
    if field.emit_empty and field.kind != BYTES:
        return _ZERO[_scalar(field.descriptor, field.kind)["type"]]
    return None


def _extensions(field: FieldShape) -> Schema:
    out: Schema = {}
    if field.list_type in _LIST_TYPES:
        out["x-kubernetes-list-type"] = _LIST_TYPES[field.list_type]
    if field.list_map_keys:
        out["x-kubernetes-list-map-keys"] = list(field.list_map_keys)
    if field.granularity in _GRANULARITY:
        out["x-kubernetes-map-type"] = _GRANULARITY[field.granularity]
    if field.patch_merge_key:
        out["x-kubernetes-patch-merge-key"] = field.patch_merge_key
    if field.patch_strategy:
        out["x-kubernetes-patch-strategy"] = field.patch_strategy
    return out


# What a v2 document leaves out of a CRD's schema (OpenAPI v2 cannot state it).
_NOT_IN_V2 = ("nullable", "x-kubernetes-validations", "anyOf", "oneOf", "not", "allOf")


def _published(props: Schema, v3: bool) -> Schema:
    """A deep copy of a CRD schema as an OpenAPI document shows it."""
    if isinstance(props, list):
        return [_published(p, v3) for p in props]  # type: ignore[return-value]
    if not isinstance(props, dict):
        return props
    out = {}
    for key, value in props.items():
        if not v3 and key in _NOT_IN_V2:
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: _published(sub, v3) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = _published(value, v3)
        else:
            out[key] = value
    return out
