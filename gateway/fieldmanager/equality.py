"""The store's last step before writing an update: managedFields whose only change is a timestamp,
on an object that is otherwise unchanged, keep their old timestamps, so that nothing is written and
the resourceVersion does not move (k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager/equality.go,
IgnoreManagedFieldsTimestampsTransformer, called by the generic registry's Update after
BeforeUpdate)."""

from __future__ import annotations

from typing import Any

from protokube.gateway.fieldmanager.values import equals


def _entries(obj: Any) -> list[Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    entries = metadata.get("managedFields") if isinstance(metadata, dict) else None
    return entries if isinstance(entries, list) else []


def _without_time(entry: Any) -> Any:
    return {k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict) else entry


def ignore_managed_fields_timestamps(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``new``, or a copy with ``old``'s managedFields times when they are the only difference."""
    old_entries, new_entries = _entries(old), _entries(new)
    if len(old_entries) != len(new_entries) or not new_entries:
        return new
    pairs = list(zip(old_entries, new_entries, strict=True))
    if all(_time(o) == _time(n) for o, n in pairs):
        return new
    if not all(equals(_without_time(o), _without_time(n)) for o, n in pairs):
        return new
    restored = [{**n, "time": o["time"]} if _time(o) is not None else _without_time(n) for o, n in pairs]
    candidate = {**new, "metadata": {**new["metadata"], "managedFields": restored}}
    return candidate if equals(candidate, old) else new


def _time(entry: Any) -> Any:
    return entry.get("time") if isinstance(entry, dict) else None
