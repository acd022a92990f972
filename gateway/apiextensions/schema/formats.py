"""The string formats custom resource validation checks (upstream's kube-openapi strfmt registry as
apiextensions-apiserver keeps it: pkg/apiserver/validation/formats.go). Unknown formats check
nothing, as upstream."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import datetime

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_UUID_VERSION = {"uuid3": "3", "uuid4": "4", "uuid5": "5"}
_HOSTNAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", re.IGNORECASE)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DURATION = re.compile(r"^(-?\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$")
_MAC = re.compile(r"^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$", re.IGNORECASE)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _uuid(version: str | None) -> Callable[[str], bool]:
    return lambda text: bool(_UUID.match(text)) and (version is None or text[14] == version)


def _date(text: str) -> bool:
    if not _DATE.match(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _date_time(text: str) -> bool:
    if not _DATE_TIME.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:
        return False
    return True


def _byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False

    return check


def _cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


STRING_FORMATS: dict[str, Callable[[str], bool]] = {
    "uuid": _uuid(None),
    **{name: _uuid(version) for name, version in _UUID_VERSION.items()},
    "hostname": lambda text: len(text) <= 255 and bool(_HOSTNAME.match(text)),
    "date": _date,
    "date-time": _date_time,
    "datetime": _date_time,
    "byte": _byte,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "cidr": _cidr,
    "mac": lambda text: bool(_MAC.match(text)),
    "email": lambda text: bool(_EMAIL.match(text)),
    "duration": lambda text: bool(_DURATION.match(text)),
}
# Integer formats: the range they allow.
INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
