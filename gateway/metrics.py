"""Prometheus metrics, named, labelled and bucketed as kube-apiserver 1.32 does
(k8s.io/apiserver pkg/endpoints/metrics and pkg/storage/etcd3/metrics).

Requests are observed once, by the instrumentation filter, with upstream's cleaned verb and scope;
storage calls by the object store of each resource; watches by the Cacher; the object counts of
``apiserver_storage_objects`` are read from the watch caches when /metrics is scraped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from typing import Final, NamedTuple

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from protokube.gateway.loophistogram import LoopHistogram, LoopHistogramChild
from protokube.gateway.request import ApiRequest
from protokube.schema.registry import Resource

COMPONENT: Final = "apiserver"
# upstream's latency buckets for apiserver_request_duration_seconds and etcd_request_duration_seconds.
LATENCY_BUCKETS: Final = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    15,
    20,
    30,
    45,
    60,
)
RESPONSE_SIZE_BUCKETS: Final = tuple(1000 * 10.0**n for n in range(7))  # ExponentialBuckets(1000, 10, 7)
WATCH_EVENT_SIZE_BUCKETS: Final = tuple(1024 * 2.0**n for n in range(8))  # 1K ... 128K
VALID_VERBS: Final = frozenset(
    {"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH", "POST", "PROXY"}
    | {"PUT", "UPDATE", "WATCH", "WATCHLIST"}
)
CONNECT_SUBRESOURCES: Final = frozenset({"log", "exec", "portforward", "attach", "proxy"})
HEALTH_PATHS: Final = frozenset({"healthz", "livez", "readyz"})
APPLY_PATCH: Final = "application/apply-patch+yaml"
# A finished request's counter, duration histogram and (GET and LIST) response-size histogram.
FinishedChildren = tuple[Counter, LoopHistogramChild, LoopHistogramChild | None]
READ_ONLY_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


class RequestLabels(NamedTuple):
    """What a request addressed: the labels of the metrics by resource, in their order (a tuple:
    the metrics' children are looked up by it)."""

    verb: str
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    scope: str = ""
    component: str = COMPONENT


RESOURCE_LABELS: Final = RequestLabels._fields
REQUEST_LABELS: Final = (RESOURCE_LABELS[0], "dry_run", *RESOURCE_LABELS[1:])  # verb, dry_run, group, ...


def request_labels(request: ApiRequest) -> RequestLabels:
    """upstream's MonitorRequest labels: the cleaned verb (GET vs LIST, WATCH, APPLY, CONNECT), the
    scope (resource, namespace, cluster, or empty for non-resource paths)."""
    info = request.info
    verb = request.method.upper()
    if info is not None and info.is_resource_request:
        scope = "resource" if info.name or info.verb == "create" else "namespace" if info.namespace else "cluster"
        if verb in ("GET", "HEAD"):
            verb = "WATCH" if info.verb == "watch" else "GET" if scope == "resource" else "LIST"
        if verb == "PATCH" and request.header("Content-Type") == APPLY_PATCH:
            verb = "APPLY"
        if info.subresource in CONNECT_SUBRESOURCES:
            verb = "CONNECT"
        verb = verb if verb in VALID_VERBS else "other"
        return RequestLabels(verb, info.group, info.version, info.resource, info.subresource, scope)
    if verb == "HEAD":
        verb = "GET"
    verb = verb if verb in VALID_VERBS else "other"
    if info is not None and info.parts and info.parts[0] in HEALTH_PATHS:
        return RequestLabels(verb, subresource=request.path, component="")  # health endpoints: by path
    return RequestLabels(verb)


def dry_run_label(request: ApiRequest) -> str:
    values = request.args.getlist("dryRun")
    if not values:
        return ""
    return "All" if all(v == "All" for v in values) else "invalid"


class InFlight:
    """A count of requests in flight, kept by the event loop (no lock, as a gauge's child takes per
    change) and read by its gauge when scraped."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def inc(self) -> None:
        self.count += 1

    def dec(self) -> None:
        self.count -= 1

    def get(self) -> float:
        return self.count


class WatchMetrics:
    """One resource's watch metrics: open watches, the events sent with their sizes, and the
    watchers closed because their clients stopped reading."""

    def __init__(self, metrics: Metrics, resource: Resource) -> None:
        labels = (resource.group, resource.version, resource.kind)
        self.watchers = metrics.registered_watchers.labels(*labels)
        self.events = metrics.watch_events.labels(*labels)
        self.sizes = metrics.watch_event_sizes.labels(*labels)
        self.unresponsive = metrics.terminated_watchers.labels(resource.group, resource.plural)

    def opened(self) -> None:
        self.watchers.inc()

    def closed(self) -> None:
        self.watchers.dec()

    def sent(self, events: int, size: int) -> None:
        self.events.inc(events)
        self.sizes.observe(size / events if events else 0)

    def terminated(self) -> None:
        self.unresponsive.inc()


class StorageMetrics:
    """One resource's storage calls (etcd_request_duration_seconds, etcd_requests_total, errors)."""

    def __init__(self, metrics: Metrics, resource: Resource) -> None:
        self.metrics = metrics
        self.type = resource.group_resource
        # Each operation's children, looked up at its first call (a label lookup costs more than the
        # observation); the error counter's on its first failure, as before.
        self._children: dict[str, tuple[LoopHistogramChild, Counter]] = {}

    def observe(self, operation: str, seconds: float, failed: bool) -> None:
        children = self._children.get(operation)
        if children is None:
            labels = (operation, self.type)
            metrics = self.metrics
            children = self._children[operation] = (
                metrics.etcd_durations.labels(*labels),
                metrics.etcd_requests.labels(*labels),
            )
        duration, count = children
        duration.observe(seconds)
        count.inc()
        if failed:
            self.metrics.etcd_errors.labels(operation, self.type).inc()


class _ObjectCounts(Collector):
    def __init__(self, counts: Callable[[], Mapping[str, int]]) -> None:
        self.counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            labels=["resource"],
        )
        for resource, count in sorted(self.counts().items()):
            family.add_metric([resource], count)
        yield family


def _task_count() -> int:
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # scraped outside the event loop
        return 0


class Metrics:
    def __init__(
        self,
        object_counts: Callable[[], Mapping[str, int]] = dict,
        served: Callable[[RequestLabels], bool] = lambda _: True,
    ) -> None:
        """``served``: whether the server serves what a request's labels name — a group, version,
        resource and subresource, or a health endpoint's path."""
        self.served = served
        registry = self.registry = CollectorRegistry()
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            [*REQUEST_LABELS, "code"],
            registry=registry,
        )
        self.durations = LoopHistogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, "
            "subresource, scope and component.",
            REQUEST_LABELS,
            LATENCY_BUCKETS,
            registry,
        )
        self.response_sizes = LoopHistogram(
            "apiserver_response_sizes",
            "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and "
            "component.",
            RESOURCE_LABELS,
            RESPONSE_SIZE_BUCKETS,
            registry,
        )
        self.longrunning = Gauge(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, "
            "scope and component. Not all requests are tracked this way.",
            RESOURCE_LABELS,
            registry=registry,
        )
        self.inflight = Gauge(
            "apiserver_current_inflight_requests",
            "Maximal number of currently used inflight request limit of this apiserver per request kind in last "
            "second.",
            ["request_kind"],
            registry=registry,
        )
        self._in_flight = {True: InFlight(), False: InFlight()}
        for read_only, kind in ((True, "readOnly"), (False, "mutating")):
            self.inflight.labels(kind).set_function(self._in_flight[read_only].get)
        self._finished: dict[tuple[RequestLabels, str, int], FinishedChildren] = {}
        self.registered_watchers = Gauge(
            "apiserver_registered_watchers",
            "Number of currently registered watchers for a given resources",
            ["group", "version", "kind"],
            registry=registry,
        )
        self.watch_events = Counter(
            "apiserver_watch_events_total",
            "Number of events sent in watch clients",
            ["group", "version", "kind"],
            registry=registry,
        )
        self.watch_event_sizes = LoopHistogram(
            "apiserver_watch_events_sizes",
            "Watch event size distribution in bytes",
            ["group", "version", "kind"],
            WATCH_EVENT_SIZE_BUCKETS,
            registry,
        )
        self.terminated_watchers = Counter(
            "apiserver_terminated_watchers_total",
            "Counter of watchers closed due to unresponsiveness broken by resource type.",
            ["group", "resource"],
            registry=registry,
        )
        self.etcd_durations = LoopHistogram(
            "etcd_request_duration_seconds",
            "Etcd request latency in seconds for each operation and object type.",
            ["operation", "type"],
            LATENCY_BUCKETS,
            registry,
        )
        self.etcd_requests = Counter(
            "etcd_requests",
            "Etcd request counts for each operation and object type.",
            ["operation", "type"],
            registry=registry,
        )
        self.etcd_errors = Counter(
            "etcd_request_errors",
            "Etcd failed request counts for each operation and object type.",
            ["operation", "type"],
            registry=registry,
        )
        registry.register(_ObjectCounts(object_counts))
        # What every Go component exposes: process_* (open fds, memory, CPU) and, for goroutines, tasks.
        ProcessCollector(registry=registry)
        Gauge(
            "protokube_asyncio_tasks",
            "Number of asyncio tasks that currently exist (Go's go_goroutines).",
            registry=registry,
        ).set_function(_task_count)

    def watches(self, resource: Resource) -> WatchMetrics:
        return WatchMetrics(self, resource)

    def storage(self, resource: Resource) -> StorageMetrics:
        return StorageMetrics(self, resource)

    def in_flight(self, request: ApiRequest) -> InFlight:
        """apiserver_current_inflight_requests of the request's kind: up while it is handled (a watch
        until it streams)."""
        return self._in_flight[request.method in READ_ONLY_METHODS]

    def watch_started(self, labels: RequestLabels) -> Callable[[], None]:
        """Counts a watch as long-running; returns what to call when it ends."""
        gauge = self.longrunning.labels(*labels)
        gauge.inc()
        return gauge.dec

    def request_finished(
        self, request: ApiRequest, labels: RequestLabels, code: int, seconds: float, size: int | None
    ) -> None:
        key = (labels, dry_run_label(request), code)
        children = self._finished.get(key)
        if children is None:
            if not self.served(labels):
                # Named by the client's path alone (a 404, or a 401 or 403 before routing): counted
                # without those names, or any client could grow the metrics without bound.
                key = (RequestLabels(labels.verb, scope=labels.scope, component=labels.component), *key[1:])
                children = self._finished.get(key)
            if children is None:
                children = self._finished[key] = self._children(*key)
        count, duration, sizes = children
        count.inc()
        duration.observe(seconds)
        if sizes is not None and size is not None:
            sizes.observe(size)

    def _children(self, labels: RequestLabels, dry_run: str, code: int) -> FinishedChildren:
        """The metrics a request with these labels, dry-run value and code is counted in (looked up
        once: a label lookup costs more than the observation)."""
        by_request = (labels.verb, dry_run, *labels[1:])
        sizes = self.response_sizes.labels(*labels) if labels.verb in ("GET", "LIST") else None
        return self.requests.labels(*by_request, str(code)), self.durations.labels(*by_request), sizes

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
