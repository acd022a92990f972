"""The codec of a resource: protobuf for kinds compiled from proto/, JSON for the others."""

from __future__ import annotations

from protokube.gateway.conversion import ConvertedCodec
from protokube.gateway.objects.codec import Codec
from protokube.gateway.objects.protobuf import ProtoCodec
from protokube.gateway.objects.unstructured import JSONCodec
from protokube.schema.registry import GroupVersionKind, Resource


def kind_codec(gvk: GroupVersionKind, message: str) -> Codec:
    """The codec of a compiled kind served only as a subresource (autoscaling/v1 Scale, ...)."""
    return ProtoCodec(gvk, message, GroupVersionKind(gvk.group, gvk.version, gvk.kind + "List"))


def codec_for(resource: Resource) -> Codec:
    if resource.extension is not None:  # a run-time resource (a CRD's version) brings its own
        return resource.extension.codec(resource)
    list_gvk = GroupVersionKind(resource.group, resource.version, resource.list_kind)
    stored = resource.storage_kind
    if stored is not None:
        storage = kind_codec(stored.gvk, stored.message)
        return ConvertedCodec(resource.gvk, resource.message, list_gvk, storage)  # type: ignore[arg-type]
    if resource.message:
        return ProtoCodec(resource.gvk, resource.message, list_gvk)
    return JSONCodec(resource.gvk, list_gvk)
