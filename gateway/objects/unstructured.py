"""The codec of kinds without a compiled message (custom resources): JSON objects, stored as JSON.

An ``Unstructured`` holds its metadata as a meta.v1 ObjectMeta message (so every layer handles its
metadata as it handles any object's) and everything else as plain JSON values. Stored bytes are the
whole object as JSON, resourceVersion cleared, as kube-apiserver stores custom resources. Responses
write keys in sorted order at every level, as Go's encoding/json writes the maps upstream's
unstructured objects are made of; list items carry their own kind and apiVersion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from protokube.gateway.objects import cbor
from protokube.gateway.objects.codec import DecodedObject
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import deep, goshape, jsondecode, jsonencode
from protokube.schema.jsondecode import DecodeError
from protokube.schema.registry import GroupVersionKind

OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
TYPE_META = ("apiVersion", "kind")


class Unstructured:
    """An object of a kind known only at run time: metadata plus plain JSON content."""

    __slots__ = ("content", "metadata")

    def __init__(self, metadata: meta.ObjectMeta | None = None, content: dict[str, Any] | None = None) -> None:
        self.metadata = metadata if metadata is not None else meta.ObjectMeta()
        # Every top-level field but apiVersion, kind and metadata (spec, status, data, ...).
        self.content = content if content is not None else {}


class JSONCodec:
    protobuf = False

    def __init__(self, gvk: GroupVersionKind, list_gvk: GroupVersionKind) -> None:
        self.gvk = gvk
        self.list_gvk = list_gvk

    # ---- objects -------------------------------------------------------------------------------
    def new(self) -> Unstructured:
        return Unstructured()

    def copy(self, obj: Unstructured) -> Unstructured:
        metadata = meta.ObjectMeta()
        metadata.CopyFrom(obj.metadata)
        return Unstructured(metadata, deep.copy(obj.content))

    def normalize(self, obj: Unstructured) -> Unstructured:
        goshape.normalize(obj.metadata)
        return obj

    def spec_changed(self, new: Unstructured, old: Unstructured) -> bool:
        return not deep.equal(_without_status(new.content), _without_status(old.content))

    def field_text(self, obj: Unstructured, path: str) -> str:
        head, _, rest = path.partition(".")
        value: Any = jsonencode.to_dict(obj.metadata) if head == "metadata" else obj.content.get(head)
        for step in rest.split(".") if rest else ():
            value = value.get(step) if isinstance(value, dict) else None
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None or isinstance(value, dict | list) else str(value)

    # ---- storage -----------------------------------------------------------------------------
    def decode(self, value: bytes) -> Unstructured:
        data = deep.loads(value)
        if not isinstance(data, dict):
            raise DecodeError("stored object is not a JSON object")
        return self.from_dict(data).obj

    def encode(self, obj: Unstructured) -> bytes:
        data = self._dict(obj)
        data["metadata"].pop("resourceVersion", None)
        return deep.dumps(data, orjson.OPT_SORT_KEYS)

    # ---- request bodies ------------------------------------------------------------------------
    def from_dict(self, data: dict[str, Any]) -> DecodedObject:
        content = jsondecode.go_values({k: v for k, v in data.items() if k not in TYPE_META and k != "metadata"})
        metadata = data.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            raise DecodeError("json: cannot unmarshal metadata into Go struct field of type v1.ObjectMeta")
        decoded = jsondecode.decode(metadata, OBJECT_META, go_shape=False)
        violations = [f'unknown field "metadata.{path}"' for path in decoded.unknown]
        violations += [f'duplicate field "metadata.{path}"' for path in decoded.duplicates]
        obj = Unstructured(decoded.message, content)
        return DecodedObject(obj, data.get("apiVersion") or "", data.get("kind") or "", violations)

    def from_protobuf(self, raw: bytes) -> Unstructured:
        raise DecodeError(f"{self.gvk.kind} has no protobuf encoding")

    from_own_protobuf = from_protobuf

    def to_dict(self, obj: Unstructured) -> dict[str, Any]:
        return self._dict(obj)

    def _dict(self, obj: Unstructured) -> dict[str, Any]:
        return {
            "apiVersion": self.gvk.api_version,
            "kind": self.gvk.kind,
            "metadata": jsonencode.to_dict(obj.metadata),
            **deep.copy(obj.content),
        }

    # ---- responses -----------------------------------------------------------------------------
    def protobuf_raw(self, obj: Unstructured) -> bytes:
        raise TypeError(f"{self.gvk.kind} has no protobuf encoding")

    def json_item(self, obj: Unstructured) -> bytes:
        return jsonencode.go_escape(deep.dumps(self._dict(obj), orjson.OPT_SORT_KEYS))

    def json_object(self, item: bytes) -> bytes:
        return item

    def json_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        head = {"apiVersion": self.list_gvk.api_version}
        tail = {"kind": self.list_gvk.kind, "metadata": jsonencode.to_dict(list_meta)}
        return (
            orjson.dumps(head, option=orjson.OPT_SORT_KEYS)[:-1]
            + b',"items":['
            + b",".join(items)
            + b"],"
            + jsonencode.dumps(tail)[1:]
        )

    def cbor_item(self, obj: Unstructured) -> bytes:
        return cbor.dumps(self._dict(obj))

    def cbor_object(self, obj: Unstructured) -> bytes:
        return self.cbor_item(obj)

    def cbor_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        gvk = self.list_gvk
        return cbor.list_body(gvk.kind, gvk.api_version, jsonencode.to_dict(list_meta), list(items))


def _without_status(content: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in content.items() if k != "status"}
