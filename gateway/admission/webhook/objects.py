"""The request's objects as a webhook sees them: JSON as the API serves it, of the request's
kind (a subresource's own, such as a Scale, has a codec of its own), in the version the webhook
is called with (converted through the stored form when matchPolicy Equivalent chose another
served version), and a changed object put back in place of the request's."""

from __future__ import annotations

import functools

from protokube.gateway.codecs import kind_codec
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.unstructured import Unstructured
from protokube.schema import deep
from protokube.schema.registry import GroupVersionKind, Resource


def codec_of(resource: Resource, kind: GroupVersionKind, resource_codec: Codec) -> Codec:
    """The codec of the objects a request on ``resource`` carries as ``kind``: ``resource_codec``
    for the resource's own kind, else its subresource's of that kind (autoscaling/v1 Scale)."""
    if kind == resource.gvk:
        return resource_codec
    found = next(sub for sub in resource.subresources.values() if sub.gvk == kind)
    return _subresource_codec(found.gvk, found.message)


@functools.cache
def _subresource_codec(gvk: GroupVersionKind, message: str) -> Codec:
    """One codec per subresource kind, so that objects of one kind are never converted."""
    return kind_codec(gvk, message)


def as_json(codec: Codec, obj: Obj | None) -> bytes | None:
    """The object's JSON with kind and apiVersion (None: no object)."""
    return None if obj is None else codec.json_object(codec.json_item(obj))


def as_value(codec: Codec, obj: Obj) -> dict:
    """The object's JSON as values (what a JSONPatch applies to), at any depth (custom objects
    nest up to 10,000 levels)."""
    return deep.loads(as_json(codec, obj))  # type: ignore[arg-type]


def convert(obj: Obj | None, source: Codec, target: Codec) -> Obj | None:
    """``obj`` of ``source``'s version in ``target``'s (the same object when they are one)."""
    if obj is None or source is target:
        return obj
    converted = target.decode(source.encode(obj))
    converted.metadata.resourceVersion = obj.metadata.resourceVersion
    return converted


def replace(target: Obj, source: Obj) -> None:
    """Make ``target`` (the request's object, which the store holds) what ``source`` is."""
    if isinstance(target, Unstructured):
        target.metadata.CopyFrom(source.metadata)
        target.content = source.content
    else:
        target.CopyFrom(source)
