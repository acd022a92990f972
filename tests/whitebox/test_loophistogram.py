"""The event loop's lock-free histogram is exposed exactly as prometheus_client's Histogram (less
its ``_created`` series): same buckets, same cumulative counts, same sums, same label handling."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from protokube.gateway.loophistogram import LoopHistogram

BUCKETS = (0, 0.005, 0.02, 1, 10)
LABELS = ["priority_level", "flow_schema"]
# Values below, on and between the bounds, beyond the last one, and repeated.
VALUES = (-1.0, 0.0, 0.001, 0.005, 0.005, 0.0051, 0.02, 0.5, 1.0, 9.99, 10.0, 10.01, 1e9)


def exposition(make) -> list[str]:
    registry = CollectorRegistry()
    histogram = make(registry)
    for i, value in enumerate(VALUES):
        histogram.labels("level", f"flow{i % 3}").observe(value)
    histogram.labels("idle", "none")  # a child never observed is exposed with zeros
    text = generate_latest(registry).decode()
    return [line for line in text.splitlines() if "_created" not in line]


def test_the_exposition_is_prometheus_clients() -> None:
    ours = exposition(lambda r: LoopHistogram("t_seconds", "A test.", LABELS, BUCKETS, r))
    theirs = exposition(lambda r: Histogram("t_seconds", "A test.", LABELS, buckets=BUCKETS, registry=r))
    assert ours == theirs
    assert 't_seconds_bucket{flow_schema="flow0",le="+Inf",priority_level="level"} 5.0' in ours


def test_the_wrong_number_of_label_values_is_refused() -> None:
    histogram = LoopHistogram("t", "A test.", ["a", "b"], BUCKETS, CollectorRegistry())
    with pytest.raises(ValueError):
        histogram.labels("only-one")
