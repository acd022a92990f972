"""What differs between kinds when the generic store creates, updates and deletes (upstream's REST
strategies): resetting status, generation, validation, graceful deletion, selectable fields.

``ProtoStrategy`` serves kinds compiled from proto/ and is subclassed per kind where upstream's
strategy does more (registry/kinds.py); ``UnstructuredStrategy`` serves kinds known only at run
time. The store calls nothing else on an object than its metadata and these methods. They change
objects in place.
"""

from __future__ import annotations

from typing import Any, Protocol

from google.protobuf.message import Message

import protokube.gateway.registry.defaults as defaults
import protokube.gateway.registry.validation.rules as validation
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.unstructured import Unstructured
from protokube.gateway.user import UserInfo
from protokube.schema.descriptors import descriptor
from protokube.schema.registry import Resource

# metadata fields a status write may not change (upstream's ResetObjectMetaForStatus).
STATUS_PROTECTED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")


class Strategy(Protocol):
    resource: Resource
    codec: Codec
    # metadata.generation is set on create and bumped when anything but metadata and status changes.
    uses_generation: bool
    # status is written only through the status subresource.
    status_is_separate: bool
    # a delete first writes deletionTimestamp even with no grace left (upstream: the strategy has
    # CheckGracefulDelete; in 1.32 only pods'), so watchers see MODIFIED before DELETED.
    graceful_deletion: bool

    def prepare_for_create(self, obj: Obj) -> None:
        """Reset what clients may not set on create (status, when it has its own subresource)."""

    def record_requester(self, obj: Obj, user: UserInfo) -> None:
        """On create, record who asks, where the kind keeps it (a CSR's spec.username, ...)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """Keep what this endpoint may not change (the stored status, for the main resource)."""

    def prepare_for_status_update(self, new: Obj, old: Obj) -> None:
        """A status write: everything but status (and some metadata) stays as stored."""

    def default(self, obj: Obj) -> None:
        """Apply the kind's defaults (upstream applies them when it decodes a request body)."""

    def validate(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        """The kind's own rules (``old``: the stored object on update, else None)."""

    async def validate_rules(self, obj: Obj, old: Obj | None, found: list[FieldError]) -> list[FieldError]:
        """Rules whose evaluation may take long (a CRD's CEL rules): awaited, run where they cannot
        hold the event loop, after ``validate`` found ``found``."""

    def grace_period_seconds(self, obj: Obj, requested: int | None) -> int:
        """Seconds a delete waits before the object is removed (0: remove now)."""

    def blocks_deletion(self, obj: Obj) -> bool:
        """Whether something beyond metadata.finalizers must happen before the object goes."""

    def mark_deleting(self, obj: Obj) -> None:
        """Called when a delete sets deletionTimestamp instead of removing the object."""

    def field_values(self, obj: Obj) -> dict[str, str]:
        """The values field selectors see: metadata.name, metadata.namespace and selectable fields."""


class _Common:
    """What both strategies share: deletion without grace, selectable fields by path."""

    graceful_deletion = False

    def __init__(self, resource: Resource, codec: Codec) -> None:
        self.resource = resource
        self.codec = codec

    def grace_period_seconds(self, obj: Obj, requested: int | None) -> int:
        return 0

    def blocks_deletion(self, obj: Obj) -> bool:
        return False

    def mark_deleting(self, obj: Obj) -> None:
        return None

    def record_requester(self, obj: Obj, user: UserInfo) -> None:
        return None

    async def validate_rules(self, obj: Obj, old: Obj | None, found: list[FieldError]) -> list[FieldError]:
        return []

    def field_values(self, obj: Obj) -> dict[str, str]:
        values = {"metadata.name": obj.metadata.name, "metadata.namespace": obj.metadata.namespace}
        for path in self.resource.selectable_fields[2:]:
            values[path] = self.codec.field_text(obj, path)
        return values

    @staticmethod
    def _protect_metadata_for_status(new: Obj, old: Obj) -> None:
        for name in STATUS_PROTECTED_METADATA:
            new.metadata.ClearField(name)
            getattr(new.metadata, name).MergeFrom(getattr(old.metadata, name))


class ProtoStrategy(_Common):
    """Behaviour shared by every compiled kind; kinds.py overrides it per kind."""

    def __init__(self, resource: Resource, codec: Codec) -> None:
        super().__init__(resource, codec)
        fields = set(descriptor(resource.message).fields_by_name)
        self.has_status = "status" in fields
        self.uses_generation = "spec" in fields
        # Status is written only through the status subresource (upstream's status strategies).
        self.status_is_separate = resource.has_status and self.has_status

    def default(self, obj: Message) -> None:
        defaults.apply_defaults(obj)

    def validate(self, obj: Message, old: Message | None) -> list[FieldError]:
        return validation.validate(obj, old)

    def prepare_for_create(self, obj: Message) -> None:
        if self.status_is_separate:
            obj.ClearField("status")
            obj.status.SetInParent()

    def prepare_for_update(self, new: Message, old: Message) -> None:
        if self.status_is_separate:
            new.status.CopyFrom(old.status)

    def prepare_for_status_update(self, new: Message, old: Message) -> None:
        status = type(new.status)()
        status.CopyFrom(new.status)
        metadata = type(new.metadata)()
        metadata.CopyFrom(new.metadata)
        new.CopyFrom(old)
        new.metadata.CopyFrom(metadata)
        new.status.CopyFrom(status)
        self._protect_metadata_for_status(new, old)


class UnstructuredStrategy(_Common):
    """Kinds known only at run time: generation on every change but metadata and status."""

    uses_generation = True

    def __init__(self, resource: Resource, codec: Codec) -> None:
        super().__init__(resource, codec)
        self.status_is_separate = resource.has_status

    def default(self, obj: Unstructured) -> None:
        return None

    def validate(self, obj: Unstructured, old: Unstructured | None) -> list[FieldError]:
        return []

    def prepare_for_create(self, obj: Unstructured) -> None:
        if self.status_is_separate:
            obj.content.pop("status", None)

    def prepare_for_update(self, new: Unstructured, old: Unstructured) -> None:
        if self.status_is_separate:
            _replace(new.content, "status", old.content)

    def prepare_for_status_update(self, new: Unstructured, old: Unstructured) -> None:
        status = new.content.get("status")
        new.content = {k: v for k, v in self.codec.copy(old).content.items() if k != "status"}
        if status is not None:
            new.content["status"] = status
        self._protect_metadata_for_status(new, old)


def _replace(target: dict[str, Any], key: str, source: dict[str, Any]) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)
