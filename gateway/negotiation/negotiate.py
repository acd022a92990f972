"""Choosing the response encoder from Accept, and the request decoder from Content-Type.

Upstream's rules: the Accept clauses are tried in preference order and the first one a served
format matches wins; for a watch, that format must be able to stream, or the answer is 406 (a
YAML watch is refused even if JSON is acceptable further down the header). No Content-Type
means JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway import errors
from gateway.negotiation import mediatypes
from gateway.negotiation.encoders import JSONEncoder, ProtobufEncoder, YAMLEncoder

Encoder = JSONEncoder | YAMLEncoder | ProtobufEncoder


@dataclass(frozen=True, slots=True)
class Formats:
    """The formats this server serves (CBOR joins when its feature gate is on)."""

    media_types: tuple[str, ...] = (mediatypes.JSON, mediatypes.YAML, mediatypes.PROTOBUF)

    def encoder(self, media_type: str, pretty: bool) -> Encoder:
        if media_type == mediatypes.YAML:
            return YAMLEncoder()
        if media_type == mediatypes.PROTOBUF:
            return ProtobufEncoder()
        return JSONEncoder(pretty)


DEFAULT_FORMATS = Formats()


def _accepted_list(media_types: Sequence[str]) -> str:
    return ", ".join(media_types)


def response_encoder(accept: str | None, pretty: bool, formats: Formats = DEFAULT_FORMATS) -> Encoder:
    for media in mediatypes.parse_accept(accept):
        if media.params.get("as"):
            continue  # Table and metadata-only representations: see representation.py
        for media_type in formats.media_types:
            if media.matches(media_type):
                return formats.encoder(media_type, pretty)
    raise errors.not_acceptable(f"only the following media types are accepted: {_accepted_list(formats.media_types)}")


def watch_encoder(accept: str | None, pretty: bool, formats: Formats = DEFAULT_FORMATS) -> Encoder:
    streaming = [t for t in formats.media_types if formats.encoder(t, pretty).watch_content_type]
    for media in mediatypes.parse_accept(accept):
        if media.params.get("as"):
            continue
        for media_type in formats.media_types:
            if media.matches(media_type):
                encoder = formats.encoder(media_type, pretty)
                if encoder.watch_content_type:
                    return encoder
                break  # the first matching clause decides, even when it cannot stream
        else:
            continue
        break
    accepted = ", ".join(f"{t};stream=watch" for t in streaming)
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
        + _accepted_list(formats.media_types)
    )
