"""``metadata.managedFields`` on the wire and as managers' sets
(k8s.io/apimachinery/pkg/util/managedfields/internal: managedfields.go, fields.go).

An entry is keyed by a manager identifier: the JSON of the entry without time, fieldsType and
fieldsV1 (and without apiVersion for Apply), e.g. ``{"manager":"kubectl","operation":"Apply"}`` and
``{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1"}``. So one
manager's Update entries at different API versions or subresources are distinct entries, while its
Apply entry follows it across versions.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from typing import Any, Final

from protokube.gateway.fieldmanager.fieldpath import FieldsV1Error, Set
from protokube.gateway.fieldmanager.merge import ManagedFields, VersionedSet
from protokube.gateway.fieldmanager.values import go_json_string

APPLY: Final = "Apply"
UPDATE: Final = "Update"
FIELDS_V1: Final = "FieldsV1"

# The JSON fields of metav1.ManagedFieldsEntry, in Go struct order.
_ENTRY_KEYS: Final = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")


class DecodeError(ValueError):
    """managedFields that upstream's DecodeManagedFields rejects."""


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class Managed:
    """upstream's internal.Managed: managers' field sets and the times of their last change."""

    def __init__(self, fields: ManagedFields | None = None, times: dict[str, str | None] | None = None) -> None:
        self.fields: ManagedFields = {} if fields is None else fields
        self.times: dict[str, str | None] = {} if times is None else times


@functools.lru_cache(maxsize=4096)
def build_manager_identifier(manager: str, operation: str, api_version: str = "", subresource: str = "") -> str:
    """upstream's BuildManagerIdentifier: the JSON of the entry's identifying fields (encoding/json)."""
    parts = [f'"manager":{go_json_string(manager, short_bf=True)}'] if manager else []
    if operation:
        parts.append(f'"operation":{go_json_string(operation, short_bf=True)}')
    if api_version and operation != APPLY:
        parts.append(f'"apiVersion":{go_json_string(api_version, short_bf=True)}')
    if subresource:
        parts.append(f'"subresource":{go_json_string(subresource, short_bf=True)}')
    return "{" + ",".join(parts) + "}"


@functools.lru_cache(maxsize=4096)
def parse_identifier(identifier: str) -> dict[str, Any]:
    """The entry fields an identifier carries (upstream json.Unmarshals it); {} when not JSON."""
    try:
        parsed = json.loads(identifier)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# --- times -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _parse_time(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("z", "Z"))
    if value.tzinfo is None:
        raise ValueError(text)
    return value.astimezone(UTC)


def normalize_time(text: Any) -> str | None:
    """A metav1.Time as Go re-encodes it: RFC 3339, UTC, whole seconds."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise DecodeError(f"invalid time {text!r}")
    return _normalize_time(text)


@functools.lru_cache(maxsize=4096)
def _normalize_time(text: str) -> str:
    try:
        t = _parse_time(text)
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"
    except ValueError:
        raise DecodeError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00"') from None


def unix_seconds(text: str | None) -> int:
    """Seconds since the epoch; 0 for no time (upstream's sort treats a nil time as 0)."""
    if text is None:
        return 0
    return int(_parse_time(text).timestamp() // 1)


# --- decoding ----------------------------------------------------------------------------------


def _string(entry: dict[str, Any], name: str) -> str:
    value = entry.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DecodeError(f"{name} must be a string")
    return value


def is_reset(entries: Any) -> bool:
    """upstream's isResetManagedFields: ``[]`` or ``[{}]`` (a single all-empty entry) clears them."""
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    if len(entries) == 1 and isinstance(entries[0], dict):
        return all(entries[0].get(k) in (None, "") for k in _ENTRY_KEYS)
    return False


def decode(entries: Any) -> Managed:
    """upstream's DecodeManagedFields: raises DecodeError on the first invalid entry."""
    managed = Managed()
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise DecodeError("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise DecodeError("managedFields entries must be objects")
        operation = _string(entry, "operation")
        if operation not in (APPLY, UPDATE):
            raise DecodeError("operation must be `Apply` or `Update`")
        api_version = _string(entry, "apiVersion")
        if not api_version:
            raise DecodeError("apiVersion must not be empty")
        fields_type = _string(entry, "fieldsType")
        if fields_type == "":
            raise DecodeError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != FIELDS_V1:
            raise DecodeError(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        identifier = build_manager_identifier(
            _string(entry, "manager"), operation, api_version, _string(entry, "subresource")
        )
        fields_v1 = entry.get("fieldsV1")
        try:
            fields = Set() if fields_v1 is None else Set.from_fields_v1(fields_v1)
        except FieldsV1Error as e:
            raise DecodeError(
                f"error decoding versioned set from {_entry_text(entry)}: error decoding set: {e}"
            ) from None
        managed.fields[identifier] = VersionedSet(fields, api_version, operation == APPLY)
        managed.times[identifier] = normalize_time(entry.get("time"))
    return managed


def _entry_text(entry: dict[str, Any]) -> str:
    """An entry in messages (upstream prints the Go struct with %v; this is an approximation)."""
    return "{" + " ".join(str(entry.get(k, "")) for k in _ENTRY_KEYS if k != "fieldsV1") + "}"


# --- encoding ----------------------------------------------------------------------------------


def encode(managed: Managed) -> list[dict[str, Any]] | None:
    """upstream's encodeManagedFields: one entry per manager, sorted; None when there are none."""
    if not managed.fields:
        return None
    entries = []
    for identifier, vs in managed.fields.items():
        info = parse_identifier(identifier)
        entry: dict[str, Any] = {}
        if info.get("manager"):
            entry["manager"] = info["manager"]
        entry["operation"] = APPLY if vs.applied else (info.get("operation") or "")
        if not entry["operation"]:
            del entry["operation"]
        if vs.api_version:
            entry["apiVersion"] = vs.api_version
        time = managed.times.get(identifier)
        if time is not None:
            entry["time"] = time
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = vs.set.to_fields_v1()
        if info.get("subresource"):
            entry["subresource"] = info["subresource"]
        entries.append(entry)
    return sort_entries(entries)


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """upstream's sortEncodedManagedFields."""
    return sorted(entries, key=_sort_key)


def _sort_key(entry: dict[str, Any]) -> tuple[str, int, str, str, str]:
    """upstream's sortEncodedManagedFields: operation (Apply first), time, manager, apiVersion, subresource."""
    return (
        entry.get("operation", ""),
        unix_seconds(entry.get("time")),
        entry.get("manager", ""),
        entry.get("apiVersion", ""),
        entry.get("subresource", ""),
    )
