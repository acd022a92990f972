"""Choosing the response format and representation from Accept, and the body format from Content-Type.

Upstream's rules: the Accept clauses are tried in preference order; the first one that names a
served format — and, through ``as=…;g=meta.k8s.io;v=v1`` (or v1beta1), a representation this
endpoint can give (Table, PartialObjectMetadata, PartialObjectMetadataList) — wins. Table has no protobuf form. For a
watch the winning format must be able to stream, or the answer is 406 (a YAML watch is refused
even when JSON is acceptable further down the header). No Content-Type means JSON.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from protokube.gateway import errors
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.encoders import CBOREncoder, JSONEncoder, ProtobufEncoder, YAMLEncoder
from protokube.gateway.negotiation.mediatypes import MediaRange

Encoder = JSONEncoder | YAMLEncoder | ProtobufEncoder | CBOREncoder

OBJECT = ""  # the resource's own kind
TABLE = "Table"
PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"
META_GROUP, META_VERSION = "meta.k8s.io", "v1"
META_VERSIONS = ("v1", "v1beta1")  # v1beta1's Table and PartialObjectMetadata are still served
# What each kind of endpoint can answer with.
SINGLE = frozenset({OBJECT, TABLE, PARTIAL})
COLLECTION = frozenset({OBJECT, TABLE, PARTIAL_LIST})
OBJECT_ONLY = frozenset({OBJECT})


@dataclass(frozen=True, slots=True)
class Formats:
    """The formats a resource is served in: CBOR joins when its feature gate is on; protobuf is left
    out for kinds without a protobuf encoding (custom resources). A 406 names protobuf all the same,
    as upstream's custom resource handler lists every serializer it has."""

    cbor: bool = False
    protobuf: bool = True
    media_types: tuple[str, ...] = field(init=False)
    refusal: str = field(init=False)  # a 406's message

    def __post_init__(self) -> None:
        types = (mediatypes.JSON, mediatypes.YAML)
        listed = (*types, mediatypes.PROTOBUF, *((mediatypes.CBOR,) if self.cbor else ()))
        types += (mediatypes.PROTOBUF,) if self.protobuf else ()
        object.__setattr__(self, "media_types", (*types, mediatypes.CBOR) if self.cbor else types)
        object.__setattr__(self, "refusal", "only the following media types are accepted: " + ", ".join(listed))

    def for_codec(self, protobuf: bool) -> Formats:
        return self if protobuf == self.protobuf else Formats(cbor=self.cbor, protobuf=protobuf)

    def encoder(self, media_type: str, pretty: bool) -> Encoder:
        if media_type == mediatypes.YAML:
            return YAMLEncoder()
        if media_type == mediatypes.PROTOBUF:
            return ProtobufEncoder()
        if media_type == mediatypes.CBOR:
            return CBOREncoder()
        return JSONEncoder(pretty)


DEFAULT_FORMATS = Formats()


@dataclass(frozen=True, slots=True)
class Target:
    """What to answer with: an encoder, and the representation (OBJECT, TABLE, PARTIAL, PARTIAL_LIST)."""

    encoder: Encoder
    representation: str = OBJECT
    meta_version: str = META_VERSION  # of a Table or PartialObjectMetadata(List): v1 or v1beta1


def _representation(media: MediaRange, allowed: frozenset[str]) -> tuple[str, str] | None:
    """The representation a clause asks for and its meta.k8s.io version, if this endpoint can give it."""
    wanted = media.params.get("as")
    if not wanted:
        return (OBJECT, META_VERSION) if OBJECT in allowed else None
    version = media.params.get("v", "")
    if media.params.get("g") != META_GROUP or version not in META_VERSIONS or wanted not in allowed:
        return None
    return wanted, version


# Negotiation depends on the Accept header's text alone: its answers are kept per header (clients
# send a handful of distinct ones), for headers up to this long (a longer one is worked out anew).
MEMO_ACCEPT_LENGTH = 512
MEMO_SIZE = 256


def response_target(
    accept: str | None, pretty: bool, formats: Formats = DEFAULT_FORMATS, allowed: frozenset[str] = SINGLE
) -> Target:
    return _memoized(_negotiate_response, accept, pretty, formats, allowed)


def _memoized(negotiation: Callable[..., Target], accept: str | None, *args: object) -> Target:
    """``negotiation(accept, *args)``, kept per header when it succeeds (a 406 is raised afresh)."""
    target = _memo(negotiation, accept, *args) if accept is None or len(accept) <= MEMO_ACCEPT_LENGTH else None
    return target or negotiation(accept, *args)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memo(negotiation: Callable[..., Target], *args: object) -> Target | None:
    try:
        return negotiation(*args)
    except errors.StatusError:
        return None


def _negotiate_response(accept: str | None, pretty: bool, formats: Formats, allowed: frozenset[str]) -> Target:
    for media in mediatypes.parse_accept(accept):
        asked = _representation(media, allowed)
        if asked is None:
            continue
        representation, version = asked
        for media_type in formats.media_types:
            if media.matches(media_type):
                encoder = formats.encoder(media_type, pretty)
                if representation == TABLE and not encoder.supports_table:
                    continue
                return Target(encoder, representation, version)
    raise errors.not_acceptable(formats.refusal)


def response_encoder(accept: str | None, pretty: bool, formats: Formats = DEFAULT_FORMATS) -> Encoder:
    """For responses that are always the plain object (discovery, Status)."""
    return response_target(accept, pretty, formats, OBJECT_ONLY).encoder


def watch_target(accept: str | None, pretty: bool, formats: Formats = DEFAULT_FORMATS) -> Target:
    return _memoized(_negotiate_watch, accept, pretty, formats)


def _negotiate_watch(accept: str | None, pretty: bool, formats: Formats) -> Target:
    for media in mediatypes.parse_accept(accept):
        asked = _representation(media, SINGLE)
        if asked is None:
            continue
        representation, version = asked
        media_type = next((t for t in formats.media_types if media.matches(t)), None)
        if media_type is None:
            continue
        encoder = formats.encoder(media_type, pretty)
        if representation == TABLE and not encoder.supports_table:
            continue
        if not encoder.watch_content_type:
            break  # the first matching clause decides, even when it cannot stream
        return Target(encoder, representation, version)
    streaming = [t for t in formats.media_types if formats.encoder(t, pretty).watch_content_type]
    accepted = ", ".join(f"{t};stream=watch" for t in streaming if t != mediatypes.CBOR)
    raise errors.not_acceptable(f"only the following media types are accepted: {accepted}")


def request_media_type(content_type: str | None, formats: Formats = DEFAULT_FORMATS) -> str:
    """The format of a request body; 415 when it is not one we decode."""
    if not content_type or not content_type.strip():
        return mediatypes.JSON
    parsed = mediatypes.parse_media_type(content_type)
    if parsed is not None and parsed.essence in formats.media_types:
        return parsed.essence
    raise errors.unsupported_media_type(
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(formats.media_types)
    )
