"""Server-side printing: objects → meta.k8s.io/v1 Table (Kubernetes API Concepts: "Receiving resources as Tables").

Columns come from the resource's printer-column options (or upstream's default Name and Created
At); each cell from a JSONPath into the object or a named cell function. Every row carries the
object as includeObject asks: its metadata as a PartialObjectMetadata (the default), the whole
object, or nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from protokube.gateway import errors
from protokube.gateway.conversion import ConvertedCodec
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.printing import jsonpath
from protokube.gateway.printing.cells import CELLS, ROW_CONDITIONS, Row
from protokube.gateway.printing.humanize import since
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import deep, jsonencode, wellknown
from protokube.schema.registry import PrinterColumn, Resource

INCLUDE_OBJECT_VALUES = ("None", "Metadata", "Object")
NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources "
    "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
# upstream's default columns for kinds that define none (k8s.io/apiserver pkg/registry/rest/table.go).
DEFAULT_COLUMNS = (
    PrinterColumn("Name", "string", "name", NAME_DESCRIPTION, 0, ".metadata.name", ""),
    PrinterColumn("Created At", "date", "", CREATED_DESCRIPTION, 0, "", "created_at"),
)


def include_object(value: str | None) -> str:
    """The includeObject parameter (default Metadata); 400 for anything else."""
    if not value:
        return "Metadata"
    if value not in INCLUDE_OBJECT_VALUES:
        raise errors.bad_request(
            f'Unable to convert to Table as requested: includeObject: Invalid value: "{value}": '
            f"must be one of {', '.join(INCLUDE_OBJECT_VALUES)}"
        )
    return value


def columns(resource: Resource) -> tuple[PrinterColumn, ...]:
    return resource.printer_columns or DEFAULT_COLUMNS


def column_definitions(resource: Resource) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "type": c.type, "format": c.format, "description": c.description, "priority": c.priority}
        for c in columns(resource)
    ]


def _cell(column: PrinterColumn, row: Row, as_json: dict[str, Any], custom: bool = False) -> Any:
    if column.cell == "created_at":
        created = row.obj.metadata.creationTimestamp
        return wellknown.format_time(created.seconds) if created.HasField("seconds") else None
    if column.cell:
        return CELLS[column.cell](row)
    try:
        found = jsonpath.find(as_json, column.json_path)
    except jsonpath.JSONPathError:
        found = []
    if custom:  # a CRD's column (apiextensions-apiserver tableconvertor.go): nil when absent
        return _custom_cell(column.type, found)
    if not found or found[0] is None:
        return 0 if column.type == "integer" else ""
    return found[0]


def _custom_cell(column_type: str, found: list[Any]) -> Any:
    """One value as the column's type says (nil when of another type); several joined by commas."""
    if len(found) > 1:
        return ", ".join(str(v) for v in found)
    if not found:
        return None
    value = found[0]
    if column_type == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column_type == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "date":  # metatable.ConvertToHumanReadableDateType: an age
        return _age(value) if isinstance(value, str) else None
    if column_type == "string":
        return value if isinstance(value, str) else deep.dumps(value).decode()
    return value


def _age(text: str) -> str:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    return since(int(when.timestamp()))


def partial_metadata(view: ObjectView, meta_version: str = "v1") -> dict[str, Any]:
    """A PartialObjectMetadata: the object's kind and metadata only."""
    body = deep.loads(view.json_item())
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{meta_version}",
        "metadata": body.get("metadata", {}),
    }


def table_row(
    resource: Resource, view: ObjectView, include: str, now: float, meta_version: str = "v1"
) -> dict[str, Any]:
    as_json = deep.loads(view.json_item())
    obj = view.obj
    # Another version's kind in storage: printed as that kind (upstream prints the internal object).
    printed = view.codec.to_storage(obj) if isinstance(view.codec, ConvertedCodec) else obj
    printed_json = jsonencode.to_dict(printed) if printed is not obj else as_json
    row = Row(printed, now)
    custom = resource.extension is not None
    result: dict[str, Any] = {"cells": [_cell(c, row, printed_json, custom) for c in columns(resource)]}
    conditions = ROW_CONDITIONS.get(resource.message, lambda _: [])(obj)
    if conditions:
        result["conditions"] = conditions
    if include == "Object":
        result["object"] = {"kind": view.gvk.kind, "apiVersion": view.gvk.api_version, **as_json}
    elif include == "Metadata":
        result["object"] = partial_metadata(view, meta_version)
    else:
        result["object"] = None
    return result


def table(
    resource: Resource,
    views: Sequence[ObjectView],
    list_meta: meta.ListMeta,
    include: str,
    *,
    with_columns: bool = True,
    meta_version: str = "v1",
) -> dict[str, Any]:
    now = time.time()
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{meta_version}",
        "metadata": jsonencode.to_dict(list_meta),
        "columnDefinitions": column_definitions(resource) if with_columns else None,
        "rows": [table_row(resource, view, include, now, meta_version) for view in views],
    }
