"""The shape of each message as the codecs need it, read once from descriptors and options.

A ``MessageShape`` lists a message's fields in declaration order (which is upstream's Go struct
order, and so the JSON key order) with their JSON names and the Go facts carried by
``protokube.options.v1.field``: pointer-ness (``nullable``), ``omitempty`` (``emit_empty``) and the
patch/apply strategies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.schema import descriptors

META = "k8s.io.apimachinery.pkg.apis.meta.v1."

# Messages whose JSON form is not an object of their fields (upstream custom marshalers).
EXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
JSON_SCHEMA_PROPS = EXTENSIONS + "JSONSchemaProps"
SPECIAL_JSON = {
    META + "Time": "time",
    META + "MicroTime": "microtime",
    META + "Duration": "duration",
    META + "FieldsV1": "fieldsv1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
    # Any JSON value, kept as its bytes (field ``raw``).
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "rawjson",
    EXTENSIONS + "JSON": "rawjson",
    # A Go []string given a type of its own (field ``items``): a JSON array.
    META + "Verbs": "strings",
    "k8s.io.api.authentication.v1.ExtraValue": "strings",
    "k8s.io.api.authorization.v1.ExtraValue": "strings",
    "k8s.io.api.certificates.v1.ExtraValue": "strings",
    # JSON Schema unions: a schema object, or a list of schemas / a boolean / a list of names.
    EXTENSIONS + "JSONSchemaPropsOrArray": "schemaorarray",
    EXTENSIONS + "JSONSchemaPropsOrBool": "schemaorbool",
    EXTENSIONS + "JSONSchemaPropsOrStringArray": "schemaorstringarray",
}
SCHEMA_UNIONS = frozenset({"schemaorarray", "schemaorbool", "schemaorstringarray"})

# Field kinds, coarser than protobuf's types: what the codecs switch on.
STRING, INT, BOOL, BYTES, FLOAT, MESSAGE = "string", "int", "bool", "bytes", "float", "message"
_KIND_BY_TYPE = {
    FieldDescriptor.TYPE_STRING: STRING,
    FieldDescriptor.TYPE_BYTES: BYTES,
    FieldDescriptor.TYPE_BOOL: BOOL,
    FieldDescriptor.TYPE_DOUBLE: FLOAT,
    FieldDescriptor.TYPE_FLOAT: FLOAT,
    FieldDescriptor.TYPE_MESSAGE: MESSAGE,
}
ZERO = {STRING: "", INT: 0, BOOL: False, BYTES: b"", FLOAT: 0.0}


@dataclass(frozen=True, slots=True)
class FieldShape:
    name: str
    json_name: str
    number: int
    kind: str
    repeated: bool
    is_map: bool
    # For message fields (and map values): the message's full name.
    message: str | None
    # For message fields (and map values): its special JSON form, if any (see SPECIAL_JSON).
    special: str | None
    # For map fields: the kind of the values.
    value_kind: str | None
    nullable: bool
    emit_empty: bool
    inline: bool
    patch_strategy: str
    patch_merge_key: str
    list_type: int
    list_map_keys: tuple[str, ...]
    granularity: int
    descriptor: FieldDescriptor

    @property
    def zero(self) -> object:
        """The Go zero value of a scalar field."""
        return ZERO.get(self.kind, 0)

    @property
    def always_written(self) -> bool:
        """Go writes this field to protobuf even when empty: a non-pointer scalar or struct.

        Byte slices are the exception: Go writes them only when non-nil, like lists.
        """
        return not (self.nullable or self.repeated or self.is_map or self.kind == BYTES)


@dataclass(frozen=True, slots=True)
class MessageShape:
    full_name: str
    name: str
    fields: tuple[FieldShape, ...]
    # JSON key -> the fields to follow: one, or an inlined struct's field then the field inside it.
    by_json: dict[str, tuple[FieldShape, ...]]
    # Fields Go writes even when empty, which the protobuf message must hold explicitly.
    always_written: tuple[FieldShape, ...]
    atomic: bool
    # A top-level kind: its JSON carries kind and apiVersion (Go's inlined TypeMeta).
    has_type_meta: bool
    descriptor: Descriptor
    cls: type[Message]


def _field_shape(fd: FieldDescriptor) -> FieldShape:
    fo = fd.GetOptions().Extensions[opts.field]
    is_map = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    target = fd.message_type.fields_by_name["value"] if is_map else fd
    message = target.message_type.full_name if target.message_type is not None else None
    return FieldShape(
        name=fd.name,
        json_name=fd.json_name,
        number=fd.number,
        kind=MESSAGE if is_map else _KIND_BY_TYPE.get(fd.type, INT),
        repeated=fd.is_repeated and not is_map,
        is_map=is_map,
        message=message,
        special=SPECIAL_JSON.get(message) if message else None,
        value_kind=_KIND_BY_TYPE.get(target.type, INT) if is_map else None,
        nullable=fo.nullable,
        emit_empty=fo.emit_empty,
        inline=fo.inline,
        patch_strategy=fo.patch_strategy,
        patch_merge_key=fo.patch_merge_key,
        list_type=fo.list_type,
        list_map_keys=tuple(fo.list_map_keys),
        granularity=fo.granularity,
        descriptor=fd,
    )


@functools.cache
def shape(full_name: str) -> MessageShape:
    """The shape of a message by full name (cached: shapes never change at run time)."""
    desc = descriptors.descriptor(full_name)
    fields = tuple(_field_shape(fd) for fd in desc.fields)
    return MessageShape(
        full_name=full_name,
        name=desc.name,
        fields=fields,
        by_json=_json_index(fields),
        always_written=tuple(f for f in fields if f.always_written),
        atomic=desc.GetOptions().Extensions[opts.atomic],
        has_type_meta=desc.GetOptions().HasExtension(opts.kind),
        descriptor=desc,
        cls=descriptors.message_class(full_name),
    )


def _json_index(fields: tuple[FieldShape, ...]) -> dict[str, tuple[FieldShape, ...]]:
    index: dict[str, tuple[FieldShape, ...]] = {}
    for f in fields:
        if f.inline and f.message:
            index.update({key: (f, *path) for key, path in shape(f.message).by_json.items()})
        else:
            index[f.json_name] = (f,)
    return index


def shape_of(message: Message) -> MessageShape:
    return shape(message.DESCRIPTOR.full_name)
