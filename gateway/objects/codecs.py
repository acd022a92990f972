"""The codec of a resource: protobuf for kinds compiled from proto/, JSON for the others."""

from __future__ import annotations

from gateway.objects.codec import Codec
from gateway.objects.protobuf import ProtoCodec
from gateway.objects.unstructured import JSONCodec
from protokube.schema.registry import GroupVersionKind, Resource


def codec_for(resource: Resource) -> Codec:
    list_gvk = GroupVersionKind(resource.group, resource.version, resource.list_kind)
    if resource.message:
        return ProtoCodec(resource.gvk, resource.message, list_gvk)
    return JSONCodec(resource.gvk, list_gvk)
