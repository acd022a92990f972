"""One node of a structural schema: the JSONSchemaProps of a CRD, parsed once into what defaulting,
pruning and validation ask of it (upstream's structuralschema.Structural, with its value validations
kept beside it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Node:
    type: str = ""  # object, array, string, integer, number, boolean, or "" (int-or-string, preserve-unknown)
    properties: dict[str, Node] = field(default_factory=dict)
    items: Node | None = None
    additional: Node | None = None  # additionalProperties as a schema (a map's values)
    description: str = ""
    format: str = ""
    nullable: bool = False
    default: Any = None
    has_default: bool = False
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    pattern: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    min_properties: int | None = None
    max_properties: int | None = None
    preserve_unknown: bool = False  # x-kubernetes-preserve-unknown-fields
    int_or_string: bool = False  # x-kubernetes-int-or-string
    embedded: bool = False  # x-kubernetes-embedded-resource
    list_type: str = ""  # x-kubernetes-list-type: atomic, set, map
    list_map_keys: tuple[str, ...] = ()  # x-kubernetes-list-map-keys
    map_type: str = ""  # x-kubernetes-map-type: granular, atomic
    rules: tuple[dict[str, Any], ...] = ()  # x-kubernetes-validations
    # Value validations under allOf/anyOf/oneOf/not (structural schemas allow them without types).
    all_of: tuple[Node, ...] = ()
    any_of: tuple[Node, ...] = ()
    one_of: tuple[Node, ...] = ()
    not_: Node | None = None


def parse(props: dict[str, Any]) -> Node:
    """A JSONSchemaProps (as JSON) → its Node; unknown keywords are left to structural_errors."""
    node = Node(
        type=props.get("type") or "",
        description=props.get("description") or "",
        format=props.get("format") or "",
        nullable=bool(props.get("nullable")),
        required=tuple(props.get("required") or ()),
        pattern=props.get("pattern") or "",
        minimum=props.get("minimum"),
        maximum=props.get("maximum"),
        exclusive_minimum=bool(props.get("exclusiveMinimum")),
        exclusive_maximum=bool(props.get("exclusiveMaximum")),
        multiple_of=props.get("multipleOf"),
        min_length=props.get("minLength"),
        max_length=props.get("maxLength"),
        min_items=props.get("minItems"),
        max_items=props.get("maxItems"),
        unique_items=bool(props.get("uniqueItems")),
        min_properties=props.get("minProperties"),
        max_properties=props.get("maxProperties"),
        preserve_unknown=bool(props.get("x-kubernetes-preserve-unknown-fields")),
        int_or_string=bool(props.get("x-kubernetes-int-or-string")),
        embedded=bool(props.get("x-kubernetes-embedded-resource")),
        list_type=props.get("x-kubernetes-list-type") or "",
        list_map_keys=tuple(props.get("x-kubernetes-list-map-keys") or ()),
        map_type=props.get("x-kubernetes-map-type") or "",
        rules=tuple(props.get("x-kubernetes-validations") or ()),
    )
    if "default" in props:
        node.default, node.has_default = props["default"], True
    if props.get("enum") is not None:
        node.enum = tuple(props["enum"])
    node.properties = {name: parse(sub) for name, sub in (props.get("properties") or {}).items()}
    if isinstance(props.get("items"), dict):
        node.items = parse(props["items"])
    additional = props.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional = parse(additional)
    elif additional is True:
        node.preserve_unknown = node.preserve_unknown or not node.properties
    node.all_of = tuple(parse(p) for p in props.get("allOf") or ())
    node.any_of = tuple(parse(p) for p in props.get("anyOf") or ())
    node.one_of = tuple(parse(p) for p in props.get("oneOf") or ())
    if isinstance(props.get("not"), dict):
        node.not_ = parse(props["not"])
    return node
