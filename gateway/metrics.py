"""Prometheus metrics, named as kube-apiserver names them where a counterpart exists."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from protokube.schema.registry import Resource


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.registered_watchers = Gauge(
            "apiserver_registered_watchers",
            "Number of currently registered watchers for a given resources",
            ["group", "version", "kind"],
            registry=self.registry,
        )
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, group, version, resource and code.",
            ["verb", "group", "version", "resource", "code"],
            registry=self.registry,
        )

    def watchers_opened(self, resource: Resource) -> None:
        self.registered_watchers.labels(resource.group, resource.version, resource.kind).inc()

    def watchers_closed(self, resource: Resource) -> None:
        self.registered_watchers.labels(resource.group, resource.version, resource.kind).dec()

    def watcher_count(self) -> int:
        return int(sum(sample.value for metric in self.registered_watchers.collect() for sample in metric.samples))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
