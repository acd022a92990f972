"""Writing objects, lists and watch events in the negotiated representation.

OBJECT: the resource's kind itself; TABLE: meta.k8s.io/v1 Table rows from the printer columns;
PARTIAL / PARTIAL_LIST: PartialObjectMetadata(List), what controllers use to cache metadata only.
Encodings of the underlying objects are the cached ones (ObjectView), whatever the format.
"""

from __future__ import annotations

import base64
from typing import Any

from protokube.gateway import errors
from protokube.gateway.negotiation.encoders import ProtobufEncoder
from protokube.gateway.negotiation.negotiate import PARTIAL, PARTIAL_LIST, TABLE, Target
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.printing import table
from protokube.gateway.request import ApiRequest
from protokube.gateway.responses import STATUS_GVK
from protokube.gateway.scope import RequestScope
from protokube.gateway.watchcache.entries import CacheEvent
from protokube.gateway.watchcache.watcher import Item
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import jsonencode
from protokube.schema.registry import GroupVersionKind

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
LIST_BLUEPRINT = "kubernetes.io/initial-events-list-blueprint"


def _partial(view: ObjectView) -> meta.PartialObjectMetadata:
    return meta.PartialObjectMetadata(metadata=view.obj.metadata)


def _meta_gvk(target: Target, kind: str) -> GroupVersionKind:
    """A Table's or PartialObjectMetadata(List)'s kind in the meta.k8s.io version asked for."""
    return GroupVersionKind("meta.k8s.io", target.meta_version, kind)


def include_object(request: ApiRequest) -> str:
    return table.include_object(request.args.get("includeObject"))


def object_body(request: ApiRequest, scope: RequestScope, target: Target, view: ObjectView) -> bytes:
    encoder = target.encoder
    if target.representation == TABLE:
        list_meta = meta.ListMeta(resourceVersion=str(view.resource_version) if view.resource_version else "")
        return encoder.value(
            table.table(scope.resource, [view], list_meta, include_object(request), meta_version=target.meta_version)
        )
    if target.representation == PARTIAL:
        return encoder.message(_partial(view), _meta_gvk(target, PARTIAL))
    return encoder.object(view)


def list_body(
    request: ApiRequest, scope: RequestScope, target: Target, items: list[ObjectView], list_meta: meta.ListMeta
) -> bytes:
    encoder = target.encoder
    if target.representation == TABLE:
        return encoder.value(
            table.table(scope.resource, items, list_meta, include_object(request), meta_version=target.meta_version)
        )
    if target.representation == PARTIAL_LIST:
        gvk = _meta_gvk(target, PARTIAL_LIST)
        if isinstance(encoder, ProtobufEncoder):
            partial_list = meta.PartialObjectMetadataList(metadata=list_meta)
            partial_list.items.extend(_partial(view) for view in items)
            return encoder.message(partial_list, gvk)
        body: dict[str, Any] = {  # in JSON, YAML and CBOR each item carries its kind, as upstream writes them
            "kind": gvk.kind,
            "apiVersion": gvk.api_version,
            "metadata": jsonencode.to_dict(list_meta),
            "items": [table.partial_metadata(view, target.meta_version) for view in items],
        }
        return encoder.value(body)
    return encoder.list(scope.codec, list_meta, items)


class WatchFrames:
    """Encodes the events, bookmarks and errors of one watch in its representation and format.

    Frames of plain objects are cached on the event and shared by all watchers in the same format;
    a Table stream writes its column definitions in its first event only, as upstream does.
    """

    def __init__(self, request: ApiRequest, scope: RequestScope, target: Target) -> None:
        self.request = request
        self.scope = scope
        self.target = target
        self.encoder = target.encoder
        self.include = include_object(request) if target.representation == TABLE else ""
        self.key = f"{self.encoder.key};{target.representation};{target.meta_version};{self.include}"
        self.columns_sent = False

    def _object_bytes(self, view: ObjectView) -> bytes:
        encoder, representation = self.encoder, self.target.representation
        if representation == TABLE:
            rows = table.table(
                self.scope.resource,
                [view],
                meta.ListMeta(resourceVersion=str(view.resource_version)),
                self.include,
                with_columns=not self.columns_sent,
                meta_version=self.target.meta_version,
            )
            self.columns_sent = True
            return encoder.watch_value(rows)
        if representation == PARTIAL:
            return encoder.watch_message(_partial(view), _meta_gvk(self.target, PARTIAL))
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

    def items(self, batch: list[Item]) -> list[bytes]:
        """One frame for each event or bookmark of the batch."""
        return [self.event(*item) if isinstance(item, tuple) else self.bookmark(item.revision) for item in batch]

    def bookmark(self, revision: int, annotations: dict[str, str] | None = None) -> bytes:
        """An empty object of the kind carrying only its resourceVersion (and annotations)."""
        codec = self.scope.codec
        empty = codec.normalize(codec.new())
        for key, value in (annotations or {}).items():
            empty.metadata.annotations[key] = value
        view = ObjectView.of(codec, empty, revision)
        if self.target.representation == TABLE:
            body = self.encoder.watch_value(
                table.table(
                    self.scope.resource,
                    [],
                    meta.ListMeta(resourceVersion=str(revision)),
                    self.include,
                    with_columns=False,
                    meta_version=self.target.meta_version,
                )
            )
        elif self.target.representation == PARTIAL:
            body = self.encoder.watch_message(_partial(view), _meta_gvk(self.target, PARTIAL))
        else:
            body = self.encoder.watch_object(view)
        return self.encoder.watch_event("BOOKMARK", body)

    def initial_events_end(self, revision: int) -> bytes:
        """The bookmark after a watch's initial state (watch-list mode carries an empty list in the
        negotiated format as its blueprint)."""
        blueprint = list_body(self.request, self.scope, self.target, [], meta.ListMeta())
        annotations = {INITIAL_EVENTS_END: "true", LIST_BLUEPRINT: base64.b64encode(blueprint).decode()}
        return self.bookmark(revision, annotations)

    def error(self, error: errors.StatusError) -> bytes:
        return self.encoder.watch_event("ERROR", self.encoder.watch_message(error.status, STATUS_GVK))
