"""How Go's net/http writes a response's head: the status line with its reason phrase, canonical
header names, the Date header; and its plain-text answers to requests it cannot read."""

from __future__ import annotations

import time
from email.utils import formatdate
from typing import Final

from protokube.gateway.serving.reasons import REASONS


def reason(code: int) -> str:
    """The phrase Go writes after ``code``: its StatusText, or "status code N" for a code it has none for."""
    return REASONS.get(code) or f"status code {code}"


def status_line(code: int, version: bytes = b"1.1") -> bytes:
    """``HTTP/1.1 409 Conflict\\r\\n``, as Go writes it (three digits, then the phrase)."""
    return b"HTTP/%s %03d %s\r\n" % (version, code, reason(code).encode())


STATUS_LINES: Final = {code: status_line(code) for code in REASONS}  # the common case, made once


def go_error(code: int) -> bytes:
    """Go's net/http answer to a request it could not read: plain text, the connection closed."""
    text = f"{code} {reason(code)}".encode()
    return b"HTTP/1.1 " + text + b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + text


def canonical(name: bytes) -> bytes:
    """Go's CanonicalMIMEHeaderKey of a header name: ``audit-id`` → ``Audit-Id``."""
    return b"-".join(part.capitalize() for part in name.split(b"-"))


_field_starts: Final[dict[bytes, bytes]] = {}


def field_start(name: bytes) -> bytes:
    """A response header's line up to its value, its name in Go's canonical form: ``content-type`` →
    ``Content-Type: `` (remembered for the first 1,024 names)."""
    found = _field_starts.get(name)
    if found is None:
        found = canonical(name) + b": "
        if len(_field_starts) < 1024:
            _field_starts[name] = found
    return found


_date: tuple[int, bytes] = (0, b"")


def http_date() -> bytes:
    """The current time as a Date header's value (made once a second)."""
    global _date
    now = int(time.time())
    if _date[0] != now:
        _date = (now, formatdate(now, usegmt=True).encode())
    return _date[1]
