"""Field ownership on every write: metadata.managedFields through the kind's FieldManager
(gateway/fieldmanager), between the objects the store handles and the JSON the manager works on.

Every create, update and patch records what its manager changed (an Update entry); server-side
apply merges the applied configuration and records what it applies (an Apply entry).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, Final

from protokube.gateway.fieldmanager import scale
from protokube.gateway.fieldmanager.fieldpath import Set, make_path
from protokube.gateway.fieldmanager.manager import FieldManager, Unchanged
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import deep, wellknown
from protokube.schema.registry import Resource
from protokube.schema.typetree import proto_type

# What a status write may not change in metadata (as the status strategies reset it).
STATUS_METADATA: Final = ("labels", "annotations", "finalizers", "ownerReferences")


_now: tuple[int, str] = (0, "")


def now() -> str:
    """The time of a managedFields entry: RFC 3339, seconds, UTC (wellknown's metav1.Time text), made
    once a second."""
    global _now
    seconds = int(time.time())
    if _now[0] != seconds:
        _now = (seconds, wellknown.format_time(seconds))
    return _now[1]


def reset_fields(top_level: list[str], status_is_separate: bool) -> dict[str, Set]:
    """What each endpoint resets (upstream's GetResetFields): the main resource its status, the
    status subresource everything but status (and the metadata status writes may not change)."""
    if not status_is_separate:
        return {}
    spec = [make_path(name) for name in top_level if name not in ("apiVersion", "kind", "metadata", "status")]
    return {
        "": Set.of(make_path("status")),
        "status": Set.of(*spec, *(make_path("metadata", name) for name in STATUS_METADATA)),
    }


class Ownership:
    """A kind's field ownership. Its FieldManager is made at the kind's first write: making one types
    the kind's object (~0.4 ms), and most kinds a server serves are not written before it is ready."""

    def __init__(self, codec: Codec, fields: Callable[[], FieldManager]) -> None:
        self.codec = codec
        self._make_fields = fields
        self._fields: FieldManager | None = None

    @property
    def fields(self) -> FieldManager:
        if self._fields is None:
            self._fields = self._make_fields()
        return self._fields

    @classmethod
    def of(cls, resource: Resource, codec: Codec, status_is_separate: bool) -> Ownership | None:
        """The ownership tracking of a compiled kind (kinds known only at run time have no type yet)."""
        if resource.extension is not None:  # a CRD's version: the type its schema states
            object_type = resource.extension.object_type
        elif not resource.message:
            return None
        else:
            object_type = functools.partial(proto_type, resource.message)

        def fields() -> FieldManager:
            obj_type = object_type()
            resets = reset_fields(list(obj_type.fields), status_is_separate)
            return FieldManager(obj_type, resource.gvk.api_version, resource.kind, reset_fields=resets)

        return cls(codec, fields)

    def update(self, old: Obj | None, new: Obj, manager: str, subresource: str = "") -> None:
        """Record an Update by ``manager``: ``new``'s managedFields are set here."""
        live = self.codec.to_dict(old) if old is not None else None
        result = self.fields.update(live, self.codec.to_dict(new), manager, subresource, now=now())
        entries = result.get("metadata", {}).get("managedFields")
        if subresource == scale.SUBRESOURCE and entries:
            entries = scale.untimed(entries)
        _set_managed_fields(new, entries)

    def apply(
        self, live: Obj | None, applied: dict[str, Any], manager: str, force: bool, subresource: str = ""
    ) -> Obj | None:
        """The object after ``manager`` applies ``applied``; None when nothing at all changes."""
        current = self.codec.to_dict(live) if live is not None else None
        merged = self.fields.apply(current, applied, manager, force, subresource, now=now())
        if isinstance(merged, Unchanged):
            return None
        return self.codec.from_dict(merged).obj


def _set_managed_fields(obj: Obj, entries: list[dict[str, Any]] | None) -> None:
    obj.metadata.ClearField("managedFields")
    if entries:
        obj.metadata.managedFields.extend(_entry(values) for values in entries)


def _entry(values: dict[str, Any]) -> meta.ManagedFieldsEntry:
    """An entry as managedfields.encode writes it (strings, the time in RFC 3339 seconds, fieldsV1 as
    JSON values), made as the JSON decoder makes it from them, in Go's shape: Go always writes the
    five strings (goshape's plan of the entry sets them and nothing else), so each is set here."""
    entry = meta.ManagedFieldsEntry(
        manager=values.get("manager", ""),
        operation=values.get("operation", ""),
        apiVersion=values.get("apiVersion", ""),
        fieldsType=values.get("fieldsType", ""),
        subresource=values.get("subresource", ""),
    )
    time = values.get("time")
    if time is not None:
        entry.time.seconds = wellknown.parse_time(time)[0]  # remembered: one second's writes share it
    fields = values.get("fieldsV1")
    if fields is not None:
        entry.fieldsV1.Raw = deep.dumps(fields)
    return entry
