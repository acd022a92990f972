"""Response encoders: one per wire format, all built on the cached encodings of ObjectView.

Each encoder writes single objects, lists (enveloped once, items concatenated from cached
bytes, laid out as the resource's codec lays lists out), plain values (Status, discovery
documents, Tables) and watch events in its format's framing: JSON lines, length-prefixed protobuf,
a CBOR sequence.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import orjson
from google.protobuf.message import Message

from protokube.gateway.negotiation import mediatypes
from protokube.gateway.objects import cbor
from protokube.gateway.objects.cbor import SELF_DESCRIBED
from protokube.gateway.objects.codec import Codec
from protokube.gateway.objects.view import ObjectView
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import deep, envelope, goshape, jsonencode, yamlcodec
from protokube.schema.registry import GroupVersionKind


def _pb_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: tag, varint length, bytes."""
    out = bytearray([(number << 3) | 2])
    length = len(payload)
    while length >= 0x80:
        out.append((length & 0x7F) | 0x80)
        length >>= 7
    out.append(length)
    return bytes(out) + payload


class JSONEncoder:
    media_type = mediatypes.JSON
    content_type = "application/json"
    # Upstream's JSON watch is served as plain application/json (no ;stream=watch).
    watch_content_type = "application/json"
    supports_table = True

    def __init__(self, pretty: bool = False) -> None:
        self.pretty = pretty

    @property
    def key(self) -> str:
        """Identifies the bytes this encoder writes (to share encoded frames between watchers)."""
        return f"{self.media_type};pretty={self.pretty}"

    def finish(self, body: bytes) -> bytes:
        if self.pretty:
            body = jsonencode.go_escape(deep.dumps(deep.loads(body), orjson.OPT_INDENT_2))
        return body + b"\n"

    def object(self, view: ObjectView) -> bytes:
        return self.finish(view.json_object())

    def message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return self.finish(jsonencode.dumps(jsonencode.object_to_dict(message, gvk.kind, gvk.api_version)))

    def value(self, value: dict[str, Any]) -> bytes:
        """A plain JSON-like value, e.g. a Table."""
        return self.finish(jsonencode.dumps(value))

    def list(self, codec: Codec, list_meta: meta.ListMeta, items: Sequence[ObjectView]) -> bytes:
        return self.finish(codec.json_list(list_meta, [v.json_item() for v in items]))

    def watch_event(self, event_type: str, object_bytes: bytes) -> bytes:
        return b'{"type":"' + event_type.encode() + b'","object":' + object_bytes + b"}\n"

    def watch_object(self, view: ObjectView) -> bytes:
        return view.json_object()

    def watch_message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return jsonencode.dumps(jsonencode.object_to_dict(message, gvk.kind, gvk.api_version))

    def watch_value(self, value: dict[str, Any]) -> bytes:
        return jsonencode.dumps(value)


class YAMLEncoder(JSONEncoder):
    media_type = mediatypes.YAML
    content_type = "application/yaml"
    watch_content_type = ""  # YAML cannot stream (upstream: 406 for a YAML watch)

    def finish(self, body: bytes) -> bytes:
        return yamlcodec.dump(deep.loads(body))


class ProtobufEncoder:
    media_type = mediatypes.PROTOBUF
    content_type = mediatypes.PROTOBUF
    watch_content_type = mediatypes.PROTOBUF + ";stream=watch"
    supports_table = False  # meta.v1 Table has no protobuf message
    key = mediatypes.PROTOBUF

    def object(self, view: ObjectView) -> bytes:
        return envelope.wrap(view.raw, view.gvk.api_version, view.gvk.kind)

    def message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return envelope.encode(goshape.normalize(message), gvk.api_version, gvk.kind)

    def list(self, codec: Codec, list_meta: meta.ListMeta, items: Sequence[ObjectView]) -> bytes:
        raw = _pb_field(1, goshape.normalize(list_meta).SerializeToString(deterministic=True)) + b"".join(
            _pb_field(2, v.raw) for v in items
        )
        return envelope.wrap(raw, codec.list_gvk.api_version, codec.list_gvk.kind)

    def watch_event(self, event_type: str, object_bytes: bytes) -> bytes:
        """A length-prefixed metav1.WatchEvent whose object.raw holds the enveloped object."""
        event = _pb_field(1, event_type.encode()) + _pb_field(2, _pb_field(1, object_bytes))
        return struct.pack(">I", len(event)) + event

    def watch_object(self, view: ObjectView) -> bytes:
        return self.object(view)

    def watch_message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return self.message(message, gvk)


class CBOREncoder:
    media_type = mediatypes.CBOR
    content_type = mediatypes.CBOR
    # A CBOR watch is a CBOR Sequence: items one after another, no length prefix.
    watch_content_type = mediatypes.CBOR_SEQ
    supports_table = True
    key = mediatypes.CBOR

    def object(self, view: ObjectView) -> bytes:
        return SELF_DESCRIBED + view.cbor_object()

    def message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return SELF_DESCRIBED + self.watch_message(message, gvk)

    def value(self, value: dict[str, Any]) -> bytes:
        return SELF_DESCRIBED + cbor.dumps(value)

    def list(self, codec: Codec, list_meta: meta.ListMeta, items: Sequence[ObjectView]) -> bytes:
        return SELF_DESCRIBED + codec.cbor_list(list_meta, [v.cbor_item() for v in items])

    def watch_event(self, event_type: str, object_bytes: bytes) -> bytes:
        """One tagged item of the sequence; the object is an embedded, tagged CBOR item."""
        return b"".join(
            (
                SELF_DESCRIBED,
                cbor.head(5, 2),
                cbor.dumps("type"),
                cbor.dumps(event_type),
                cbor.dumps("object"),
                SELF_DESCRIBED,
                object_bytes,
            )
        )

    def watch_object(self, view: ObjectView) -> bytes:
        return view.cbor_object()

    def watch_message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return cbor.dumps(jsonencode.object_to_dict(message, gvk.kind, gvk.api_version, raw_bytes=True))

    def watch_value(self, value: dict[str, Any]) -> bytes:
        return cbor.dumps(value)
