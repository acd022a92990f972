"""Prometheus metrics, named and labelled as kube-apiserver names them where a counterpart exists."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from gateway.request import ApiRequest
from protokube.schema.registry import Resource

COMPONENT = "apiserver"
# The verb label of resource requests (upstream's installer actions: GET, LIST, POST, PUT, ...).
VERB_LABELS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
APPLY_PATCH = "application/apply-patch+yaml"


class _Watchers:
    """One resource's apiserver_registered_watchers gauge (the Cacher counts its watches here)."""

    def __init__(self, gauge: Gauge) -> None:
        self.gauge = gauge

    def opened(self) -> None:
        self.gauge.inc()

    def closed(self) -> None:
        self.gauge.dec()


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
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, "
            "scope, component, and HTTP response code.",
            ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"],
            registry=self.registry,
        )

    def watchers(self, resource: Resource) -> _Watchers:
        return _Watchers(self.registered_watchers.labels(resource.group, resource.version, resource.kind))

    def request_done(self, request: ApiRequest, code: int) -> None:
        info = request.info
        dry_run = "All" if "dryRun" in request.args else ""
        if info is None or not info.is_resource_request:
            self.requests.labels(request.method, dry_run, "", "", "", "", "", COMPONENT, str(code)).inc()
            return
        verb = VERB_LABELS.get(info.verb, info.verb.upper())
        if verb == "PATCH" and request.headers.get("Content-Type", "").startswith(APPLY_PATCH):
            verb = "APPLY"
        scope = "resource" if info.name or info.verb == "create" else "namespace" if info.namespace else "cluster"
        labels = (verb, dry_run, info.group, info.version, info.resource, info.subresource, scope, COMPONENT, str(code))
        self.requests.labels(*labels).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
