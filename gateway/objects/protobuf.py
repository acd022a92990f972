"""The codec of kinds compiled from proto/: objects are protobuf messages, stored enveloped.

Storage holds ``k8s\\x00`` + runtime.Unknown{typeMeta, raw} with metadata.resourceVersion cleared,
as kube-apiserver stores built-in kinds in etcd. JSON follows upstream's Go encoding (struct order,
omitempty) through protokube.schema.jsonencode; list items carry no kind or apiVersion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message
from mypy_extensions import mypyc_attr

from protokube.gateway.objects import cbor
from protokube.gateway.objects.codec import DecodedObject, Obj
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import envelope, goshape, jsondecode, jsonencode, nesting
from protokube.schema.descriptors import descriptor, message_class
from protokube.schema.jsondecode import DecodeError
from protokube.schema.registry import GroupVersionKind
from protokube.schema.validtext import with_valid_strings

# Top-level fields that are not the object's "spec": metadata.generation ignores their changes.
NOT_SPEC: Final = frozenset({"metadata", "status"})


@mypyc_attr(allow_interpreted_subclasses=True)  # conversion/base.py's ConvertedCodec (tools/compile.py)
class ProtoCodec:
    protobuf = True

    def __init__(self, gvk: GroupVersionKind, message: str, list_gvk: GroupVersionKind) -> None:
        self.gvk = gvk
        self.list_gvk = list_gvk
        self.message = message
        self.cls = message_class(message)
        self.descriptor = descriptor(message)
        self._json_head = f'{{"kind":"{gvk.kind}","apiVersion":"{gvk.api_version}"'.encode()

    # ---- objects -------------------------------------------------------------------------------
    def new(self) -> Message:
        return self.cls()

    def copy(self, obj: Message) -> Message:
        clone = self.cls()
        clone.CopyFrom(obj)
        return clone

    def normalize(self, obj: Message) -> Message:
        return goshape.normalize(obj)

    def spec_changed(self, new: Message, old: Message) -> bool:
        return _spec_bytes(new) != _spec_bytes(old)

    def field_text(self, obj: Message, path: str) -> str:
        value: object = obj
        for name in path.split("."):
            if not isinstance(value, Message) or name not in value.DESCRIPTOR.fields_by_name:
                return ""
            value = getattr(value, name)
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if isinstance(value, Message) else str(value)

    # ---- storage -----------------------------------------------------------------------------
    def decode(self, value: bytes) -> Message:
        return envelope.decode(value, self.cls, self.gvk.api_version, self.gvk.kind)

    def encode(self, obj: Obj) -> bytes:
        """Enveloped protobuf with resourceVersion cleared; ``obj`` must be in Go shape (normalized)."""
        resource_version = obj.metadata.resourceVersion
        obj.metadata.resourceVersion = ""
        try:
            return envelope.encode(obj, self.gvk.api_version, self.gvk.kind)
        finally:
            obj.metadata.resourceVersion = resource_version

    # ---- request bodies ------------------------------------------------------------------------
    def from_dict(self, data: dict[str, Any]) -> DecodedObject:
        decoded = jsondecode.decode(data, self.message, go_shape=False)  # the store normalizes what it writes
        return DecodedObject(decoded.message, decoded.api_version, decoded.kind, decoded.violations)

    def from_protobuf(self, raw: bytes) -> Message:
        return with_valid_strings(self.from_own_protobuf(raw))

    def from_own_protobuf(self, raw: bytes) -> Message:
        if nesting.unbounded(self.descriptor) and nesting.too_deep(raw, self.descriptor):
            raise DecodeError(f"the protobuf object exceeded max depth of {nesting.MAX_DEPTH} (this server's limit)")
        obj = self.cls()
        try:
            obj.ParseFromString(raw)
        except ProtobufDecodeError as err:
            raise DecodeError(f"the protobuf object is malformed: {err}") from None
        return obj

    def to_dict(self, obj: Message) -> dict[str, Any]:
        return jsonencode.object_to_dict(obj, self.gvk.kind, self.gvk.api_version)

    # ---- responses -----------------------------------------------------------------------------
    def protobuf_raw(self, obj: Message) -> bytes:
        return obj.SerializeToString(deterministic=True)

    def json_item(self, obj: Message) -> bytes:
        # An exact-size copy: orjson's result keeps its over-allocated buffer (8 KiB for 2.6 KiB).
        return bytes(memoryview(jsonencode.dumps(jsonencode.to_dict(obj))))

    def json_object(self, item: bytes) -> bytes:
        return self._json_head + (b"," + item[1:] if len(item) > 2 else b"}")

    def json_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        gvk = self.list_gvk
        head = jsonencode.dumps(
            {"kind": gvk.kind, "apiVersion": gvk.api_version, "metadata": jsonencode.to_dict(list_meta)}
        )
        return head[:-1] + b',"items":[' + b",".join(items) + b"]}"

    def cbor_item(self, obj: Message) -> bytes:
        return cbor.dumps(jsonencode.to_dict(obj, raw_bytes=True))

    def cbor_object(self, obj: Message) -> bytes:
        values = jsonencode.to_dict(obj, raw_bytes=True)
        return cbor.dumps({"kind": self.gvk.kind, "apiVersion": self.gvk.api_version, **values})

    def cbor_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        gvk = self.list_gvk
        return cbor.list_body(gvk.kind, gvk.api_version, jsonencode.to_dict(list_meta), list(items))


def _spec_bytes(obj: Message) -> bytes:
    """The protobuf bytes of every top-level field but metadata and status."""
    present = [fd.name for fd, _ in obj.ListFields()]
    if not NOT_SPEC.intersection(present):
        return obj.SerializeToString(deterministic=True)
    rest = type(obj)()
    rest.CopyFrom(obj)
    for name in NOT_SPEC.intersection(present):
        rest.ClearField(name)
    return rest.SerializeToString(deterministic=True)
