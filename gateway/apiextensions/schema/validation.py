"""Validation of custom objects against their structural schema, worded as upstream's kube-openapi
validator and apiextensions-apiserver's conversion of its results to field errors
(pkg/apiserver/validation/validation.go ValidateCustomResource)."""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from protokube.gateway.apiextensions.schema.cel import evaluate as evaluate_rules
from protokube.gateway.apiextensions.schema.embedded import embedded_resource_errors
from protokube.gateway.apiextensions.schema.formats import INTEGER_RANGES, STRING_FORMATS
from protokube.gateway.apiextensions.schema.node import Node
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.fieldmanager.values import go_sharp_v
from protokube.schema import deep

ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def json_type(value: Any) -> str:
    """The JSON Schema type of a decoded value, as the validator names it in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def validate(obj: dict[str, Any], old: dict[str, Any] | None, root: Node) -> list[FieldError]:
    """Every problem of a whole custom object (its metadata is ObjectMeta's business)."""
    return validate_schema(obj, root) + evaluate_rules(root, obj, old)


def validate_schema(obj: dict[str, Any], root: Node) -> list[FieldError]:
    """The problems of a whole custom object but its CEL rules'."""
    found: list[FieldError] = []
    for name, node in root.properties.items():
        if name not in ROOT_FIELDS and name in obj:
            _validate(obj[name], node, name, found)
    for name in root.required:
        if name not in obj and name not in ROOT_FIELDS:
            found.append(FieldError.required(name))
    return found


def validate_value(value: Any, node: Node, path: str) -> list[FieldError]:
    """The schema's checks of one value (not its CEL rules)."""
    found: list[FieldError] = []
    _validate(value, node, path, found)
    return found


def _validate(value: Any, node: Node, path: str, found: list[FieldError]) -> None:
    if value is None:
        if not node.nullable and node.type and not node.preserve_unknown:
            found.append(_type_error(path, node.type, value))
        return
    if node.int_or_string:
        if json_type(value) not in ("integer", "string"):
            found.append(_type_error(path, "integer", value, shown="integer or string"))
            return
    elif node.type and not _is_type(value, node.type):
        found.append(_type_error(path, node.type, value))
        return
    _check_values(value, node, path, found)
    if isinstance(value, dict):
        _validate_object(value, node, path, found)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            _validate(item, node.items, f"{path}[{i}]", found)
        _check_list_type(value, node, path, found)


def _is_type(value: Any, kind: str) -> bool:
    actual = json_type(value)
    return actual == kind or (kind == "number" and actual == "integer")


def _type_error(path: str, kind: str, value: Any, shown: str = "") -> FieldError:
    actual = json_type(value)
    return FieldError.type_invalid(path, actual, f"{path} in body must be of type {shown or kind}: {_quote(actual)}")


def _quote(text: str) -> str:
    return orjson.dumps(text).decode()


def _number(value: float) -> str:
    """Go's %v of a float64 (the validator's bounds)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _validate_object(value: dict[str, Any], node: Node, path: str, found: list[FieldError]) -> None:
    prefix = f"{path}." if path else ""
    count = len(value)
    if node.max_properties is not None and count > node.max_properties:
        found.append(FieldError.too_many(path, count, node.max_properties))
    if node.min_properties is not None and count < node.min_properties:
        detail = f"{path} in body should have at least {node.min_properties} properties"
        found.append(FieldError.invalid(path, count, detail))
    for name in node.required:
        if name not in value:
            found.append(FieldError.required(f"{prefix}{name}"))
    for name, sub in node.properties.items():
        if name in value:
            _validate(value[name], sub, f"{prefix}{name}", found)
    if node.additional is not None:
        for key, item in value.items():
            if key not in node.properties:
                _validate(item, node.additional, f"{prefix}{key}", found)
    if node.embedded:
        found += embedded_resource_errors(value, prefix)


def _check_values(value: Any, node: Node, path: str, found: list[FieldError]) -> None:
    if node.enum is not None and value not in node.enum:
        supported = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in node.enum]
        found.append(FieldError.not_supported(path, value, supported))
    if isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        _check_number(value, node, path, found)
    elif isinstance(value, str):
        _check_string(value, node, path, found)
    elif isinstance(value, list):
        count = len(value)
        if node.max_items is not None and count > node.max_items:
            found.append(FieldError.too_many(path, count, node.max_items))
        if node.min_items is not None and count < node.min_items:
            found.append(FieldError.invalid(path, count, f"{path} in body should have at least {node.min_items} items"))
        if node.unique_items and len({deep.dumps(v, orjson.OPT_SORT_KEYS) for v in value}) < count:
            found.append(
                FieldError.invalid(path, GoText("[]interface {}"), f"{path} in body shouldn't contain duplicates")
            )
    _check_combinators(value, node, path, found)


def _check_number(value: float, node: Node, path: str, found: list[FieldError]) -> None:
    if node.minimum is not None:
        if node.exclusive_minimum and value <= node.minimum:
            found.append(
                FieldError.invalid(path, value, f"{path} in body should be greater than {_number(node.minimum)}")
            )
        elif value < node.minimum:
            detail = f"{path} in body should be greater than or equal to {_number(node.minimum)}"
            found.append(FieldError.invalid(path, value, detail))
    if node.maximum is not None:
        if node.exclusive_maximum and value >= node.maximum:
            found.append(FieldError.invalid(path, value, f"{path} in body should be less than {_number(node.maximum)}"))
        elif value > node.maximum:
            detail = f"{path} in body should be less than or equal to {_number(node.maximum)}"
            found.append(FieldError.invalid(path, value, detail))
    if node.multiple_of and not math.isclose(value / node.multiple_of, round(value / node.multiple_of)):
        found.append(
            FieldError.invalid(path, value, f"{path} in body should be a multiple of {_number(node.multiple_of)}")
        )
    bounds = INTEGER_RANGES.get(node.format)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        found.append(
            FieldError.type_invalid(path, value, f"{path} in body must be of type {node.format}: {_quote(str(value))}")
        )


def _check_string(value: str, node: Node, path: str, found: list[FieldError]) -> None:
    length = len(value)
    if node.max_length is not None and length > node.max_length:
        found.append(FieldError.too_long(path, node.max_length))
    if node.min_length is not None and length < node.min_length:
        found.append(FieldError.invalid(path, value, f"{path} in body should be at least {node.min_length} chars long"))
    if node.pattern and re.search(node.pattern, value) is None:
        found.append(FieldError.invalid(path, value, f"{path} in body should match '{node.pattern}'"))
    check = STRING_FORMATS.get(node.format)
    if check is not None and not check(value):
        found.append(
            FieldError.type_invalid(path, value, f"{path} in body must be of type {node.format}: {_quote(value)}")
        )


def _check_combinators(value: Any, node: Node, path: str, found: list[FieldError]) -> None:
    def passes(sub: Node) -> bool:
        problems: list[FieldError] = []
        _check_values(value, sub, path, problems)
        if sub.type and not _is_type(value, sub.type):
            return False
        if isinstance(value, dict):
            _validate_object(value, sub, path, problems)
        return not problems

    for sub in node.all_of:
        _check_values(value, sub, path, found)
    if node.any_of and not any(passes(sub) for sub in node.any_of):
        found.append(FieldError.invalid(path, value, f"{path} in body must validate at least one schema (anyOf)"))
    if node.one_of and sum(passes(sub) for sub in node.one_of) != 1:
        found.append(FieldError.invalid(path, value, f"{path} in body must validate one and only one schema (oneOf)"))
    if node.not_ is not None and passes(node.not_):
        found.append(FieldError.invalid(path, value, f"{path} in body must not validate the schema (not)"))


def _check_list_type(value: list[Any], node: Node, path: str, found: list[FieldError]) -> None:
    """x-kubernetes-list-type set and map: no two items (or two items' keys) alike (listtype.go)."""
    seen: set[bytes] = set()
    for i, item in enumerate(value):
        if node.list_type == "set":
            identity = item
        elif node.list_type == "map" and isinstance(item, dict):
            identity = {k: item[k] for k in node.list_map_keys if k in item}
        else:
            continue
        key = deep.dumps(identity, orjson.OPT_SORT_KEYS)
        if key in seen:
            shown = GoText(go_sharp_v(identity)) if isinstance(identity, dict | list) else identity
            found.append(FieldError.duplicate(f"{path}[{i}]", shown))
        seen.add(key)
