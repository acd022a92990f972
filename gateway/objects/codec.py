"""The ``Codec`` of a resource: stored bytes, request bodies and wire encodings of its objects.

``Obj`` is whatever the codec decodes to — a protobuf message, or an ``Unstructured`` — and always
has ``metadata``, a meta.v1 ObjectMeta message. Code above the codec reads and writes metadata
directly and leaves everything else to the codec and the resource's strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import GroupVersionKind

Obj = Any  # a protobuf message or an Unstructured; both have .metadata (meta.v1 ObjectMeta)


@dataclass
class DecodedObject:
    """A request body decoded into an object, with what fieldValidation reports about it."""

    obj: Obj
    api_version: str = ""
    kind: str = ""
    # Unknown and duplicate fields in upstream's wording ('unknown field "spec.foo"').
    violations: list[str] = field(default_factory=list)


class Codec(Protocol):
    gvk: GroupVersionKind
    list_gvk: GroupVersionKind
    # Whether objects can be written and read as Kubernetes protobuf (custom resources cannot).
    protobuf: bool

    # ---- objects -------------------------------------------------------------------------------
    def new(self) -> Obj:
        """An empty object of the kind."""

    def copy(self, obj: Obj) -> Obj: ...

    def normalize(self, obj: Obj) -> Obj:
        """Bring an object into its canonical shape (Go's, for protobuf) before it is stored."""

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Whether anything but metadata and status differs (what bumps metadata.generation)."""

    def field_text(self, obj: Obj, path: str) -> str:
        """A dotted field path's value as field selectors compare it ("" when absent)."""

    # ---- storage -----------------------------------------------------------------------------
    def decode(self, value: bytes) -> Obj:
        """Stored bytes → object (its metadata.resourceVersion is left empty)."""

    def encode(self, obj: Obj) -> bytes:
        """Object → stored bytes, metadata.resourceVersion cleared (as upstream stores objects)."""

    # ---- request bodies ------------------------------------------------------------------------
    def from_dict(self, data: dict[str, Any]) -> DecodedObject:
        """A parsed JSON/YAML/CBOR body → object; DecodeError when it cannot be one."""

    def from_protobuf(self, raw: bytes) -> Obj: ...

    def from_own_protobuf(self, raw: bytes) -> Obj:
        """Bytes that ``protobuf_raw`` wrote → object: their strings are text already (no check)."""

    def to_dict(self, obj: Obj) -> dict[str, Any]:
        """The object as JSON values, with kind and apiVersion (what patches work on)."""

    # ---- responses -----------------------------------------------------------------------------
    def protobuf_raw(self, obj: Obj) -> bytes:
        """The object's protobuf bytes, as Go writes them (only when ``protobuf``)."""

    def json_item(self, obj: Obj) -> bytes:
        """The object's JSON as it appears among a list's items."""

    def json_object(self, item: bytes) -> bytes:
        """The object's JSON as a response of its own, from its ``json_item`` bytes."""

    def json_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        """A list from its items' ``json_item`` bytes."""

    def cbor_item(self, obj: Obj) -> bytes: ...

    def cbor_object(self, obj: Obj) -> bytes: ...

    def cbor_list(self, list_meta: meta.ListMeta, items: Sequence[bytes]) -> bytes:
        """A list from its items' ``cbor_item`` bytes."""
