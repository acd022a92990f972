"""Per-kind behaviour the resource options cannot express (upstream's REST strategies).

``KindHooks`` holds the defaults every kind shares; a subclass per kind overrides what differs
and is registered by kind name. Hooks change the message in place.
"""

from __future__ import annotations

import time

from google.protobuf.message import Message

from gateway.errors import FieldError
from protokube.schema.descriptors import descriptor
from protokube.schema.registry import Resource

POD_TERMINAL_PHASES = ("Succeeded", "Failed")


class KindHooks:
    """Behaviour shared by every kind; override per kind below."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        fields = resource_fields(resource)
        self.has_spec = "spec" in fields
        self.has_status = "status" in fields

    def prepare_for_create(self, obj: Message) -> None:
        """Reset what clients may not set on create: status, when it has its own subresource."""
        if self.resource.has_status and self.has_status:
            obj.ClearField("status")
            obj.status.SetInParent()

    def prepare_for_update(self, new: Message, old: Message) -> None:
        """Keep the stored status: only the status subresource writes it."""
        if self.resource.has_status and self.has_status:
            new.status.CopyFrom(old.status)

    def validate(self, obj: Message) -> list[FieldError]:
        return []

    def grace_period_seconds(self, obj: Message, requested: int | None) -> int:
        """Seconds a delete waits before the object is removed (0: remove now)."""
        return 0

    def blocks_deletion(self, obj: Message) -> bool:
        """Whether something beyond metadata.finalizers must happen before the object goes."""
        return False

    def mark_deleting(self, obj: Message) -> None:
        """Called when a delete sets deletionTimestamp instead of removing the object."""

    def field_values(self, obj: Message) -> dict[str, str]:
        """The values field selectors see: metadata.name, metadata.namespace and selectable fields."""
        values = {"metadata.name": obj.metadata.name, "metadata.namespace": obj.metadata.namespace}
        for path in self.resource.selectable_fields[2:]:
            values[path] = _field_text(obj, path)
        return values


def _field_text(obj: Message, path: str) -> str:
    """A selectable field's value as text (booleans as "true"/"false", absent as "")."""
    value: object = obj
    for name in path.split("."):
        if not isinstance(value, Message) or name not in value.DESCRIPTOR.fields_by_name:
            return ""
        value = getattr(value, name)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if isinstance(value, Message) else str(value)


def resource_fields(resource: Resource) -> set[str]:
    return set(descriptor(resource.message).fields_by_name)


class PodHooks(KindHooks):
    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.status.phase = "Pending"
        obj.status.qosClass = _qos_class(obj)

    def grace_period_seconds(self, obj: Message, requested: int | None) -> int:
        # upstream: a pod not yet on a node, or already finished, is removed immediately.
        if not obj.spec.nodeName or obj.status.phase in POD_TERMINAL_PHASES:
            return 0
        if requested is not None:
            return max(requested, 0)
        if obj.spec.HasField("terminationGracePeriodSeconds"):
            return obj.spec.terminationGracePeriodSeconds
        return 30


def _qos_class(pod: Message) -> str:
    containers = list(pod.spec.containers) + list(pod.spec.initContainers)
    requests = [c.resources.requests for c in containers]
    limits = [c.resources.limits for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        "cpu" in lim and "memory" in lim and all(req.get(r, lim[r]).string == lim[r].string for r in ("cpu", "memory"))
        for req, lim in zip(requests, limits, strict=True)
    )
    return "Guaranteed" if guaranteed else "Burstable"


class NamespaceHooks(KindHooks):
    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.status.phase = "Active"
        if "kubernetes" not in obj.spec.finalizers:
            obj.spec.finalizers.append("kubernetes")

    def prepare_for_update(self, new: Message, old: Message) -> None:
        """spec.finalizers change only through the finalize subresource (the namespace controller)."""
        super().prepare_for_update(new, old)
        del new.spec.finalizers[:]
        new.spec.finalizers.extend(old.spec.finalizers)

    def blocks_deletion(self, obj: Message) -> bool:
        """The namespace controller empties the namespace, then removes spec.finalizers."""
        return bool(obj.spec.finalizers)

    def mark_deleting(self, obj: Message) -> None:
        obj.status.phase = "Terminating"


class EventHooks(KindHooks):
    def field_values(self, obj: Message) -> dict[str, str]:
        """upstream's event field "source" is the reporting component."""
        values = super().field_values(obj)
        values["source"] = obj.source.component
        return values


class NodeHooks(KindHooks):
    def prepare_for_create(self, obj: Message) -> None:
        """Nodes may set every field, status included, on create."""


HOOKS: dict[str, type[KindHooks]] = {
    "Pod": PodHooks,
    "Namespace": NamespaceHooks,
    "Node": NodeHooks,
    "Event": EventHooks,
}


def hooks_for(resource: Resource) -> KindHooks:
    return HOOKS.get(resource.kind, KindHooks)(resource)


def now_seconds() -> int:
    return int(time.time())
