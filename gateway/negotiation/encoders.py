"""Response encoders: one per wire format, all built on the cached encodings of ObjectView.

Each encoder writes single objects, lists (enveloped once, items concatenated from cached
bytes), plain messages (Status, discovery documents) and watch events in its format's framing.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import orjson
from google.protobuf.message import Message
from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

from gateway.negotiation import mediatypes
from gateway.objects import JSON_BODY, ObjectView
from protokube.schema import envelope, goshape, jsonencode, yamlcodec
from protokube.schema.registry import GroupVersionKind


def _pb_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: tag, varint length, bytes."""
    tag = (number << 3) | 2
    length = len(payload)
    out = bytearray([tag])
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

    def __init__(self, pretty: bool = False) -> None:
        self.pretty = pretty

    def finish(self, body: bytes) -> bytes:
        if self.pretty:
            body = jsonencode.go_escape(orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2))
        return body + b"\n"

    def object(self, view: ObjectView) -> bytes:
        return self.finish(view.json_object())

    def message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return self.finish(jsonencode.dumps(jsonencode.object_to_dict(message, gvk.kind, gvk.api_version)))

    def list(self, gvk: GroupVersionKind, list_meta: meta.ListMeta, items: Sequence[ObjectView]) -> bytes:
        head = jsonencode.dumps(
            {"kind": gvk.kind, "apiVersion": gvk.api_version, "metadata": jsonencode.to_dict(list_meta)}
        )
        body = head[:-1] + b',"items":[' + b",".join(v.encoded(JSON_BODY) for v in items) + b"]}"
        return self.finish(body)

    def watch_event(self, event_type: str, object_json: bytes) -> bytes:
        return b'{"type":"' + event_type.encode() + b'","object":' + object_json + b"}\n"

    def watch_object(self, view: ObjectView) -> bytes:
        return view.json_object()

    def watch_message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return jsonencode.dumps(jsonencode.object_to_dict(message, gvk.kind, gvk.api_version))


class YAMLEncoder(JSONEncoder):
    media_type = mediatypes.YAML
    content_type = "application/yaml"
    watch_content_type = ""  # YAML cannot stream (upstream: 406 for a YAML watch)

    def finish(self, body: bytes) -> bytes:
        return yamlcodec.dump(orjson.loads(body))


class ProtobufEncoder:
    media_type = mediatypes.PROTOBUF
    content_type = mediatypes.PROTOBUF
    watch_content_type = mediatypes.PROTOBUF + ";stream=watch"

    def object(self, view: ObjectView) -> bytes:
        return view.protobuf_object()

    def message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return envelope.encode(message, gvk.api_version, gvk.kind)

    def list(self, gvk: GroupVersionKind, list_meta: meta.ListMeta, items: Sequence[ObjectView]) -> bytes:
        raw = _pb_field(1, goshape.normalize(list_meta).SerializeToString(deterministic=True)) + b"".join(
            _pb_field(2, v.raw) for v in items
        )
        return envelope.wrap(raw, gvk.api_version, gvk.kind)

    def watch_event(self, event_type: str, object_bytes: bytes) -> bytes:
        """A length-prefixed metav1.WatchEvent whose object.raw holds the enveloped object."""
        event = _pb_field(1, event_type.encode()) + _pb_field(2, _pb_field(1, object_bytes))
        return struct.pack(">I", len(event)) + event

    def watch_object(self, view: ObjectView) -> bytes:
        return view.protobuf_object()

    def watch_message(self, message: Message, gvk: GroupVersionKind) -> bytes:
        return envelope.encode(message, gvk.api_version, gvk.kind)
