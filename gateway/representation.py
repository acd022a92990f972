"""Writing objects, lists and watch events in the negotiated representation.

OBJECT: the resource's kind itself; TABLE: meta.k8s.io/v1 Table rows from the printer columns;
PARTIAL / PARTIAL_LIST: PartialObjectMetadata(List), what controllers use to cache metadata only.
Encodings of the underlying objects are the cached ones (ObjectView), whatever the format.
"""

from __future__ import annotations

import base64
from typing import Any

from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

from gateway import errors
from gateway.context import RequestContext
from gateway.negotiation.encoders import ProtobufEncoder
from gateway.negotiation.negotiate import PARTIAL, PARTIAL_LIST, TABLE, Target
from gateway.objects import ObjectView
from gateway.printing import table
from gateway.responses import STATUS_GVK
from gateway.watchcache.entries import CacheEvent
from protokube.schema import jsonencode
from protokube.schema.descriptors import message_class
from protokube.schema.registry import GroupVersionKind

PARTIAL_GVK = GroupVersionKind("meta.k8s.io", "v1", "PartialObjectMetadata")
PARTIAL_LIST_GVK = GroupVersionKind("meta.k8s.io", "v1", "PartialObjectMetadataList")


def _partial(view: ObjectView) -> meta.PartialObjectMetadata:
    return meta.PartialObjectMetadata(metadata=view.message.metadata)


def _include(ctx: RequestContext) -> str:
    return table.include_object(ctx.request.args.get("includeObject"))


def object_body(ctx: RequestContext, target: Target, view: ObjectView) -> bytes:
    encoder = target.encoder
    if target.representation == TABLE:
        list_meta = meta.ListMeta(resourceVersion=str(view.resource_version) if view.resource_version else "")
        return encoder.value(table.table(ctx.resource, [view], list_meta, _include(ctx)))
    if target.representation == PARTIAL:
        return encoder.message(_partial(view), PARTIAL_GVK)
    return encoder.object(view)


def list_body(ctx: RequestContext, target: Target, items: list[ObjectView], list_meta: meta.ListMeta) -> bytes:
    encoder = target.encoder
    if target.representation == TABLE:
        return encoder.value(table.table(ctx.resource, items, list_meta, _include(ctx)))
    if target.representation == PARTIAL_LIST:
        if isinstance(encoder, ProtobufEncoder):
            partial_list = meta.PartialObjectMetadataList(metadata=list_meta)
            partial_list.items.extend(_partial(view) for view in items)
            return encoder.message(partial_list, PARTIAL_LIST_GVK)
        body: dict[str, Any] = {  # in JSON, YAML and CBOR each item carries its kind, as upstream writes them
            "kind": PARTIAL_LIST_GVK.kind,
            "apiVersion": PARTIAL_LIST_GVK.api_version,
            "metadata": jsonencode.to_dict(list_meta),
            "items": [table.partial_metadata(view) for view in items],
        }
        return encoder.value(body)
    gvk = GroupVersionKind(ctx.resource.group, ctx.resource.version, ctx.resource.list_kind)
    return encoder.list(gvk, list_meta, items)


class WatchFrames:
    """Encodes the events, bookmarks and errors of one watch in its representation and format.

    Frames of plain objects are cached on the event and shared by all watchers in the same format;
    a Table stream writes its column definitions in its first event only, as upstream does.
    """

    def __init__(self, ctx: RequestContext, target: Target) -> None:
        self.ctx = ctx
        self.target = target
        self.encoder = target.encoder
        self.include = _include(ctx) if target.representation == TABLE else ""
        self.key = f"{self.encoder.key};{target.representation};{self.include}"
        self.columns_sent = False

    def _object_bytes(self, view: ObjectView) -> bytes:
        encoder, representation = self.encoder, self.target.representation
        if representation == TABLE:
            rows = table.table(
                self.ctx.resource,
                [view],
                meta.ListMeta(resourceVersion=str(view.resource_version)),
                self.include,
                with_columns=not self.columns_sent,
            )
            self.columns_sent = True
            return encoder.watch_value(rows)
        if representation == PARTIAL:
            return encoder.watch_message(_partial(view), PARTIAL_GVK)
        return encoder.watch_object(view)

    def object(self, event_type: str, view: ObjectView) -> bytes:
        return self.encoder.watch_event(event_type, self._object_bytes(view))

    @staticmethod
    def _event_view(event: CacheEvent, event_type: str) -> ObjectView:
        if event_type == "DELETED" and event.type != "DELETED":
            assert event.prev is not None  # it stopped matching: the previous object, now
            return event.prev.view.at_revision(event.revision)
        return event.entry.view

    def event(self, event: CacheEvent, event_type: str) -> bytes:
        if self.target.representation == TABLE and not self.columns_sent:
            return self.object(event_type, self._event_view(event, event_type))  # first Table: not shared
        cache_key = (self.key, event_type)
        frame = event.frames.get(cache_key)
        if frame is None:
            frame = event.frames[cache_key] = self.object(event_type, self._event_view(event, event_type))
        return frame

    def bookmark(self, revision: int, annotations: dict[str, str] | None = None) -> bytes:
        """An empty object of the kind carrying only its resourceVersion (and annotations)."""
        resource = self.ctx.resource
        empty = message_class(resource.message)()
        empty.metadata.resourceVersion = str(revision)
        for key, value in (annotations or {}).items():
            empty.metadata.annotations[key] = value
        if self.target.representation == TABLE:
            body = self.encoder.watch_value(
                table.table(
                    resource, [], meta.ListMeta(resourceVersion=str(revision)), self.include, with_columns=False
                )
            )
        elif self.target.representation == PARTIAL:
            body = self.encoder.watch_message(meta.PartialObjectMetadata(metadata=empty.metadata), PARTIAL_GVK)
        else:
            body = self.encoder.watch_message(empty, resource.gvk)
        return self.encoder.watch_event("BOOKMARK", body)

    def error(self, error: errors.StatusError) -> bytes:
        return self.encoder.watch_event("ERROR", self.encoder.watch_message(error.status, STATUS_GVK))

    def list_blueprint(self) -> str:
        """watch-list mode: an empty list in the negotiated format, base64-encoded."""
        return base64.b64encode(list_body(self.ctx, self.target, [], meta.ListMeta())).decode()
