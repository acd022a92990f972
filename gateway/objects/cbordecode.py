"""CBOR request bodies → JSON values, refused where upstream's decode mode refuses them
(k8s.io/apimachinery runtime/serializer/cbor/internal/modes/decode.go over fxamacker/cbor).

Upstream first checks the whole data item is well-formed (nesting, sizes, no bignum tag, nothing
after it), then reads apiVersion and kind from the top-level map, then decodes the object; an error
of the first two steps means it does not know the body's kind (``Unreadable``), one of the last is
worded with the kind (``Undecodable``). Maps with duplicate keys are refused outright.
"""

from __future__ import annotations

import datetime
import io
import math
from collections.abc import Mapping
from typing import Any

import cbor2

from protokube.schema.jsondecode import DecodeError

# upstream's decode mode limits
MAX_NESTED_LEVELS = 64
MAX_ELEMENTS = 1024
INT64 = (-(2**63), 2**63 - 1)
BIGNUM = "cbor: data item of cbor type tag is not accepted by protocol: bignum"
NESTED = f"cbor: exceeded max nested level {MAX_NESTED_LEVELS}"
LATER_ENCODING_TAGS = (21, 22, 23)  # RFC 8949 3.4.5.2: base64url, base64, base16
_CBOR2_DEPTH = 2 * MAX_NESTED_LEVELS + 1  # cbor2 counts every tag as a level, upstream only nested ones


class Unreadable(DecodeError):
    """The body is not one well-formed data item, or its top-level map cannot be read: upstream's
    ``unable to determine group/version/kind``."""


class Undecodable(DecodeError):
    """The body's kind is known (``api_version``/``kind`` as the body states them, "" when absent),
    its content is not."""

    def __init__(self, message: str, api_version: str, kind: str) -> None:
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind


class _Bignum(Exception):
    """Tags 2 and 3: refused before their content becomes a (possibly enormous) integer."""


def _refuse_bignum(content: Any, immutable: bool) -> Any:
    raise _Bignum


_NO_BIGNUMS = {2: _refuse_bignum, 3: _refuse_bignum}


def loads(body: bytes) -> Any:
    """CBOR bytes → JSON values (dicts, lists, str, int, float, bool, None) and byte strings, as
    upstream's decoder reads them: an unrecognized tag stands for its content, time tags become
    RFC 3339 strings; NaN, ±Inf, integers beyond int64, bignums, other simple values, duplicate map
    keys, anything after the first item and nesting or sizes beyond upstream's limits are refused."""
    try:
        value, end = _decode(body, allow_duplicate_keys=False)
    except Unreadable as strict:
        # a duplicate key, or what well-formedness finds (reported first, as upstream checks it first)
        value, end = _decode(body, allow_duplicate_keys=True)
        _check_end(body, end)
        raise _duplicate(body, value) or strict from None
    _check_end(body, end)
    try:
        return _json_value(value, 0)
    except Unreadable:
        raise
    except DecodeError as err:
        raise Undecodable(str(err), *_type_meta(value)) from None


def _decode(body: bytes, *, allow_duplicate_keys: bool) -> tuple[Any, int]:
    """The first data item (the self-described tag 55799, if present, dropped) and where it ends."""
    stream = io.BytesIO(body)
    decoder = cbor2.CBORDecoder(
        stream, semantic_decoders=_NO_BIGNUMS, allow_duplicate_keys=allow_duplicate_keys, max_depth=_CBOR2_DEPTH
    )
    try:
        return decoder.decode(), stream.tell()
    except cbor2.CBORDecodeEOF:
        raise Unreadable("EOF" if not body else "unexpected EOF") from None
    except cbor2.CBORDecodeError as err:
        if isinstance(err.__cause__, _Bignum):
            raise Unreadable(BIGNUM) from None
        if "nesting depth" in str(err):  # cbor2 counts tags as levels too: deeper than upstream's limit
            raise Unreadable(NESTED) from None
        raise Unreadable(f"cbor: {err}") from None
    except (ValueError, TypeError, RecursionError, OverflowError) as err:
        raise Unreadable(f"cbor: {err}") from None


def _check_end(body: bytes, end: int) -> None:
    if end != len(body):
        raise Unreadable(f"cbor: {len(body) - end} bytes of extraneous data starting at index {end}")


def _type_meta(value: Any) -> tuple[str, str]:
    fields = value if isinstance(value, Mapping) else {}
    return _text(fields.get("apiVersion")), _text(fields.get("kind"))


def _text(value: Any) -> str:
    """A text or byte string as text, anything else as ""."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else ""


def _duplicate(body: bytes, value: Any) -> DecodeError | None:
    """Upstream's error for the first duplicate map key (one of the top-level map's is found while
    reading apiVersion and kind, before any nested one); None if keys equal only to Python."""
    scan = _Scan(body)
    scan.item(0)
    top, nested = scan.duplicates.get(1), scan.duplicates.get(0)
    found = top or nested
    if found is None:
        return None
    message = f'cbor: found duplicate map key "{found[0]}" at map element index {found[1]}'
    return Unreadable(message) if top else Undecodable(message, *_type_meta(value))


class _Scan:
    """Walks a well-formed data item's structure to find its first duplicate map keys: the
    top-level map's (``duplicates[1]``) and the first nested one in document order (``[0]``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.duplicates: dict[int, tuple[Any, int]] = {}

    def head(self) -> tuple[int, int | None]:
        """The major type and argument (None: indefinite length) of the item at ``pos``."""
        initial = self.data[self.pos]
        self.pos += 1
        major, info = initial >> 5, initial & 0x1F
        if info < 24:
            return major, info
        if info == 31:
            return major, None
        size = 1 << (info - 24)
        argument = int.from_bytes(self.data[self.pos : self.pos + size], "big")
        self.pos += size
        return major, argument

    def breaks(self) -> bool:
        """Whether an indefinite-length item ends here (its break byte is consumed)."""
        if self.data[self.pos] == 0xFF:
            self.pos += 1
            return True
        return False

    def item(self, depth: int) -> None:
        major, argument = self.head()
        if major in (2, 3):  # byte and text strings (an indefinite one is definite chunks)
            if argument is None:
                while not self.breaks():
                    self.item(depth)
            else:
                self.pos += argument
        elif major == 4:
            count = 0
            while (count < argument) if argument is not None else not self.breaks():
                self.item(depth + 1)
                count += 1
        elif major == 5:
            self.map(argument, depth + 1)
        elif major == 6:  # a tag: its content at the same level
            self.item(depth)

    def map(self, pairs: int | None, depth: int) -> None:
        seen: set[Any] = set()
        index = 0
        while (index < pairs) if pairs is not None else not self.breaks():
            start = self.pos
            self.item(depth)
            key = cbor2.loads(self.data[start : self.pos], immutable=True)
            where = 1 if depth == 1 else 0
            if key in seen and where not in self.duplicates:
                self.duplicates[where] = (key, index)
            seen.add(key)
            self.item(depth)
            index += 1


def _json_value(value: Any, level: int) -> Any:
    """``level``: the containers this value is in. A byte string is a string, as upstream decodes one
    (client-go writes every string so); one under an expected-later-encoding tag (21–23, as []byte
    is written) stays bytes: a bytes field takes them as they are, a string field as base64 text."""
    if isinstance(value, cbor2.CBORTag) and value.tag in LATER_ENCODING_TAGS and isinstance(value.value, bytes):
        return value.value
    while isinstance(value, cbor2.CBORTag):
        value = value.value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise DecodeError(f"cbor: {value} overflows Go's int64")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DecodeError(f"cbor: floating-point number {value} is not accepted")
        return value
    if isinstance(value, datetime.datetime):
        return _rfc3339_nano(value)
    if isinstance(value, Mapping | list | tuple) and level >= MAX_NESTED_LEVELS:
        raise Unreadable(NESTED)
    if isinstance(value, Mapping):
        if len(value) > MAX_ELEMENTS:
            raise Unreadable(f"cbor: exceeded max number of key-value pairs {MAX_ELEMENTS} for CBOR map")
        return {_key(k): _json_value(v, level + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if len(value) > MAX_ELEMENTS:
            raise Unreadable(f"cbor: exceeded max number of elements {MAX_ELEMENTS} for CBOR array")
        return [_json_value(v, level + 1) for v in value]
    raise DecodeError(f"cbor: cannot decode {type(value).__name__} into a JSON value")


def _key(key: Any) -> str:
    """A map key as the string upstream decodes it into: a text string, or a byte string (client-go
    encodes field names and strings as byte strings: FieldNameByteStringAllowed, ByteStringToString)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        return key.decode("utf-8", "replace")
    raise DecodeError("cbor: map keys must be text or byte strings")


def _rfc3339_nano(moment: datetime.datetime) -> str:
    """Go's time.RFC3339Nano: the fraction without trailing zeros, Z for UTC."""
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    offset = moment.utcoffset()
    if not offset:
        return text + "Z"
    return text + moment.isoformat()[-6:]
