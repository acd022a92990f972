"""JSON forms of the apimachinery types with custom marshalers: Time, MicroTime and Duration.

Quantity lives in quantity.py; IntOrString, RawExtension and FieldsV1 are simple enough to stay
inside the codecs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@lru_cache(maxsize=1024)
def format_time(seconds: int) -> str:
    """metav1.Time: RFC 3339 in UTC with second precision, e.g. 2024-01-02T15:04:05Z (remembered: a
    write's timestamps, and a list's, mostly repeat a few seconds)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(seconds: int, nanos: int) -> str:
    """metav1.MicroTime: RFC 3339 in UTC with exactly six fractional digits."""
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{nanos // 1000:06d}Z"


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


@lru_cache(maxsize=1024)
def parse_time(text: str) -> tuple[int, int]:
    """Parse RFC 3339 (as Go's time.RFC3339 layout accepts it) into (seconds, nanos) (remembered: the
    times an update or patch body carries — creationTimestamp, managedFields' — mostly repeat)."""
    match = _RFC3339.fullmatch(text)
    if not match:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, offset = match.group(7), match.group(8)
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as err:
        raise ValueError(f'parsing time "{text}": {err}') from None
    seconds = int((moment - _EPOCH).total_seconds())
    if offset not in ("Z", "z"):
        sign = -1 if offset[0] == "+" else 1
        seconds += sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)
    nanos = int(fraction[1:].ljust(9, "0")) if fraction else 0
    return seconds, nanos


# Go's time.Duration text form.
_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Parse a Go duration string ("1h30m", "1.5s", "300ms") into nanoseconds."""
    sign, rest = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
    if rest == "0":
        return 0
    total, pos = 0, 0
    while pos < len(rest):
        match = _DURATION_PART.match(rest, pos)
        if not match or not (match.group(1) or match.group(2)):
            raise ValueError(f'time: invalid duration "{text}"')
        whole, fraction, unit = match.groups()
        scale = _UNITS[unit]
        total += int(whole or "0") * scale
        if fraction:
            total += int(fraction) * scale // 10 ** len(fraction)
        pos = match.end()
    if not rest:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def format_duration(nanos: int) -> str:
    """Format nanoseconds as Go's Duration.String() does ("1h0m0s", "1.5s", "300ms", "0s")."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    n = abs(nanos)
    if n < 10**9:
        for unit, scale in (("ms", 10**6), ("µs", 10**3), ("ns", 1)):
            if n >= scale:
                return sign + _decimal(n, scale) + unit
    hours, n = divmod(n, 3600 * 10**9)
    minutes, n = divmod(n, 60 * 10**9)
    text = _decimal(n, 10**9) + "s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _decimal(value: int, scale: int) -> str:
    whole, fraction = divmod(value, scale)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
