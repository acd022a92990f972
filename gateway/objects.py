"""Stored objects and their encodings, each made once and reused.

An ``ObjectView`` is one object at one resourceVersion, its message always in Go shape
(goshape.normalize: storage holds it so, and the store normalizes what it writes). It is built
from what storage holds (the enveloped protobuf value, written without a resourceVersion, as
upstream stores it), from the object's own protobuf bytes, or from a message. The decoded
message and every encoding are made on first use and kept, so a list or a watch fan-out
concatenates cached bytes instead of re-encoding. Views in the watch cache do not keep their
decoded message (``keep_message=False``): the cache holds bytes, not message objects.
"""

from __future__ import annotations

import cbor2
from google.protobuf.message import Message

from protokube.schema import envelope, jsonencode
from protokube.schema.descriptors import message_class
from protokube.schema.registry import GroupVersionKind

JSON_BODY = "json-body"  # the JSON object without kind/apiVersion (as list items are written)
CBOR_BODY = "cbor-body"  # the same as CBOR (untagged, map keys in canonical order)
CBOR_OBJECT = "cbor-object"  # with kind and apiVersion, as a single object is written (untagged)


class ObjectView:
    __slots__ = ("_encoded", "_message", "_raw", "_value", "gvk", "keep_message", "message_name", "resource_version")

    def __init__(
        self,
        gvk: GroupVersionKind,
        message_name: str,
        resource_version: int,
        *,
        value: bytes | None = None,
        raw: bytes | None = None,
        message: Message | None = None,
        keep_message: bool = True,
    ) -> None:
        self.gvk = gvk
        self.message_name = message_name
        self.resource_version = resource_version
        self._value = value
        self._raw = raw
        self._message = message
        self.keep_message = keep_message
        self._encoded: dict[str, bytes] = {}

    @classmethod
    def from_message(cls, gvk: GroupVersionKind, message: Message, resource_version: int) -> ObjectView:
        message.metadata.resourceVersion = str(resource_version) if resource_version else ""
        return cls(gvk, message.DESCRIPTOR.full_name, resource_version, message=message)

    @property
    def message(self) -> Message:
        """The decoded object with metadata.resourceVersion set (do not modify; ``copy()`` first)."""
        message = self._message
        if message is None:
            cls = message_class(self.message_name)
            if self._raw is not None:
                message = cls.FromString(self._raw)
            else:
                assert self._value is not None
                message = envelope.decode(self._value, cls, self.gvk.api_version, self.gvk.kind)
                message.metadata.resourceVersion = str(self.resource_version)
            if self.keep_message:
                self._message = message
        return message

    def decode_with_raw(self) -> Message:
        """The decoded message, making the protobuf bytes from it too (one decode for both)."""
        message = self.message
        if self._raw is None:
            self._raw = message.SerializeToString(deterministic=True)
            self._value = None
        return message

    def copy(self) -> Message:
        clone = message_class(self.message_name)()
        clone.CopyFrom(self.message)
        return clone

    @property
    def raw(self) -> bytes:
        """The object's protobuf bytes, resourceVersion set, written as Go writes them."""
        if self._raw is None:
            self.decode_with_raw()
        assert self._raw is not None
        return self._raw

    def encoded(self, form: str) -> bytes:
        cached = self._encoded.get(form)
        if cached is None:
            cached = self._encoded[form] = ENCODERS[form](self)
        return cached

    def json_object(self) -> bytes:
        """The JSON object with kind and apiVersion first, as a single object is written."""
        body = self.encoded(JSON_BODY)
        head = f'{{"kind":"{self.gvk.kind}","apiVersion":"{self.gvk.api_version}"'.encode()
        return head + (b"," + body[1:] if len(body) > 2 else b"}")

    def protobuf_object(self) -> bytes:
        return envelope.wrap(self.raw, self.gvk.api_version, self.gvk.kind)

    def at_revision(self, resource_version: int) -> ObjectView:
        """The same object with another resourceVersion (a DELETED event carries the deletion's)."""
        message = self.copy()
        message.metadata.resourceVersion = str(resource_version)
        raw = message.SerializeToString(deterministic=True)
        return ObjectView(self.gvk, self.message_name, resource_version, raw=raw, keep_message=False)


def _json_body(view: ObjectView) -> bytes:
    # An exact-size copy: orjson's result keeps its over-allocated buffer (8 KiB for 2.6 KiB).
    return bytes(memoryview(jsonencode.dumps(jsonencode.to_dict(view.message))))


def _cbor(view: ObjectView, with_type: bool) -> bytes:
    values = jsonencode.to_dict(view.message, raw_bytes=True)
    if with_type:
        values = {"kind": view.gvk.kind, "apiVersion": view.gvk.api_version, **values}
    return cbor2.dumps(values, canonical=True)


ENCODERS = {
    JSON_BODY: _json_body,
    CBOR_BODY: lambda view: _cbor(view, False),
    CBOR_OBJECT: lambda view: _cbor(view, True),
}


def storage_value(message: Message, gvk: GroupVersionKind) -> bytes:
    """The bytes stored for an object: enveloped protobuf, resourceVersion cleared (as upstream).

    ``message`` must be in Go shape (goshape.normalize), as every message in a view is.
    """
    resource_version = message.metadata.resourceVersion
    message.metadata.resourceVersion = ""
    try:
        return envelope.encode(message, gvk.api_version, gvk.kind)
    finally:
        message.metadata.resourceVersion = resource_version
