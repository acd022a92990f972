"""The storage service's own Prometheus metrics, named as etcd names its own, served on their own
port (etcd's --listen-metrics-urls): gRPC calls by method and code, backend commit latency, database
size, keys, revisions and watchers.

The call counters are counted by the event loop's thread alone, every call twice: plain integers, read
when scraped (``CallCounters``), where prometheus_client's Counter takes a lock at each increment. They
have no ``_created`` series, as etcd's (Go) counters have none."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Final
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import CollectorRegistry, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# etcd's buckets for etcd_disk_backend_commit_duration_seconds: ExponentialBuckets(0.001, 2, 14).
COMMIT_BUCKETS: Final = tuple(0.001 * 2**n for n in range(14))
# grpc-go names codes "OK", "Canceled", and the CamelCase of the rest ("InvalidArgument").
_GO_CODE_NAMES: Final = {grpc.StatusCode.OK: "OK", grpc.StatusCode.CANCELLED: "Canceled"}


def go_code(code: grpc.StatusCode) -> str:
    return _GO_CODE_NAMES.get(code) or "".join(part.capitalize() for part in code.name.split("_"))


class _State(Collector):
    """Gauges read from the store when scraped: (name, help, read) triples."""

    def __init__(self, gauges: list[tuple[str, str, Callable[[], float]]]) -> None:
        self.gauges = gauges

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, documentation, read in self.gauges:
            yield GaugeMetricFamily(name, documentation, value=read())


class StorageMetrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        self._calls = CallCounters(registry)
        self.commit_duration = Histogram(
            "etcd_disk_backend_commit_duration_seconds",
            "The latency distributions of commit called by backend.",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self._http: WSGIServer | None = None
        self._serving: threading.Thread | None = None

    def watch_state(self, gauges: list[tuple[str, str, Callable[[], float]]]) -> None:
        """Report these values of the running store at each scrape."""
        self.registry.register(_State(gauges))

    def calls(self, rpc_type: str, service: str, method: str) -> MethodCalls:
        """The call counters of one method."""
        return self._calls.method(rpc_type, service, method)

    def serve(self, listen: str) -> str:
        """Serve /metrics on HOST:PORT (port 0: any) in a thread; returns the address bound."""
        host, _, port = listen.rpartition(":")
        self._http, self._serving = start_http_server(int(port), addr=host.strip("[]"), registry=self.registry)
        return f"{host}:{self._http.server_port}"

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()


class MethodCalls:
    """One method's calls: started, and handled by code (OK apart, the code of nearly every call)."""

    __slots__ = ("failed", "labels", "ok", "started")

    def __init__(self, labels: tuple[str, str, str]) -> None:
        self.labels = labels  # grpc_type, grpc_service, grpc_method
        self.started = 0
        self.ok = 0
        self.failed: dict[grpc.StatusCode, int] = {}

    def start(self) -> None:
        self.started += 1

    def handled_ok(self) -> None:
        self.ok += 1

    def handled(self, code: grpc.StatusCode) -> None:
        if code is grpc.StatusCode.OK:
            self.ok += 1
        else:
            self.failed[code] = self.failed.get(code, 0) + 1


class CallCounters(Collector):
    """grpc_server_started_total and grpc_server_handled_total, as go-grpc-prometheus exposes them: a
    method's started series from the start, a handled series once a call has ended with its code."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.methods: list[MethodCalls] = []
        registry.register(self)

    def method(self, rpc_type: str, service: str, method: str) -> MethodCalls:
        calls = MethodCalls((rpc_type, service, method))
        self.methods.append(calls)
        return calls

    def describe(self) -> Iterator[Metric]:
        return iter(self._families())

    def collect(self) -> Iterator[Metric]:
        started, handled = families = self._families()
        for calls in self.methods:
            started.add_metric(calls.labels, calls.started)
            codes = list(calls.failed.items())  # the loop's thread may add a code meanwhile
            if calls.ok:
                codes.insert(0, (grpc.StatusCode.OK, calls.ok))
            for code, count in codes:
                handled.add_metric((*calls.labels, go_code(code)), count)
        return iter(families)

    @staticmethod
    def _families() -> tuple[CounterMetricFamily, CounterMetricFamily]:
        labels = ["grpc_type", "grpc_service", "grpc_method"]
        return (
            CounterMetricFamily("grpc_server_started", "Total number of RPCs started on the server.", labels=labels),
            CounterMetricFamily(
                "grpc_server_handled",
                "Total number of RPCs completed on the server, regardless of success or failure.",
                labels=[*labels, "grpc_code"],
            ),
        )
