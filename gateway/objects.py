"""Stored objects and their encodings, each made once and reused.

An ``ObjectView`` wraps one object as storage holds it (the enveloped protobuf value, written
without a resourceVersion, as upstream stores it) plus the revision it was last modified at. The
decoded message and every encoding of it are computed on first use and kept: a list or a watch
fan-out concatenates cached bytes instead of re-encoding.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.schema import envelope, goshape, jsonencode
from protokube.schema.descriptors import message_class
from protokube.schema.registry import GroupVersionKind

JSON_BODY = "json-body"  # the JSON object without kind/apiVersion (as list items are written)
PROTOBUF_RAW = "protobuf-raw"  # the object's protobuf bytes, resourceVersion set, no envelope


class ObjectView:
    __slots__ = ("_encoded", "_message", "gvk", "message_name", "resource_version", "value")

    def __init__(
        self,
        gvk: GroupVersionKind,
        message_name: str,
        value: bytes,
        resource_version: int,
        message: Message | None = None,
    ) -> None:
        self.gvk = gvk
        self.message_name = message_name
        self.value = value
        self.resource_version = resource_version
        self._message = message
        self._encoded: dict[str, bytes] = {}

    @classmethod
    def from_message(cls, gvk: GroupVersionKind, message: Message, resource_version: int) -> ObjectView:
        view = cls(gvk, message.DESCRIPTOR.full_name, b"", resource_version, message)
        message.metadata.resourceVersion = str(resource_version) if resource_version else ""
        return view

    @property
    def message(self) -> Message:
        """The decoded object with metadata.resourceVersion set (do not modify; copy first)."""
        if self._message is None:
            cls = message_class(self.message_name)
            message = envelope.decode(self.value, cls, self.gvk.api_version, self.gvk.kind)
            message.metadata.resourceVersion = str(self.resource_version)
            self._message = message
        return self._message

    def copy(self) -> Message:
        clone = type(self.message)()
        clone.CopyFrom(self.message)
        return clone

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
        return envelope.wrap(self.encoded(PROTOBUF_RAW), self.gvk.api_version, self.gvk.kind)


def _json_body(view: ObjectView) -> bytes:
    return jsonencode.dumps(jsonencode.to_dict(view.message))


def _protobuf_raw(view: ObjectView) -> bytes:
    return goshape.normalize(view.message).SerializeToString(deterministic=True)


ENCODERS = {JSON_BODY: _json_body, PROTOBUF_RAW: _protobuf_raw}


def storage_value(message: Message, gvk: GroupVersionKind) -> bytes:
    """The bytes stored for an object: enveloped protobuf, resourceVersion cleared (as upstream)."""
    stored = type(message)()
    stored.CopyFrom(message)
    stored.metadata.resourceVersion = ""
    goshape.normalize(stored)
    return envelope.encode(stored, gvk.api_version, gvk.kind)
