"""The type tree apply and the merge algorithms use for a custom resource (upstream builds it from
the same schema: x-kubernetes-list-type, -list-map-keys and -map-type decide how lists and maps
merge and who owns what)."""

from __future__ import annotations

from gateway.apiextensions.schema.node import Node
from protokube.schema.typetree import ASSOCIATIVE, ATOMIC, LIST, MAP, SCALAR, SET, STRUCT, UNTYPED, Field, Type

_LIST_TYPES = {"atomic": ATOMIC, "set": SET, "map": ASSOCIATIVE}


def type_tree(node: Node) -> Type:
    if node.preserve_unknown and not node.properties and node.additional is None:
        return Type(UNTYPED)
    if node.int_or_string:
        return Type(SCALAR, scalar="int-or-string")
    if node.type == "array":
        element = type_tree(node.items) if node.items is not None else Type(UNTYPED)
        return Type(
            LIST, element=element, list_type=_LIST_TYPES.get(node.list_type, ATOMIC), map_keys=node.list_map_keys
        )
    if node.type == "object" or node.properties or node.additional is not None:
        atomic = node.map_type == "atomic"
        if node.additional is not None and not node.properties:
            return Type(MAP, element=type_tree(node.additional), atomic=atomic)
        fields = {name: Field(name, type_tree(sub)) for name, sub in node.properties.items()}
        return Type(STRUCT, atomic=atomic, _fields=fields)
    return Type(SCALAR, scalar=node.type or "untyped") if node.type else Type(UNTYPED)
