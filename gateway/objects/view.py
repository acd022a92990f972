"""One object at one resourceVersion, with each encoding made at most once.

A view starts from whatever is at hand — the stored bytes (from storage or a watch event), the
protobuf bytes, or a decoded object — and decodes or encodes lazily. Lists and watches concatenate
the cached encodings of their items instead of re-encoding. Views in the watch cache do not keep
their decoded object (``keep_object=False``): the cache holds bytes, not objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from protokube.gateway.objects.codec import Codec, Obj
from protokube.schema.registry import GroupVersionKind

JSON_ITEM: Final = "json-item"  # the JSON object as a list item (for protobuf kinds: without kind/apiVersion)
CBOR_ITEM: Final = "cbor-item"  # the same as CBOR (untagged, map keys in canonical order)
CBOR_OBJECT: Final = "cbor-object"  # as a single object is written (untagged)


class ObjectView:
    __slots__ = ("_encoded", "_obj", "_raw", "_value", "codec", "keep_object", "resource_version")

    def __init__(
        self,
        codec: Codec,
        resource_version: int,
        *,
        value: bytes | None = None,
        raw: bytes | None = None,
        obj: Obj | None = None,
        keep_object: bool = True,
    ) -> None:
        self.codec = codec
        self.resource_version = resource_version
        self._value = value  # stored bytes
        self._raw = raw  # protobuf bytes of the object, resourceVersion set (protobuf kinds only)
        self._obj = obj
        self.keep_object = keep_object
        self._encoded: dict[str, bytes] | None = None  # made with the first encoding (most cached views have none)

    @classmethod
    def of(cls, codec: Codec, obj: Obj, resource_version: int, value: bytes | None = None) -> ObjectView:
        """A view of a decoded object, which it takes over (its resourceVersion is set here);
        ``value``: its stored bytes, when known."""
        obj.metadata.resourceVersion = str(resource_version) if resource_version else ""
        return cls(codec, resource_version, obj=obj, value=value)

    @property
    def gvk(self) -> GroupVersionKind:
        return self.codec.gvk

    @property
    def obj(self) -> Obj:
        """The decoded object with metadata.resourceVersion set (do not modify; ``copy()`` first)."""
        obj = self._obj
        if obj is None:
            if self._raw is not None:
                obj = self.codec.from_own_protobuf(self._raw)  # made by protobuf_raw (decode_once, at_revision)
            else:
                assert self._value is not None
                obj = self.codec.decode(self._value)
                obj.metadata.resourceVersion = str(self.resource_version)
            if self.keep_object:
                self._obj = obj
        return obj

    def decode_once(self, decoded: Obj | None = None) -> Obj:
        """The decoded object; for protobuf kinds its protobuf bytes are made now too, so that a view
        that keeps no object never needs the stored bytes again (one decode for both). ``decoded``:
        the object the bytes are known to decode to (a write's own), taken instead of decoding them."""
        obj = self.obj if decoded is None else decoded
        if self._raw is None and self.codec.protobuf:
            self._raw = self.codec.protobuf_raw(obj)
            self._value = None
        return obj

    @property
    def size(self) -> int:
        """About the object's size in bytes: its protobuf bytes, else its stored bytes (0 for one
        known only decoded)."""
        data = self._raw if self._raw is not None else self._value
        return len(data) if data is not None else 0

    def copy(self) -> Obj:
        return self.codec.copy(self.obj)

    @property
    def raw(self) -> bytes:
        """The object's protobuf bytes, resourceVersion set, written as Go writes them."""
        if self._raw is None:
            self.decode_once()
        assert self._raw is not None
        return self._raw

    def stored_again(self, obj: Obj, value: bytes) -> bool:
        """Whether writing ``obj`` as ``value`` (its stored bytes) would store this object again.

        A view of stored bytes compares them; one that keeps only protobuf bytes (the watch
        cache's) compares ``obj``'s protobuf bytes at this view's resourceVersion with its own —
        the same answer as encoding the decoded object again (both are Go's deterministic bytes of
        the object, the envelope and the resourceVersion aside), without decoding and encoding it."""
        if self._value is not None:
            return value == self._value
        if self._raw is not None:
            return self._protobuf_raw_here(obj) == self._raw
        return value == self.codec.encode(self.obj)

    def _protobuf_raw_here(self, obj: Obj) -> bytes:
        """``obj``'s protobuf bytes with this view's resourceVersion (``obj`` is left as it was)."""
        meta = obj.metadata
        resource_version = meta.resourceVersion
        meta.resourceVersion = str(self.resource_version)
        try:
            return self.codec.protobuf_raw(obj)
        finally:
            meta.resourceVersion = resource_version

    def _form(self, form: str, make: Callable[[Obj], bytes]) -> bytes:
        encoded = self._encoded
        if encoded is None:
            encoded = self._encoded = {}
        cached = encoded.get(form)
        if cached is None:
            cached = encoded[form] = make(self.obj)
        return cached

    def json_item(self) -> bytes:
        return self._form(JSON_ITEM, self.codec.json_item)

    def json_object(self) -> bytes:
        """The JSON object as a response of its own (with kind and apiVersion)."""
        return self.codec.json_object(self.json_item())

    def cbor_item(self) -> bytes:
        return self._form(CBOR_ITEM, self.codec.cbor_item)

    def cbor_object(self) -> bytes:
        return self._form(CBOR_OBJECT, self.codec.cbor_object)

    def at_revision(self, resource_version: int) -> ObjectView:
        """The same object with another resourceVersion (a DELETED event carries the deletion's)."""
        obj = self.copy()
        obj.metadata.resourceVersion = str(resource_version)
        if self.codec.protobuf:
            return ObjectView(self.codec, resource_version, raw=self.codec.protobuf_raw(obj), keep_object=False)
        return ObjectView(self.codec, resource_version, obj=obj, keep_object=True)
