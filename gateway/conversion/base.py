"""One stored object, served in several versions (upstream's conversion between a served version
and the storage version).

A resource whose option names a ``storage_kind`` gets a ``ConvertedCodec``: it stores and decodes
objects of the storage kind and converts them to and from the served kind on every write and
read. Conversions work on JSON values (the Kubernetes JSON of each version), registered by the
pair of kinds they convert between; objects of one group version may thus be read and written
through another, and a watch cache of each version sees the same stored objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.objects.protobuf import ProtoCodec
from protokube.schema import jsondecode, jsonencode
from protokube.schema.registry import GroupVersionKind

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Conversion:
    to_storage: Callable[[JSONObject], JSONObject]  # served JSON → stored JSON
    from_storage: Callable[[JSONObject], JSONObject]  # stored JSON → served JSON


# By (served kind, stored kind).
CONVERSIONS: dict[tuple[GroupVersionKind, GroupVersionKind], Conversion] = {}


def conversion(served: GroupVersionKind, stored: GroupVersionKind) -> Callable[[type], type]:
    """Register a class with static ``to_storage`` and ``from_storage`` functions."""

    def register(cls: type) -> type:
        CONVERSIONS[(served, stored)] = Conversion(cls.to_storage, cls.from_storage)
        return cls

    return register


class ConvertedCodec(ProtoCodec):
    """A served version's codec over another version's stored objects."""

    def __init__(self, gvk: GroupVersionKind, message: str, list_gvk: GroupVersionKind, storage: ProtoCodec) -> None:
        super().__init__(gvk, message, list_gvk)
        self.storage = storage
        self.conversion = CONVERSIONS[(gvk, storage.gvk)]

    def decode(self, value: bytes) -> Message:
        stored = jsonencode.to_dict(self.storage.decode(value))
        return jsondecode.decode(self.conversion.from_storage(stored), self.message).message

    def to_storage(self, obj: Message) -> Message:
        """The object as the stored kind; a 400 when what it carries for the other version (an
        annotation holding another version's fields) cannot be read."""
        served = jsonencode.to_dict(obj)
        try:
            stored = jsondecode.decode(self.conversion.to_storage(served), self.storage.message).message
        except (ValueError, TypeError, AttributeError, KeyError, jsondecode.DecodeError) as err:
            raise errors.bad_request(
                f"unable to convert {self.gvk.kind} to {self.storage.gvk.api_version}: {err}"
            ) from None
        stored.metadata.resourceVersion = obj.metadata.resourceVersion
        return stored

    def encode(self, obj: Message) -> bytes:
        return self.storage.encode(self.to_storage(obj))


def renamed(data: JSONObject, names: dict[str, str]) -> JSONObject:
    """``data`` with its top-level keys renamed by ``names`` (others kept, order kept)."""
    return {names.get(key, key): value for key, value in data.items()}
