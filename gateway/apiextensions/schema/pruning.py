"""Pruning: fields a structural schema does not specify are dropped (upstream's
pkg/apiserver/schema/pruning), unless x-kubernetes-preserve-unknown-fields keeps them. The dropped
paths are what fieldValidation reports as unknown fields."""

from __future__ import annotations

from typing import Any

from protokube.gateway.apiextensions.schema.node import Node

# Kept at the root of every object and of embedded resources (their metadata is ObjectMeta's).
TYPE_AND_OBJECT_META = ("apiVersion", "kind", "metadata")


def prune(obj: dict[str, Any], root: Node) -> list[str]:
    """Drop unknown fields of a whole object in place; their paths, sorted."""
    dropped: list[str] = []
    _prune_object(obj, root, "", dropped, keep=TYPE_AND_OBJECT_META)
    return sorted(dropped)


def prune_value(value: Any, node: Node, path: str) -> list[str]:
    dropped: list[str] = []
    _prune(value, node, path, dropped)
    return dropped


def _prune(value: Any, node: Node, path: str, dropped: list[str]) -> None:
    if isinstance(value, dict):
        _prune_object(value, node, path, dropped, keep=TYPE_AND_OBJECT_META if node.embedded else ())
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            _prune(item, node.items, f"{path}[{i}]", dropped)


def _prune_object(value: dict[str, Any], node: Node, path: str, dropped: list[str], keep: tuple[str, ...]) -> None:
    prefix = f"{path}." if path else ""
    for key in list(value):
        if key == "metadata" and "metadata" in keep:
            continue  # ObjectMeta's own decoding keeps what it knows
        sub = node.properties.get(key) or node.additional
        if sub is not None:
            _prune(value[key], sub, f"{prefix}{key}", dropped)
        elif key not in keep and not node.preserve_unknown:
            del value[key]
            dropped.append(f"{prefix}{key}")
