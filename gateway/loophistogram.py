"""Histograms observed on every request, for the event loop's thread alone.

prometheus_client's Histogram takes a lock twice per observation (its sum and its bucket), which
the one thread that observes these never needs: about 0.6 µs an observation against 0.15 here,
and a request makes several. The exposition is prometheus_client's own (HistogramMetricFamily),
without the ``_created`` series, as kube-apiserver's (Go) histograms have none.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Final

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

INF: Final = float("inf")


class LoopHistogramChild:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)  # per bucket, not cumulative: (previous bound, bound]
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def observe_zero(self) -> None:
        """observe(0) of a histogram whose bounds are not negative (durations): the first bucket."""
        self.counts[0] += 1


class LoopHistogram(Collector):
    """A labelled histogram: ``labels(*values).observe(v)``, as prometheus_client's."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        bounds = tuple(float(b) for b in buckets)
        self.bounds = bounds if bounds[-1] == INF else (*bounds, INF)
        self.children: dict[tuple[str, ...], LoopHistogramChild] = {}
        registry.register(self)

    def labels(self, *values: str) -> LoopHistogramChild:
        key = tuple(str(v) for v in values)
        if len(key) != len(self.labelnames):
            raise ValueError(f"{self.name}: {len(self.labelnames)} label values expected, got {len(key)}")
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = LoopHistogramChild(self.bounds)
        return child

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in list(self.children.items()):
            cumulative, buckets = 0, []
            for bound, count in zip(self.bounds, child.counts, strict=True):
                cumulative += count
                buckets.append((floatToGoString(bound), cumulative))
            family.add_metric(key, buckets, child.sum)
        yield family
