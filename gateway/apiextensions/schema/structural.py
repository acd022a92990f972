"""A CRD version's schema: the rules that make it structural (upstream's
pkg/apiserver/schema/validation.go and pkg/apis/apiextensions/validation/validation.go), and the
``Structural`` object that defaults, prunes and validates custom objects with it."""

from __future__ import annotations

import copy
import re
from typing import Any

# Submodules by their own names (not through the package, whose __init__ imports this module).
import protokube.gateway.apiextensions.schema.cel as cel
import protokube.gateway.apiextensions.schema.celcost as celcost
import protokube.gateway.apiextensions.schema.defaulting as defaulting
import protokube.gateway.apiextensions.schema.pruning as pruning
import protokube.gateway.apiextensions.schema.typing_ as typing_
import protokube.gateway.apiextensions.schema.validation as validation
from protokube.gateway.apiextensions.schema.node import Node, parse
from protokube.gateway.cel.cost import offloaded
from protokube.gateway.errors import FieldError
from protokube.schema.typetree import Type

TYPES = ("array", "boolean", "integer", "number", "object", "string")
# How deeply schemas may nest in one another here. Upstream knows no limit but the JSON decoder's
# (10,000 levels); walks over schemas here recurse, so protokube refuses deeper ones.
MAX_DEPTH = 64
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "items")
_SCHEMAS = ("items", "additionalProperties", "additionalItems", "not")
LIST_TYPES = ("atomic", "set", "map")
MAP_TYPES = ("granular", "atomic")
# The root's metadata may only say something about the name (validation.go: validateStructuralMetadataInvariants).
ROOT_METADATA = frozenset({"name", "generateName"})
# Keywords a structural schema may not use (upstream's validateStructuralInvariants and the CRD rules).
FORBIDDEN_KEYWORDS = {
    "$ref": "$ref is not supported",
    "dependencies": "dependencies is not supported",
    "patternProperties": "patternProperties is not supported",
    "definitions": "definitions is not supported",
    "id": "id is not supported",
    "$schema": "$schema is not supported",
}


class Structural:
    """A structural schema, ready to default, prune and validate objects (as JSON values)."""

    def __init__(self, root: Node) -> None:
        self.root = root
        self.has_rules = cel.has_rules(root)  # any x-kubernetes-validations (upstream: a CEL validator)

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> Structural:
        return cls(parse(props))

    def default(self, obj: dict[str, Any]) -> None:
        defaulting.apply(obj, self.root)

    def prune(self, obj: dict[str, Any]) -> list[str]:
        return pruning.prune(obj, self.root)

    def validate(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
        return validation.validate(obj, old, self.root)

    def validate_schema(self, obj: dict[str, Any]) -> list[FieldError]:
        """All but the CEL rules (``validate_rules``)."""
        return validation.validate_schema(obj, self.root)

    async def validate_rules(self, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
        """The CEL rules, within their runtime cost budget, off the event loop when they take long."""
        return await offloaded(lambda: cel.evaluate(self.root, obj, old))

    def type_tree(self) -> Type:
        return typing_.type_tree(self.root)


def structural_errors(props: dict[str, Any], path: str, *, expression_costs: bool = True) -> list[FieldError]:
    """Why ``props`` (a version's openAPIV3Schema) is not an acceptable structural schema
    (``expression_costs``: whether one rule may be refused for its cost, not only all together)."""
    levels = depth(props)
    if levels > MAX_DEPTH:
        detail = f"must not nest schemas more than {MAX_DEPTH} levels deep (this server's limit), found {levels}"
        return [FieldError.forbidden(path, detail)]
    found: list[FieldError] = []
    if not props.get("type"):
        found.append(FieldError.required(f"{path}.type", "must not be empty at the root"))
    elif props["type"] != "object":
        found.append(FieldError.invalid(f"{path}.type", props["type"], "must be object at the root"))
    metadata = (props.get("properties") or {}).get("metadata")
    if isinstance(metadata, dict):
        extra = set(metadata) - {"type"} or set(metadata.get("properties") or {}) - ROOT_METADATA
        if extra or metadata.get("type", "object") != "object":
            found.append(
                FieldError.forbidden(
                    f"{path}.properties[metadata]",
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    _check(props, path, found)
    if not found:  # upstream estimates the rules' cost of a schema without other errors
        found += celcost.cost_errors(parse(props), path, expression_costs=expression_costs)
    return found


def depth(props: dict[str, Any]) -> int:
    """How many schemas nest in one another in ``props``, itself included."""
    deepest = 0
    stack = [(props, 1)]
    while stack:
        schema, level = stack.pop()
        deepest = max(deepest, level)
        inner: list[Any] = [schema.get(keyword) for keyword in _SCHEMAS]
        for keyword in _SCHEMA_MAPS:
            value = schema.get(keyword)
            inner += value.values() if isinstance(value, dict) else ()
        for keyword in _SCHEMA_LISTS:
            value = schema.get(keyword)
            inner += value if isinstance(value, list) else ()
        stack.extend((sub, level + 1) for sub in inner if isinstance(sub, dict))
    return deepest


def _check(props: dict[str, Any], path: str, found: list[FieldError], *, value_only: bool = False) -> None:
    for keyword, detail in FORBIDDEN_KEYWORDS.items():
        if keyword in props:
            found.append(FieldError.forbidden(f"{path}.{keyword}", detail))
    kind = props.get("type") or ""
    if kind and kind not in TYPES:
        found.append(FieldError.not_supported(f"{path}.type", kind, TYPES))
    if value_only:
        for keyword in ("type", "properties", "items", "additionalProperties", "default", "nullable"):
            if keyword in props:
                found.append(FieldError.forbidden(f"{path}.{keyword}", "must be empty to be structural"))
    if props.get("x-kubernetes-int-or-string") and kind:
        found.append(FieldError.forbidden(f"{path}.type", "must be empty if x-kubernetes-int-or-string is true"))
    if "properties" in props and "additionalProperties" in props:
        found.append(
            FieldError.forbidden(
                f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"
            )
        )
    if props.get("additionalProperties") is False:
        found.append(FieldError.forbidden(f"{path}.additionalProperties", "must not be used if false"))
    _check_extensions(props, path, found)
    _check_values(props, path, found)
    for name, sub in (props.get("properties") or {}).items():
        where = f"{path}.properties[{name}]"
        if not isinstance(sub, dict):
            continue
        _require_type(sub, where, "must not be empty for specified object fields", found)
        _check(sub, where, found)
    items = props.get("items")
    if isinstance(items, dict):
        _require_type(items, f"{path}.items", "must not be empty for specified array items", found)
        _check(items, f"{path}.items", found)
    elif items is not None:
        found.append(FieldError.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    elif kind == "array":
        found.append(FieldError.required(f"{path}.items", "must be specified"))
    additional = props.get("additionalProperties")
    if isinstance(additional, dict):
        _require_type(
            additional, f"{path}.additionalProperties", "must not be empty for specified object fields", found
        )
        _check(additional, f"{path}.additionalProperties", found)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(props.get(keyword) or ()):
            if isinstance(sub, dict):
                _check(sub, f"{path}.{keyword}[{i}]", found, value_only=True)
    if isinstance(props.get("not"), dict):
        _check(props["not"], f"{path}.not", found, value_only=True)
    if props.get("x-kubernetes-embedded-resource") and not (
        props.get("x-kubernetes-preserve-unknown-fields") or props.get("properties")
    ):
        found.append(
            FieldError.required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )


def _require_type(props: dict[str, Any], path: str, detail: str, found: list[FieldError]) -> None:
    if (
        not props.get("type")
        and not props.get("x-kubernetes-int-or-string")
        and not props.get("x-kubernetes-preserve-unknown-fields")
    ):
        found.append(FieldError.required(f"{path}.type", detail))


def _check_extensions(props: dict[str, Any], path: str, found: list[FieldError]) -> None:
    list_type = props.get("x-kubernetes-list-type")
    if list_type is not None:
        if props.get("type") != "array":
            found.append(
                FieldError.invalid(f"{path}.x-kubernetes-list-type", list_type, "must only be used if type is array")
            )
        elif list_type not in LIST_TYPES:
            found.append(FieldError.not_supported(f"{path}.x-kubernetes-list-type", list_type, LIST_TYPES))
    keys = props.get("x-kubernetes-list-map-keys")
    if list_type == "map":
        items = props.get("items") if isinstance(props.get("items"), dict) else {}
        if not keys:
            found.append(
                FieldError.required(
                    f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"
                )
            )
        elif items.get("type") != "object":
            found.append(
                FieldError.invalid(
                    f"{path}.items.type",
                    items.get("type", ""),
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        else:
            for i, key in enumerate(keys):
                key_schema = (items.get("properties") or {}).get(key)
                if key_schema is None:
                    found.append(
                        FieldError.invalid(
                            f"{path}.x-kubernetes-list-map-keys[{i}]",
                            key,
                            "entries must all be names of item properties",
                        )
                    )
    elif keys:
        found.append(
            FieldError.forbidden(
                f"{path}.x-kubernetes-list-map-keys", 'must only be used if x-kubernetes-list-type is "map"'
            )
        )
    map_type = props.get("x-kubernetes-map-type")
    if map_type is not None and map_type not in MAP_TYPES:
        found.append(FieldError.not_supported(f"{path}.x-kubernetes-map-type", map_type, MAP_TYPES))
    if props.get("x-kubernetes-validations"):
        found += cel.compile_errors(props, path)


def _check_values(props: dict[str, Any], path: str, found: list[FieldError]) -> None:
    pattern = props.get("pattern")
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as err:
            found.append(
                FieldError.invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {err}")
            )
    if "default" in props and props["default"] is not None:
        sub = parse(props)
        problems = validation.validate_value(props["default"], sub, f"{path}.default")
        found += problems
        pruned = pruning.prune_value(copy.deepcopy(props["default"]), sub, f"{path}.default")
        for field_path in pruned:
            found.append(
                FieldError.invalid(
                    f"{path}.default", props["default"], f"must not have unknown fields, but has {field_path}"
                )
            )
