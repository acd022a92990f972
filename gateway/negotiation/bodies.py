"""Request bodies → messages: JSON, YAML, CBOR or enveloped protobuf, checked against the URL's kind.

Wording follows upstream's create/update handlers: a body whose kind or apiVersion disagrees
with the resource is a 400 (``Service in version "v1" cannot be handled as a Pod``), as is a body
that cannot be decoded at all (``the object provided is unrecognized (must be of type Pod)``).
A large YAML body is parsed off the event loop (read_body).
"""

from __future__ import annotations

from typing import Any

from protokube.gateway import errors
from protokube.gateway.negotiation import mediatypes, yamlworker
from protokube.gateway.objects import cbordecode
from protokube.gateway.objects.codec import Codec, DecodedObject
from protokube.gateway.request import MAX_BODY_BYTES
from protokube.schema import envelope, gojsonsyntax, jsondecode, yamldecode
from protokube.schema.jsondecode import DecodeError
from protokube.schema.registry import GroupVersionKind, Registry


def _summary(body: bytes) -> str:
    """Upstream's summarizeData: the first 30 bytes of a JSON object as text, of anything else in hex."""
    if not body:
        return "<empty>"
    head = body[:30].decode("utf-8", "replace") if body[:1] == b"{" else body[:30].hex()
    return head + " ..." if len(body) > 30 else head


def _check_kind(api_version: str, kind: str, expected: GroupVersionKind, known: Registry) -> None:
    """The body's apiVersion and kind (either may be left out) must name the URL's kind."""
    kind = kind or expected.kind
    api_version = api_version or expected.api_version
    if (api_version, kind) == (expected.api_version, expected.kind):
        return
    group, _, version = api_version.rpartition("/")
    found = GroupVersionKind(group, version, kind)
    if kind == expected.kind:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({expected.api_version})"
        )
    if found in known.kinds:
        cause = f"converting ({version}.{kind}) to ({expected.group or 'core'}.{expected.kind}): unknown conversion"
    else:
        cause = f'no kind "{kind}" is registered for version "{api_version}"'
    raise errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {expected.kind}: {cause}')


def decode_body(body: bytes, media_type: str, codec: Codec, known: Registry) -> DecodedObject:
    """Decode a request body into an object of the codec's kind; StatusError (400/413) when it
    cannot be. ``known`` words the error for a body of another kind the server knows."""
    _check_size(body)
    if media_type == mediatypes.PROTOBUF:
        return _decode_protobuf(body, codec, known)
    try:
        if media_type == mediatypes.YAML:
            document = yamldecode.parse(body)
        else:
            document = yamldecode.Document(parse_body(body, media_type))
    except DecodeError as err:
        raise _unreadable(err, body, media_type, codec.gvk) from None
    return _decode_values(document, body, media_type, codec, known)


async def read_body(body: bytes, media_type: str, codec: Codec, known: Registry) -> DecodedObject:
    """decode_body, with a large YAML body parsed where it cannot hold the event loop."""
    if media_type != mediatypes.YAML:
        return decode_body(body, media_type, codec, known)
    _check_size(body)
    try:
        document = await yamlworker.parse(body)
    except DecodeError as err:
        raise _unreadable(err, body, media_type, codec.gvk) from None
    return _decode_values(document, body, media_type, codec, known)


def _check_size(body: bytes) -> None:
    if len(body) > MAX_BODY_BYTES:
        raise errors.request_entity_too_large(f"limit is {MAX_BODY_BYTES}")


def _unreadable(err: DecodeError, body: bytes, media_type: str, expected: GroupVersionKind) -> errors.StatusError:
    """A body upstream's serializer cannot read: JSON's and CBOR's before they know its kind, go-yaml's
    while converting it to JSON; a CBOR body whose kind is known but whose content is not."""
    if isinstance(err, cbordecode.Undecodable):
        version = (err.api_version or expected.api_version).rpartition("/")[2]
        return errors.bad_request(
            f'{err.kind or expected.kind} in version "{version}" cannot be handled as a {expected.kind}: {err}'
        )
    stage = {
        mediatypes.JSON: "couldn't get version/kind; json parse error: ",
        mediatypes.CBOR: "unable to determine group/version/kind: ",
    }.get(media_type, "")
    # upstream reads a JSON body's kind with encoding/json: a syntax error in its scanner's words
    reason = (media_type == mediatypes.JSON and gojsonsyntax.syntax_error(body)) or err
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {expected.kind}): {stage}{reason} ({_summary(body)})"
    )


def _decode_values(
    document: yamldecode.Document, body: bytes, media_type: str, codec: Codec, known: Registry
) -> DecodedObject:
    expected = codec.gvk
    data = document.value
    if not isinstance(data, dict):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {expected.kind}): couldn't get version/kind; "
            f"json parse error: json: cannot unmarshal {type(data).__name__} into Go value of type struct "
            f'{{ APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }} '
            f"({_summary(body)})"
        )
    for key in ("kind", "apiVersion"):
        if not isinstance(data.get(key, ""), str | None):
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type {expected.kind}): couldn't get "
                f"version/kind; json parse error: json: cannot unmarshal {type(data[key]).__name__} into Go "
                f"struct field .{key} of type string ({_summary(body)})"
            )
    body_api_version, body_kind = data.get("apiVersion") or "", data.get("kind") or ""
    _check_kind(body_api_version, body_kind, expected, known)
    try:
        decoded = codec.from_dict(data)
    except DecodeError as err:
        kind = body_kind or expected.kind
        version = (body_api_version or expected.api_version).rpartition("/")[2]
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {expected.kind}: {err}'
        ) from None
    if media_type == mediatypes.YAML:  # YAML reports its own duplicates, by line
        decoded.violations = [v for v in decoded.violations if not v.startswith("duplicate field ")]
        decoded.violations += document.duplicates
    return decoded


def parse_body(body: bytes, media_type: str) -> Any:
    """JSON or CBOR bytes → plain values (dicts, lists, strings, numbers, bytes)."""
    if media_type == mediatypes.CBOR:
        return cbordecode.loads(body)
    return jsondecode.parse_json(body)


def _decode_protobuf(body: bytes, codec: Codec, known: Registry) -> DecodedObject:
    expected = codec.gvk
    try:
        unknown = envelope.unwrap(body)
    except envelope.EnvelopeError as err:
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {expected.kind}): {err} ({_summary(body)})"
        ) from None
    type_meta = unknown.typeMeta
    _check_kind(type_meta.apiVersion, type_meta.kind, expected, known)
    try:
        obj = codec.from_protobuf(unknown.raw)
    except DecodeError as problem:  # a name of its own: compiled, a name has one type
        raise errors.bad_request(
            f'{expected.kind} in version "{expected.version}" cannot be handled as a {expected.kind}: {problem}'
        ) from None
    return DecodedObject(obj, type_meta.apiVersion, type_meta.kind)
