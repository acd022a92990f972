"""Field ownership between an object and its scale subresource (upstream's managedfields ScaleHandler).

A Scale shows one field of its parent, the replicas (``spec.replicas`` of a Deployment, a CRD's
specReplicasPath): its managedFields are the parent's entries that own that field, each owning
``spec.replicas`` of the Scale. After a write to the Scale, the parent's entries are rebuilt from the
Scale's: a manager that no longer owns the Scale's replicas loses the parent's replicas, one that
owns them gets them (an entry of its own when it had none), and every other field stays as it was.

Entries are matched by manager, operation and subresource; the apiVersion differs by design (the
Scale's is autoscaling/v1, the parent's its own).
"""

from __future__ import annotations

import copy
from typing import Any

Entry = dict[str, Any]
Path = tuple[str, ...]

SCALE_API_VERSION = "autoscaling/v1"
SCALE_REPLICAS: Path = ("spec", "replicas")


def to_scale(parent_entries: list[Entry] | None, replicas: Path) -> list[Entry]:
    """The Scale's managedFields: the parent's entries that own its replicas."""
    return [
        {**entry, "apiVersion": SCALE_API_VERSION, "fieldsV1": _fields_of(SCALE_REPLICAS)}
        for entry in parent_entries or ()
        if _owns(entry, replicas)
    ]


def to_parent(
    parent_entries: list[Entry] | None, scale_entries: list[Entry] | None, replicas: Path, api_version: str
) -> list[Entry]:
    """The parent's managedFields after a write to its Scale left these ``scale_entries``."""
    owners = {_identity(e): e for e in scale_entries or () if _owns(e, SCALE_REPLICAS)}
    result: list[Entry] = []
    for entry in parent_entries or ():
        identity = _identity(entry)
        if identity in owners:  # it owns the replicas still (or now): as the Scale says, with its time
            scale_entry = owners.pop(identity)
            merged = copy.deepcopy(entry)
            _add(merged.setdefault("fieldsV1", {}), replicas)
            result.append({**merged, "time": scale_entry.get("time", entry.get("time"))})
        elif _owns(entry, replicas):  # it lost them to another manager
            stolen = copy.deepcopy(entry)
            _remove(stolen["fieldsV1"], replicas)
            if stolen["fieldsV1"]:
                result.append(stolen)
        else:
            result.append(entry)
    for scale_entry in owners.values():  # managers that own nothing else of the parent
        result.append({**scale_entry, "apiVersion": api_version, "fieldsV1": _fields_of(replicas)})
    return result


def _identity(entry: Entry) -> tuple[str, str, str]:
    return entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", "")


def _fields_of(path: Path) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    _add(fields, path)
    return fields


def _owns(entry: Entry, path: Path) -> bool:
    node = entry.get("fieldsV1") or {}
    for step in path:
        node = node.get(f"f:{step}") if isinstance(node, dict) else None
        if node is None:
            return False
    return True


def _add(fields: dict[str, Any], path: Path) -> None:
    for step in path:
        fields = fields.setdefault(f"f:{step}", {})


def _remove(fields: dict[str, Any], path: Path) -> None:
    """Remove the path's leaf, then every parent left empty (a set of fields has no empty nodes,
    except "." markers, which are entries of their own)."""
    key, rest = f"f:{path[0]}", path[1:]
    child = fields.get(key)
    if child is None:
        return
    if rest:
        _remove(child, rest)
        if child:
            return
    del fields[key]
