"""Continue tokens of paginated lists, in upstream's format (k8s.io/apiserver storage/continue.go).

A token is base64url (no padding) of ``{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key>"}``:
the revision every page is read at, and the storage key (below the list's prefix) to resume from
— the last returned key plus "\\x00". A negative revision means "continue at the latest".
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath

from protokube.schema.validtext import valid_text

VERSION = "meta.k8s.io/v1"
INVALID = "continue key is not valid"


class ContinueTokenError(ValueError):
    pass


def encode(revision: int, start: str) -> str:
    payload = json.dumps({"v": VERSION, "rv": revision, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()


def decode(token: str) -> tuple[int, str]:
    """(revision, start key below the list prefix); ContinueTokenError as upstream words it."""
    try:
        if "=" in token:
            raise binascii.Error("illegal base64 data (padding)")
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as err:
        raise ContinueTokenError(f"{INVALID}: {err}") from None
    if not isinstance(data, dict):
        raise ContinueTokenError(f"{INVALID}: not a token object")
    if data.get("v") != VERSION:
        raise ContinueTokenError(f"{INVALID}: server does not recognize this encoded version {data.get('v')}")
    revision, start = data.get("rv"), data.get("start")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision == 0 or abs(revision) >= 2**63:
        raise ContinueTokenError(f"{INVALID}: incorrect encoded start resourceVersion (version {VERSION})")
    if isinstance(start, str):
        start = valid_text(start)
    if not isinstance(start, str) or not start:
        raise ContinueTokenError(f"{INVALID}: encoded start key empty (version {VERSION})")
    key = start if start.startswith("/") else "/" + start
    if posixpath.normpath(key) != key:  # no path traversal out of the list's prefix
        raise ContinueTokenError(f"{INVALID}: {start}")
    return revision, key[1:]
