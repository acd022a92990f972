"""events.k8s.io/v1 Event ⇄ core/v1 Event, the stored kind (upstream's pkg/apis/events/v1
conversion): the same fields under other names; the rest as is."""

from __future__ import annotations

from protokube.gateway.conversion.base import JSONObject, conversion, renamed
from protokube.schema.registry import GroupVersionKind

# events.k8s.io/v1 name → core/v1 name.
TO_CORE = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
FROM_CORE = {core: events for events, core in TO_CORE.items()}


@conversion(GroupVersionKind("events.k8s.io", "v1", "Event"), GroupVersionKind("", "v1", "Event"))
class EventsV1:
    @staticmethod
    def to_storage(data: JSONObject) -> JSONObject:
        return renamed(data, TO_CORE)

    @staticmethod
    def from_storage(data: JSONObject) -> JSONObject:
        return renamed(data, FROM_CORE)
