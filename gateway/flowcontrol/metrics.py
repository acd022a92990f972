"""API Priority and Fairness metrics on the server's registry, named and labelled as
kube-apiserver 1.32 (k8s.io/apiserver pkg/util/flowcontrol/metrics) and, for the sampled
histograms the APF documentation lists (``*_count_samples``, ``*_count_watermarks``), as it describes
them (kubernetes.io/docs/concepts/cluster-administration/flow-control/#metrics).

Ratioed gauges (requests over their limit) are sampled ten times a second into the ``_samples``
histograms and their 1.32 successors; the highest and lowest value of each second go to the
``_watermarks`` histograms. Every histogram is observed on the event loop's thread alone (per request,
or by the sampling task), so all are LoopHistograms, each labelled child looked up once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from prometheus_client import CollectorRegistry, Gauge
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from protokube.gateway.flowcontrol.concurrency import Limits, SeatDemand
from protokube.gateway.loophistogram import LoopHistogram, LoopHistogramChild

PREFIX: Final = "apiserver_flowcontrol_"
PL: Final = "priority_level"
FS: Final = "flow_schema"
QUEUE_LENGTH_BUCKETS: Final = (0, 10, 25, 50, 100, 250, 500, 1000)
DURATION_BUCKETS: Final = (0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30)
RATIO_BUCKETS: Final = (0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1)
UTILIZATION_BUCKETS: Final = (0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1)
SEAT_UTILIZATION_BUCKETS: Final = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1)
DEMAND_BUCKETS: Final = (0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6)
WAITING: Final = "waiting"
EXECUTING: Final = "executing"
READ_ONLY: Final = "readOnly"
MUTATING: Final = "mutating"
READ_ONLY_VERBS: Final = frozenset({"get", "list", "watch", "proxy"})


def request_kind(verb: str) -> str:
    """The request_kind label of a verb's requests."""
    return READ_ONLY if verb in READ_ONLY_VERBS else MUTATING


class RatioedGauge:
    """A count over its denominator, with the extremes reached since the last watermark period."""

    __slots__ = ("denominator", "high", "low", "value")

    def __init__(self, denominator: float = 1.0) -> None:
        self.value = 0.0
        self.denominator = denominator
        self.high = self.low = 0.0  # counts, divided when read

    @property
    def ratio(self) -> float:
        return self.value / self.denominator if self.denominator > 0 else 0.0

    def add(self, delta: float) -> None:
        value = self.value = self.value + delta
        if value > self.high:
            self.high = value
        elif value < self.low:
            self.low = value

    def period(self) -> tuple[float, float]:
        scale = self.denominator if self.denominator > 0 else 1.0
        marks = self.high / scale, self.low / scale
        self.high = self.low = self.value
        return marks


Sampled = list[tuple[RatioedGauge, tuple[LoopHistogramChild, ...]]]
Marked = list[tuple[RatioedGauge, LoopHistogramChild, LoopHistogramChild]]


def sample(sampled: Sampled) -> None:
    """Each gauge's ratio now, into its histograms."""
    for gauge, histograms in sampled:
        ratio = gauge.ratio
        for histogram in histograms:
            histogram.observe(ratio)


def mark(marked: Marked) -> None:
    """Each gauge's extremes of the period just ended, into its high and low watermark histograms."""
    for gauge, high, low in marked:
        high_mark, low_mark = gauge.period()
        high.observe(high_mark)
        low.observe(low_mark)


class FlowControlMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        def gauge(name: str, doc: str, labels: list[str]) -> Gauge:
            return Gauge(PREFIX + name, doc, labels, registry=registry)

        def histogram(name: str, doc: str, labels: list[str], buckets: tuple[float, ...]) -> LoopHistogram:
            return LoopHistogram(PREFIX + name, doc, labels, buckets, registry)

        registry.register(FlowCounts(self))  # the per-flow counts, read when scraped
        self.queue_length = histogram(
            "request_queue_length_after_enqueue",
            "Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
            [PL, FS],
            QUEUE_LENGTH_BUCKETS,
        )
        self.wait = histogram(
            "request_wait_duration_seconds",
            "Length of time a request spent waiting in its queue",
            [PL, FS, "execute"],
            DURATION_BUCKETS,
        )
        self.execution = histogram(
            "request_execution_seconds",
            "Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the "
            "API Priority and Fairness subsystem",
            [PL, FS, "type"],
            DURATION_BUCKETS,
        )
        self.work_seats = histogram(
            "work_estimated_seats",
            "Number of estimated seats (maximum of initial and final seats) associated with requests in API "
            "Priority and Fairness",
            [PL, FS],
            (1, 2, 4, 10),
        )
        self.watch_count = histogram(
            "watch_count_samples",
            "count of watchers for mutating requests in API Priority and Fairness",
            [PL, FS],
            (0, 1, 10, 100, 1000, 10000),
        )
        self.concurrency_limit = gauge(
            "request_concurrency_limit", "Nominal number of execution seats configured for each priority level", [PL]
        )
        self.nominal = gauge(
            "nominal_limit_seats", "Nominal number of execution seats configured for each priority level", [PL]
        )
        self.current = gauge(
            "current_limit_seats", "current derived number of execution seats available to each priority level", [PL]
        )
        self.lower = gauge(
            "lower_limit_seats",
            "Configured lower bound on number of execution seats available to each priority level",
            [PL],
        )
        self.upper = gauge(
            "upper_limit_seats",
            "Configured upper bound on number of execution seats available to each priority level",
            [PL],
        )
        self.demand = histogram(
            "demand_seats",
            "Observations, at the end of every nanosecond, of (the number of seats each priority level could "
            "use) / (nominal number of seats for that level)",
            [PL],
            DEMAND_BUCKETS,
        )
        self.demand_high = gauge(
            "demand_seats_high_watermark", "High watermark, over last adjustment period, of demand_seats", [PL]
        )
        self.demand_average = gauge(
            "demand_seats_average", "Time-weighted average, over last adjustment period, of demand_seats", [PL]
        )
        self.demand_stdev = gauge(
            "demand_seats_stdev", "Time-weighted standard deviation, over last adjustment period, of demand_seats", [PL]
        )
        self.demand_smoothed = gauge("demand_seats_smoothed", "Smoothed seat demands", [PL])
        self.target = gauge("target_seats", "Seat allocation targets", [PL])
        self.current_r = gauge("current_r", "R(time of last change)", [PL])
        self.level_samples = histogram(
            "priority_level_request_count_samples",
            "Periodic observations of the number of requests waiting or in any stage of execution (but only "
            "initial stage for WATCHes)",
            ["phase", PL],
            RATIO_BUCKETS,
        )
        self.level_watermarks = histogram(
            "priority_level_request_count_watermarks",
            "Watermarks of the number of requests waiting or in any stage of execution (but only initial stage "
            "for WATCHes)",
            ["phase", "mark", PL],
            RATIO_BUCKETS,
        )
        self.level_utilization = histogram(
            "priority_level_request_utilization",
            "Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant "
            "limit) waiting or in any stage of execution (but only initial stage for WATCHes)",
            ["phase", PL],
            UTILIZATION_BUCKETS,
        )
        self.seat_utilization = histogram(
            "priority_level_seat_utilization",
            "Observations, at the end of every nanosecond, of utilization of seats for any stage of execution "
            "(but only initial stage for WATCHes)",
            [PL],
            SEAT_UTILIZATION_BUCKETS,
        )
        self.rw_samples = histogram(
            "read_vs_write_request_count_samples",
            "Periodic observations of the number of requests waiting or in regular stage of execution",
            ["phase", "request_kind"],
            RATIO_BUCKETS,
        )
        self.rw_watermarks = histogram(
            "read_vs_write_request_count_watermarks",
            "Watermarks of the number of requests waiting or in regular stage of execution",
            ["phase", "request_kind", "mark"],
            RATIO_BUCKETS,
        )
        self.rw_current = histogram(
            "read_vs_write_current_requests",
            "Observations, at the end of every nanosecond, of the number of requests (as a fraction of the "
            "relevant limit) waiting or in regular stage of execution",
            ["phase", "request_kind"],
            RATIO_BUCKETS,
        )
        self.server_inqueue = Gauge(
            "apiserver_current_inqueue_requests",
            "Maximal number of queued requests in this apiserver per request kind in last second.",
            ["request_kind"],
            registry=registry,
        )
        self.levels: dict[str, LevelObserver] = {}
        self.read_write: dict[tuple[str, str], RatioedGauge] = {
            (phase, kind): RatioedGauge() for phase in (WAITING, EXECUTING) for kind in (READ_ONLY, MUTATING)
        }
        self.queued_high = {READ_ONLY: 0.0, MUTATING: 0.0}
        self.rw_sampled: Sampled = [
            (gauge, (self.rw_samples.labels(phase, kind), self.rw_current.labels(phase, kind)))
            for (phase, kind), gauge in self.read_write.items()
        ]
        self.rw_marked: Marked = [
            (gauge, self.rw_watermarks.labels(phase, kind, "high"), self.rw_watermarks.labels(phase, kind, "low"))
            for (phase, kind), gauge in self.read_write.items()
        ]

    def level(self, name: str, demand: SeatDemand) -> LevelObserver:
        observer = self.levels.get(name)
        if observer is None:
            observer = self.levels[name] = LevelObserver(self, name, demand)
        return observer

    def set_read_write_limits(self, read_only: int, mutating: int) -> None:
        for (_, kind), gauge in self.read_write.items():
            gauge.denominator = float(read_only if kind == READ_ONLY else mutating)

    def note(self, phase: str, kind: str, delta: int) -> None:
        gauge = self.read_write[(phase, kind)]
        gauge.add(delta)
        if phase == WAITING:
            self.queued_high[kind] = max(self.queued_high[kind], gauge.value)

    def sample(self) -> None:
        """The periodic observation of every ratioed gauge."""
        sample(self.rw_sampled)
        for observer in self.levels.values():
            observer.sample()

    def watermark_period(self) -> None:
        """Once a second: the extremes of the second just ended."""
        mark(self.rw_marked)
        for kind in (READ_ONLY, MUTATING):
            self.server_inqueue.labels(kind).set(self.queued_high[kind])
            self.queued_high[kind] = self.read_write[(WAITING, kind)].value
        for observer in self.levels.values():
            observer.watermark_period()


class LevelObserver:
    """One priority level's metrics; also feeds its seat-demand integrator (queueset.Observer)."""

    __slots__ = (
        "demand_histogram",
        "executing_gauge",
        "flows",
        "m",
        "marked",
        "name",
        "sampled",
        "seat_demand",
        "seats",
        "waiting_gauge",
    )

    def __init__(self, metrics: FlowControlMetrics, name: str, demand: SeatDemand) -> None:
        self.m = metrics
        self.name = name
        self.seat_demand = demand
        self.waiting_gauge = RatioedGauge()
        self.executing_gauge = RatioedGauge()
        self.seats = RatioedGauge()
        self.flows: dict[str, FlowMetrics] = {}
        self.demand_histogram = metrics.demand.labels(name)
        phases = ((WAITING, self.waiting_gauge), (EXECUTING, self.executing_gauge))
        self.sampled: Sampled = [
            (gauge, (metrics.level_samples.labels(phase, name), metrics.level_utilization.labels(phase, name)))
            for phase, gauge in phases
        ]
        self.sampled.append((self.seats, (metrics.seat_utilization.labels(name),)))
        self.marked: Marked = [
            (
                gauge,
                metrics.level_watermarks.labels(phase, "high", name),
                metrics.level_watermarks.labels(phase, "low", name),
            )
            for phase, gauge in phases
        ]

    def flow(self, flow_schema: str) -> FlowMetrics:
        """The metrics of one FlowSchema in this level (label lookups are costly: made once)."""
        found = self.flows.get(flow_schema)
        if found is None:
            found = self.flows[flow_schema] = FlowMetrics(self.m, self.name, flow_schema)
        return found

    def waiting(self, flow_schema: str, requests: int, seats: int) -> None:
        flow = self.flow(flow_schema)
        flow.inqueue += requests
        flow.inqueue_seats += seats
        self.waiting_gauge.add(requests)

    def started(self, flow_schema: str, seats: int, queue_length: int, demand: int, now: int) -> None:
        flow = self.flows.get(flow_schema) or self.flow(flow_schema)
        if queue_length:
            flow.queue_length.observe(queue_length)
        flow.executing += 1
        flow.dispatched += 1
        flow.executing_seats += seats
        self.executing_gauge.add(1)
        self.seats.add(seats)
        self.seat_demand.set(demand, now)

    def ended(self, flow_schema: str, requests: int, seats: int, demand: int, now: int) -> None:
        flow = self.flows.get(flow_schema) or self.flow(flow_schema)
        if requests:
            flow.executing += requests
            self.executing_gauge.add(requests)
        if seats:
            flow.executing_seats += seats
            self.seats.add(seats)
        self.seat_demand.set(demand, now)

    def rejected(self, flow_schema: str, reason: str) -> None:
        rejected = self.flow(flow_schema).rejected
        rejected[reason] = rejected.get(reason, 0) + 1

    def enqueued(self, flow_schema: str, queue_length: int) -> None:
        flow = self.flow(flow_schema)
        flow.queue_length.observe(queue_length)

    def demand(self, seats: int, now: int) -> None:
        self.seat_demand.set(seats, now)

    def watch_virtual_time(self, read: Callable[[], float]) -> None:
        """apiserver_flowcontrol_current_r: the level's R, read when scraped."""
        self.m.current_r.labels(self.name).set_function(read)

    def configured(self, limits: Limits, queue_capacity: int) -> None:
        """New limits: the gauges and the denominators of the ratios."""
        name = self.name
        self.m.concurrency_limit.labels(name).set(limits.nominal)
        self.m.nominal.labels(name).set(limits.nominal)
        self.m.lower.labels(name).set(limits.lower)
        self.m.upper.labels(name).set(limits.upper)
        self.m.current.labels(name).set(limits.current)
        self.waiting_gauge.denominator = float(max(queue_capacity, 1))
        self.executing_gauge.denominator = self.seats.denominator = float(max(limits.current, 1))

    def rebalanced(self, target: float) -> None:
        d = self.seat_demand
        self.m.demand_high.labels(self.name).set(d.high_watermark)
        self.m.demand_average.labels(self.name).set(d.average)
        self.m.demand_stdev.labels(self.name).set(d.deviation)
        self.m.demand_smoothed.labels(self.name).set(d.smoothed)
        self.m.target.labels(self.name).set(target)

    def sample(self) -> None:
        sample(self.sampled)
        self.demand_histogram.observe(self.seat_demand.value / self.executing_gauge.denominator)

    def watermark_period(self) -> None:
        mark(self.marked)


class FlowMetrics:
    """One (priority level, FlowSchema): its counts (plain numbers, read when scraped) and its
    labelled histograms."""

    __slots__ = (
        "dispatched",
        "executing",
        "executing_seats",
        "execution",
        "inqueue",
        "inqueue_seats",
        "queue_length",
        "rejected",
        "waited",
        "watch_count",
        "work_seats",
    )

    def __init__(self, m: FlowControlMetrics, level: str, flow_schema: str) -> None:
        labels = (level, flow_schema)
        self.inqueue = self.inqueue_seats = self.executing = self.executing_seats = self.dispatched = 0
        self.rejected: dict[str, int] = {}
        self.queue_length = m.queue_length.labels(*labels)
        self.work_seats = m.work_seats.labels(*labels)
        self.watch_count = m.watch_count.labels(*labels)
        self.waited = {True: m.wait.labels(*labels, "true"), False: m.wait.labels(*labels, "false")}
        self.execution = {kind: m.execution.labels(*labels, kind) for kind in ("regular", "watch")}


# (metric, help, FlowMetrics attribute) of the gauges and counters FlowCounts reports.
GAUGES: Final = (
    (
        "current_inqueue_requests",
        "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
        "inqueue",
    ),
    (
        "current_inqueue_seats",
        "Number of seats currently pending in queues of the API Priority and Fairness subsystem",
        "inqueue_seats",
    ),
    (
        "current_executing_requests",
        "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API "
        "Priority and Fairness subsystem",
        "executing",
    ),
    (
        "current_executing_seats",
        "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any "
        "stage otherwise) requests in the API Priority and Fairness subsystem",
        "executing_seats",
    ),
    (
        "request_concurrency_in_use",
        "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any "
        "stage otherwise) requests in the API Priority and Fairness subsystem",
        "executing_seats",
    ),
)


class FlowCounts(Collector):
    """The per-flow gauges and counters, from the counts the queue sets keep (no lock per request)."""

    def __init__(self, metrics: FlowControlMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        flows = [(level, name, flow) for level, o in self.metrics.levels.items() for name, flow in o.flows.items()]
        for name, doc, attribute in GAUGES:
            family = GaugeMetricFamily(PREFIX + name, doc, labels=[PL, FS])
            for level, schema, flow in flows:
                family.add_metric([level, schema], getattr(flow, attribute))
            yield family
        dispatched = CounterMetricFamily(
            PREFIX + "dispatched_requests",
            "Number of requests executed by API Priority and Fairness subsystem",
            labels=[PL, FS],
        )
        rejected = CounterMetricFamily(
            PREFIX + "rejected_requests",
            "Number of requests rejected by API Priority and Fairness subsystem",
            labels=[PL, FS, "reason"],
        )
        for level, schema, flow in flows:
            dispatched.add_metric([level, schema], flow.dispatched)
            for reason, count in sorted(flow.rejected.items()):
                rejected.add_metric([level, schema, reason], count)
        yield dispatched
        yield rejected
