"""The type tree apply and the merge algorithms use for a custom resource, as upstream converts the
schema (kube-openapi's schemaconv over the CRD's published OpenAPI): x-kubernetes-list-type,
-list-map-keys and -map-type decide how lists and maps merge and who owns what. An object that
preserves unknown fields, and every object below it, takes its undeclared keys as deduced values;
so does an object with neither properties nor additionalProperties. Embedded resources get
apiVersion, kind and metadata, as the published schema adds them."""

from __future__ import annotations

from protokube.gateway.apiextensions.schema.node import Node
from protokube.gateway.objects.unstructured import OBJECT_META
from protokube.schema.typetree import (
    ASSOCIATIVE,
    ATOMIC,
    DEDUCED_TYPE,
    LIST,
    MAP,
    SCALAR,
    SET,
    STRUCT,
    UNTYPED,
    Field,
    Type,
    proto_type,
)

_LIST_TYPES = {"atomic": ATOMIC, "set": SET, "map": ASSOCIATIVE}
_STRING = Type(SCALAR, scalar="string")


def type_tree(node: Node, preserve: bool = False) -> Type:
    """``preserve``: an ancestor preserves unknown fields."""
    preserve = preserve or node.preserve_unknown
    if node.int_or_string:
        return Type(SCALAR, scalar="int-or-string")
    if node.type == "array":
        element = type_tree(node.items, preserve) if node.items is not None else Type(UNTYPED)
        return Type(
            LIST, element=element, list_type=_LIST_TYPES.get(node.list_type, ATOMIC), map_keys=node.list_map_keys
        )
    if node.type == "object" or node.properties or node.additional is not None:
        atomic = node.map_type == "atomic"
        if node.additional is not None and not node.properties:
            return Type(MAP, element=type_tree(node.additional, preserve), atomic=atomic)
        fields = {name: Field(name, type_tree(sub, preserve)) for name, sub in node.properties.items()}
        if node.embedded:
            fields["apiVersion"] = Field("apiVersion", _STRING)
            fields["kind"] = Field("kind", _STRING)
            fields["metadata"] = Field("metadata", proto_type(OBJECT_META))
        element = DEDUCED_TYPE if preserve or not node.properties else None
        if not fields:
            return Type(MAP, element=element, atomic=atomic)
        return Type(STRUCT, element=element, atomic=atomic, _fields=fields)
    if node.type:
        return Type(SCALAR, scalar=node.type)
    return DEDUCED_TYPE if preserve else Type(UNTYPED)
