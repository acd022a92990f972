"""Defaulting: a missing field whose schema has a ``default`` gets it (upstream's
pkg/apiserver/schema/defaulting), top-down, in objects, list items and map values; a null where
the schema does not allow null and has a default becomes the default too."""

from __future__ import annotations

import copy
from typing import Any

from protokube.gateway.apiextensions.schema.node import Node


def apply(value: Any, node: Node) -> None:
    if isinstance(value, dict):
        for name, sub in node.properties.items():
            if sub.has_default and (name not in value or (value[name] is None and not sub.nullable)):
                value[name] = copy.deepcopy(sub.default)
            if name in value:
                apply(value[name], sub)
        if node.additional is not None:
            for key, item in value.items():
                if key not in node.properties:
                    apply(item, node.additional)
    elif isinstance(value, list) and node.items is not None:
        for item in value:
            apply(item, node.items)
