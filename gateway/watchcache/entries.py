"""What the watch cache holds per object, and per change.

An ``Entry`` is one object's cached state: its protobuf bytes (in an ObjectView that does not
keep the decoded message), its encodings once made, and the few values selectors need — labels
and selectable fields — extracted once when the object arrives.
A ``CacheEvent`` is one change, with the entry before and after, and its encoded frames, shared by
every watcher that receives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from sys import intern

from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView


@dataclass(frozen=True, slots=True)
class Selectable:
    """What field selectors can ask of a resource's objects (upstream's GetAttrs)."""

    # The selectable fields beyond metadata.name and metadata.namespace, in their order.
    names: tuple[str, ...]
    # An object's values of every selectable field, metadata.name and metadata.namespace included.
    values: Callable[[Obj], dict[str, str]]


@dataclass(slots=True)
class Entry:
    key: str  # the storage key below the resource's prefix: "namespace/name" or "name"
    namespace: str
    labels: dict[str, str]
    # The values of the resource's selectable fields beyond name and namespace, in their order
    # (a tuple: a dict per cached object would cost more than the object's own bytes).
    field_values: tuple[str, ...]
    field_names: tuple[str, ...]  # shared by every entry of the resource
    view: ObjectView

    @property
    def resource_version(self) -> int:
        return self.view.resource_version


def make_entry(key: str, view: ObjectView, selectable: Selectable, decoded: Obj | None = None) -> Entry:
    """The entry of a view (``decoded``: the object its bytes are known to decode to). Namespaces,
    labels and field values are mostly the same few strings over many objects (app=web,
    status.phase=Running): each is interned, so that the cache holds one copy of each, not one per
    object (a decoded message hands out a new string at every access)."""
    obj = view.decode_once(decoded)  # decoded once here; the view keeps only bytes afterwards
    names = selectable.names
    values = selectable.values(obj) if names else {}
    meta = obj.metadata
    labels = {intern(k): intern(v) for k, v in meta.labels.items()}
    return Entry(key, intern(meta.namespace), labels, tuple(intern(values[n]) for n in names), names, view)


def entry_fields(entry: Entry) -> dict[str, str]:
    """The values field selectors see (built only when a field selector asks)."""
    fields = {"metadata.name": entry.key.rpartition("/")[2], "metadata.namespace": entry.namespace}
    fields.update(zip(entry.field_names, entry.field_values, strict=True))
    return fields


@dataclass(slots=True)
class CacheEvent:
    type: str  # ADDED, MODIFIED or DELETED
    revision: int
    entry: Entry  # the object after the change (for DELETED: its last state, at the deletion revision)
    prev: Entry | None
    # Encoded frames by (encoder key, event type as a given watcher sees it).
    frames: dict[tuple[str, str], bytes] = field(default_factory=dict)
