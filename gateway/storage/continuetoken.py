"""Continue tokens of paginated lists, in upstream's format (k8s.io/apiserver storage/continue.go).

A token is base64url (no padding) of ``{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key>"}``:
the revision every page is read at, and the storage key (below the list's prefix) to resume from
— the last returned key plus "\\x00". A negative revision means "continue at the latest".
"""

from __future__ import annotations

import base64
import json
import posixpath
import string
from collections.abc import Callable
from typing import Any

from protokube.gateway.patch import gojson
from protokube.schema.validtext import valid_text

VERSION = "meta.k8s.io/v1"
INVALID = "continue key is not valid"


_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
_INT64 = (-(2**63), 2**63 - 1)
# upstream's continueToken fields: JSON name, Go type, what fits it.
_FIELDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "v": ("string", lambda v: isinstance(v, str) and not isinstance(v, _Number)),
    "rv": ("int64", lambda v: _int64(v)),
    "start": ("string", lambda v: isinstance(v, str) and not isinstance(v, _Number)),
}


class ContinueTokenError(ValueError):
    pass


class _Number(str):
    """A JSON number as written (Go's errors quote it so)."""


def encode(revision: int, start: str) -> str:
    payload = json.dumps({"v": VERSION, "rv": revision, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()


def _base64_error(token: str) -> str | None:
    """Go's base64.RawURLEncoding error for ``token``: the first byte that is not of the alphabet
    (line breaks are skipped), or the last one when it is alone in its quantum."""
    count = 0
    for index, char in enumerate(token):
        if char in "\r\n":
            continue
        if char not in _ALPHABET:
            return f"illegal base64 data at input byte {index}"
        count += 1
        last = index
    if count % 4 == 1:
        return f"illegal base64 data at input byte {last}"
    return None


def _fields(data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """What encoding/json decodes of ``data`` into upstream's continueToken struct (member names
    matched without regard to case, a later member winning), and its first type error, if any."""
    found: dict[str, Any] = {}
    error = None
    for key, value in data.items():
        field = _FIELDS.get(key.lower())
        if field is None or value is None:
            continue
        go_type, fits = field
        if fits(value):
            found[key.lower()] = value
        elif error is None:
            error = _type_error(key.lower(), go_type, value)
    return found, error


def _type_error(name: str, go_type: str, value: Any) -> str:
    if isinstance(value, _Number):  # Go names the number as written
        return f"json: cannot unmarshal number {value} into Go struct field continueToken.{name} of type {go_type}"
    return gojson.type_error(value, go_type, f"continueToken.{name}")


def _int64(value: Any) -> bool:
    return isinstance(value, _Number) and value.lstrip("-").isdigit() and _INT64[0] <= int(value) <= _INT64[1]


def decode(token: str) -> tuple[int, str]:
    """(revision, start key below the list prefix); ContinueTokenError as upstream words it."""
    problem = _base64_error(token)
    if problem is not None:
        raise ContinueTokenError(f"{INVALID}: {problem}")
    clean = token.replace("\r", "").replace("\n", "")
    data = base64.urlsafe_b64decode(clean + "=" * (-len(clean) % 4))
    try:
        gojson.check(data)
    except gojson.GoJSONError as err:
        raise ContinueTokenError(f"{INVALID}: {err}") from None
    value = json.loads(data.decode("utf-8", "replace"), parse_int=_Number, parse_float=_Number)
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ContinueTokenError(f"{INVALID}: {gojson.type_error(value, 'storage.continueToken')}")
    fields, problem = _fields(value)
    if problem is not None:
        raise ContinueTokenError(f"{INVALID}: {problem}")
    version, revision, start = fields.get("v", ""), int(fields.get("rv", 0)), fields.get("start", "")
    if version != VERSION:
        raise ContinueTokenError(f"{INVALID}: server does not recognize this encoded version {version}")
    if revision == 0:
        raise ContinueTokenError(f"{INVALID}: incorrect encoded start resourceVersion (version {VERSION})")
    start = valid_text(start)
    if not start:
        raise ContinueTokenError(f"{INVALID}: encoded start key empty (version {VERSION})")
    key = start if start.startswith("/") else "/" + start
    cleaned = posixpath.normpath(key)
    if cleaned.startswith("//"):  # POSIX keeps two leading slashes; Go's path.Clean does not
        cleaned = "/" + cleaned.lstrip("/")
    if cleaned != key:  # no path traversal out of the list's prefix
        raise ContinueTokenError(f"{INVALID}: {start}")
    return revision, key[1:]
