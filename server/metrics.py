"""The storage service's own Prometheus metrics, named as etcd names its own, served on their own
port (etcd's --listen-metrics-urls): gRPC calls by method and code, backend commit latency, database
size, keys, revisions and watchers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

# etcd's buckets for etcd_disk_backend_commit_duration_seconds: ExponentialBuckets(0.001, 2, 14).
COMMIT_BUCKETS = tuple(0.001 * 2**n for n in range(14))
# grpc-go names codes "OK", "Canceled", and the CamelCase of the rest ("InvalidArgument").
_GO_CODE_NAMES = {grpc.StatusCode.OK: "OK", grpc.StatusCode.CANCELLED: "Canceled"}


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
        self.started = Counter(
            "grpc_server_started",
            "Total number of RPCs started on the server.",
            ["grpc_type", "grpc_service", "grpc_method"],
            registry=registry,
        )
        self.handled = Counter(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
            registry=registry,
        )
        self.commit_duration = Histogram(
            "etcd_disk_backend_commit_duration_seconds",
            "The latency distributions of commit called by backend.",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self._http: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def watch_state(self, gauges: list[tuple[str, str, Callable[[], float]]]) -> None:
        """Report these values of the running store at each scrape."""
        self.registry.register(_State(gauges))

    def calls(self, rpc_type: str, service: str, method: str) -> MethodCalls:
        """The call counters of one method."""
        return MethodCalls(self, (rpc_type, service, method))

    def serve(self, listen: str) -> str:
        """Serve /metrics on HOST:PORT (port 0: any) in a thread; returns the address bound."""
        host, _, port = listen.rpartition(":")
        self._http, self._thread = start_http_server(int(port), addr=host.strip("[]"), registry=self.registry)
        return f"{host}:{self._http.server_port}"

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()


class MethodCalls:
    """One method's started and handled counters, their label values looked up once per method and code
    rather than once per call. Started is there from the start, as go-grpc-prometheus registers it."""

    def __init__(self, metrics: StorageMetrics, labels: tuple[str, str, str]) -> None:
        self._labels = labels
        self._handled_family = metrics.handled
        self._started = metrics.started.labels(*labels)
        self._handled: dict[grpc.StatusCode, Counter] = {}

    def started(self) -> None:
        self._started.inc()

    def handled(self, code: grpc.StatusCode) -> None:
        counter = self._handled.get(code)
        if counter is None:
            counter = self._handled[code] = self._handled_family.labels(*self._labels, go_code(code))
        counter.inc()
