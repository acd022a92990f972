"""The Kubernetes protobuf envelope: the magic ``k8s\\x00`` followed by a ``runtime.Unknown``.

The Unknown's typeMeta names the object's apiVersion and kind, and its raw field holds the
object's own protobuf bytes. Objects are stored in etcd in this form too.
"""

from __future__ import annotations

from typing import Final

from google._upb import _message as upb
from google.protobuf.message import DecodeError as ProtobufDecodeError
from google.protobuf.message import Message

from protokube.gen.k8s.io.apimachinery.pkg.runtime import types_pb2 as runtime_pb2
from protokube.schema import gogoerrors
from protokube.schema.validtext import with_valid_strings

MAGIC: Final = b"k8s\x00"
CONTENT_TYPE: Final = "application/vnd.kubernetes.protobuf"

# upb writes messages nested to any depth but parses at most 100 levels unless told otherwise (its
# one switch: up to 65,535); a CustomResourceDefinition's schema is stored deeper than 100. What is
# stored must read back. Kinds that can nest without bound are refused beyond nesting.MAX_DEPTH
# before they are parsed or stored, so no parse goes deeper than that.
upb.SetAllowOversizeProtos(True)


class EnvelopeError(ValueError):
    """Bytes that are not a well-formed envelope, or hold another kind than expected."""


def wrap(raw: bytes, api_version: str, kind: str) -> bytes:
    """Envelope already-serialized object bytes (written exactly as Go's serializer does)."""
    unknown = runtime_pb2.Unknown(
        typeMeta=runtime_pb2.TypeMeta(apiVersion=api_version, kind=kind),
        raw=raw,
        contentEncoding="",
        contentType="",
    )
    return MAGIC + unknown.SerializeToString(deterministic=True)


def encode(message: Message, api_version: str, kind: str) -> bytes:
    return wrap(message.SerializeToString(deterministic=True), api_version, kind)


def unwrap(data: bytes) -> runtime_pb2.Unknown:
    """Open an envelope; raises EnvelopeError when the magic or the Unknown is malformed."""
    if not data.startswith(MAGIC):
        prefix = " ".join(str(b) for b in MAGIC)  # Go's %v of a byte slice
        raise EnvelopeError(f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]")
    unknown = runtime_pb2.Unknown()
    try:
        unknown.ParseFromString(data[len(MAGIC) :])
    except ProtobufDecodeError as err:
        # gogo-protobuf's words where its generated Unmarshal fails too (upstream reads it so)
        raise EnvelopeError(
            gogoerrors.unknown_error(data[len(MAGIC) :]) or f"the protobuf envelope is malformed: {err}"
        ) from None
    return with_valid_strings(unknown)


def decode(data: bytes, message_class: type[Message], api_version: str, kind: str) -> Message:
    """Open an envelope that must hold ``kind`` in ``api_version`` and parse its object."""
    unknown = unwrap(data)
    found = (unknown.typeMeta.apiVersion, unknown.typeMeta.kind)
    if found != (api_version, kind):
        raise EnvelopeError(
            f"the protobuf envelope holds {found[1] or '(no kind)'} in version "
            f'"{found[0]}", expected {kind} in version "{api_version}"'
        )
    message = message_class()
    try:
        message.ParseFromString(unknown.raw)
    except ProtobufDecodeError as err:
        raise EnvelopeError(f"the {kind} inside the protobuf envelope is malformed: {err}") from None
    return message
