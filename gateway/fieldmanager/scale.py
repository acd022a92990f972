"""Field ownership between an object and its scale subresource (upstream's managedfields ScaleHandler).

A Scale shows one field of its parent, the replicas (``spec.replicas`` of a Deployment, a CRD's
specReplicasPath): its managedFields are the parent's entries that own that field, each owning
``spec.replicas`` of the Scale. After a write to the Scale, the parent's entries are rebuilt from the
Scale's: a manager that no longer owns the Scale's replicas loses the parent's replicas, one that
owns them gets them (an entry of its own when it had none), and every other field stays as it was.

Entries are matched by manager, operation and subresource; the apiVersion differs by design (the
Scale's is autoscaling/v1, the parent's its own). The parent's entries of writes through the Scale
carry no time, as upstream's: its ScaleHandler.ToParent takes each entry's time from the parent's
entries, which never hold the key the Scale's manager wrote under (its apiVersion autoscaling/v1).
"""

from __future__ import annotations

from typing import Any

from protokube.gateway.fieldmanager.fieldpath import Set, make_path
from protokube.gateway.fieldmanager.managedfields import sort_entries

Entry = dict[str, Any]

SCALE_API_VERSION = "autoscaling/v1"
SUBRESOURCE = "scale"
SCALE_PATH = make_path("spec", "replicas")  # where a Scale keeps the replicas
SCALE_REPLICAS = Set.of(SCALE_PATH)


def to_scale(parent_entries: list[Entry] | None, replicas: tuple[str, ...]) -> list[Entry]:
    """The Scale's managedFields: the parent's entries that own its replicas."""
    path = make_path(*replicas)
    return [
        {**entry, "apiVersion": SCALE_API_VERSION, "fieldsV1": SCALE_REPLICAS.to_fields_v1()}
        for entry in parent_entries or ()
        if _fields(entry).has(path)
    ]


def to_parent(
    parent_entries: list[Entry] | None, scale_entries: list[Entry] | None, replicas: tuple[str, ...], api_version: str
) -> list[Entry]:
    """The parent's managedFields after a write to its Scale left these ``scale_entries``."""
    path = make_path(*replicas)
    parent_replicas = Set.of(path)
    owners = {_identity(e): e for e in scale_entries or () if _fields(e).has(SCALE_PATH)}
    result: list[Entry] = []
    for entry in parent_entries or ():
        fields = _fields(entry)
        scale_entry = owners.pop(_identity(entry), None)
        if scale_entry is not None:  # it owns the replicas still (or now): as the Scale says, with its time
            owned = fields.union(parent_replicas).to_fields_v1()
            result.append({**entry, "fieldsV1": owned, "time": scale_entry.get("time", entry.get("time"))})
        elif fields.has(path):  # it lost them to another manager
            rest = fields.difference(parent_replicas)
            if not rest.empty():
                result.append({**entry, "fieldsV1": rest.to_fields_v1()})
        else:
            result.append(entry)
    for scale_entry in owners.values():  # managers that own nothing else of the parent
        result.append({**scale_entry, "apiVersion": api_version, "fieldsV1": parent_replicas.to_fields_v1()})
    return untimed(result)


def untimed(entries: list[Entry]) -> list[Entry]:
    """The parent's entries after a write through its Scale: those of the Scale's writers without a
    time, in the order upstream encodes managedFields (so, for updates, ahead of timed ones)."""
    return sort_entries(
        [{k: v for k, v in e.items() if k != "time"} if e.get("subresource") == SUBRESOURCE else e for e in entries]
    )


def _fields(entry: Entry) -> Set:
    return Set.from_fields_v1(entry.get("fieldsV1") or {})


def _identity(entry: Entry) -> tuple[str, str, str]:
    return entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", "")
