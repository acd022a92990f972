"""Embedded resources (x-kubernetes-embedded-resource) in custom objects, validated as
apiextensions-apiserver's objectmeta validation does (validateEmbeddedResource): apiVersion and kind
are required, and what is there must be valid — an apiVersion of at most one "/", a kind that,
lowercased, is a DNS-1035 label, and metadata that is ObjectMeta (with a name, a path segment, when
it has one; a namespace checked when it has one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.fieldmanager.values import go_sharp_v
from protokube.gateway.objects.unstructured import OBJECT_META
from protokube.gateway.registry.validation.meta import object_meta_errors
from protokube.gateway.syntax import dns1035_label_problems
from protokube.schema import jsondecode
from protokube.schema.jsondecode import DecodeError


def embedded_resource_errors(value: dict[str, Any], prefix: str) -> list[FieldError]:
    """The problems of the embedded object ``value``; ``prefix`` is its path with a trailing dot."""
    found = [
        FieldError.required(f"{prefix}{name}", "must not be empty")
        for name in ("apiVersion", "kind")
        if name not in value
    ]
    if "apiVersion" in value:
        found += _string_errors(f"{prefix}apiVersion", value["apiVersion"], _group_version_problems)
    if "kind" in value:
        found += _string_errors(f"{prefix}kind", value["kind"], _kind_problems)
    if "metadata" in value:
        found += _metadata_errors(value["metadata"], f"{prefix}metadata")
    return found


def _shown(value: Any) -> Any:
    """A value as a field error prints it (Go's %#v for maps and slices)."""
    return GoText(go_sharp_v(value)) if isinstance(value, dict | list) else value


def _string_errors(path: str, value: Any, problems: Callable[[str], list[str]]) -> list[FieldError]:
    if not isinstance(value, str):
        return [FieldError.invalid(path, _shown(value), "must be a string")]
    if not value:
        return [FieldError.invalid(path, value, "must not be empty")]
    return [FieldError.invalid(path, value, problem) for problem in problems(value)]


def _group_version_problems(text: str) -> list[str]:
    """schema.ParseGroupVersion: "", "/", "v", "g/v" parse; more slashes do not."""
    return [f"unexpected GroupVersion string: {text}"] if text.count("/") > 1 else []


def _kind_problems(kind: str) -> list[str]:
    problems = dns1035_label_problems(kind.lower())
    return ["may have mixed case, but should otherwise match: " + ",".join(problems)] if problems else []


def _metadata_errors(metadata: Any, path: str) -> list[FieldError]:
    try:
        decoded = jsondecode.decode(metadata, OBJECT_META).message
    except DecodeError as err:
        return [FieldError.invalid(path, _shown(metadata), str(err))]
    if not decoded.name:
        decoded.name = "fakename"  # as upstream: a name is not required here
    return object_meta_errors(decoded, None, path, opts.NAME_RULE_PATH_SEGMENT, namespaced=None)
