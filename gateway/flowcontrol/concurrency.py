"""Seats per priority level and borrowing between levels (k8s.io/apiserver pkg/util/flowcontrol
apf_controller.go, conc_alloc.go, fairqueuing/integrator.go).

The server's limit (--max-requests-inflight + --max-mutating-requests-inflight) is split by
nominalConcurrencyShares: nominal = ceil(limit × shares / Σ shares). A level may lend
round(nominal × lendablePercent%) seats and borrow round(nominal × borrowingLimitPercent%)
(unbounded, i.e. the server's limit, when unset). Every 10 s each level's current limit is
recomputed from its seat demand (time-weighted mean + standard deviation, smoothed, at least its
high watermark up to its nominal limit): the server's seats are divided in proportion to those
targets, each within [nominal − lendable, nominal + borrowable] (a fair-allocation problem solved
by raising one proportion until the seats are used up).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Final

BORROWING_ADJUSTMENT_PERIOD: Final = 10.0
SEAT_DEMAND_SMOOTHING: Final = 0.977
MIN_TARGET: Final = 0.001
EPSILON: Final = 1e-7


def go_round(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


@dataclass(slots=True)
class AllocItem:
    lower: float
    upper: float
    target: float


def allocate(required: int, items: list[AllocItem]) -> list[float]:
    """Allocations summing to ``required`` with each within its bounds and, where bounds allow,
    proportional to its target (one common proportion for all unconstrained items)."""
    if not items:
        return []
    targets = [max(item.target, MIN_TARGET) for item in items]
    low_sum = sum(item.lower for item in items)
    high_sum = sum(item.upper for item in items)
    if required <= 0:
        return [0.0] * len(items)
    if low_sum - required > -EPSILON:
        return [item.lower for item in items]
    if required - high_sum > -EPSILON:
        return [item.upper for item in items]

    pairs = list(zip(items, targets, strict=True))

    def total(proportion: float) -> float:
        return sum(max(i.lower, min(i.upper, proportion * t)) for i, t in pairs)

    # The total is continuous and non-decreasing in the proportion: find where it meets
    # ``required`` among the breakpoints (each item's bounds over its target), then interpolate.
    breakpoints = sorted({i.lower / t for i, t in pairs} | {i.upper / t for i, t in pairs})
    below = breakpoints[0]
    for point in breakpoints:
        if total(point) >= required:
            low_total, high_total = total(below), total(point)
            share = 0.0 if high_total == low_total else (required - low_total) / (high_total - low_total)
            proportion = below + (point - below) * share
            break
        below = point
    else:
        proportion = breakpoints[-1]
    return [max(i.lower, min(i.upper, proportion * t)) for i, t in pairs]


class SeatDemand:
    """A time integral of a level's seat demand (seats in use + seats waiting): the mean,
    standard deviation and high watermark since the last reset."""

    __slots__ = (
        "average",
        "deviation",
        "high",
        "high_watermark",
        "integral",
        "integral_sq",
        "last",
        "since",
        "smoothed",
        "value",
    )

    def __init__(self) -> None:
        self.value = 0
        self.last = self.since = time.monotonic_ns()  # the last change and the period's start
        self.integral = self.integral_sq = 0  # seat-nanoseconds, seat²-nanoseconds
        self.high = 0
        # The smoothed envelope (mean + deviation) and the last period's figures.
        self.smoothed = 0.0
        self.average = self.deviation = 0.0
        self.high_watermark = 0

    def set(self, value: int, now: int) -> None:
        """The demand is ``value`` from ``now`` on (monotonic nanoseconds; the integrals taken up to then)."""
        dt = now - self.last
        self.last = now
        current = self.value
        if current:
            self.integral += current * dt
            self.integral_sq += current * current * dt
        self.value = value
        if value > self.high:
            self.high = value

    def period_ended(self) -> None:
        """Close the period: update the figures borrowing uses, start a new one."""
        self.set(self.value, time.monotonic_ns())
        self.high_watermark = go_round(self.high)
        elapsed = self.last - self.since
        if elapsed > 0:
            self.average = self.integral / elapsed
            variance = self.integral_sq / elapsed - self.average**2
            self.deviation = math.sqrt(max(variance, 0.0))
            envelope = self.average + self.deviation
            self.smoothed = max(
                envelope, SEAT_DEMAND_SMOOTHING * self.smoothed + (1 - SEAT_DEMAND_SMOOTHING) * envelope
            )
        self.since = self.last
        self.integral = self.integral_sq = 0
        self.high = self.value


@dataclass(slots=True)
class Limits:
    """A level's seats: nominal, the bounds borrowing keeps it in, and the current limit."""

    nominal: int = 0
    lower: int = 0  # nominal − lendable
    upper: int = 0  # nominal + borrowable
    current: int = 0


def nominal_limits(
    server_limit: int, shares: int, share_sum: float, lendable: int | None, borrowing: int | None
) -> Limits:
    nominal = math.ceil(server_limit * shares / share_sum) if share_sum > 0 else 0
    lend = go_round(nominal * lendable / 100) if lendable is not None else 0
    borrow = go_round(nominal * borrowing / 100) if borrowing is not None else server_limit
    return Limits(nominal, nominal - lend, nominal + borrow, nominal - lend // 2)


@dataclass(slots=True)
class Borrower:
    """One level as borrowing sees it."""

    limits: Limits
    demand: SeatDemand
    exempt: bool


def rebalance(nominal_sum: int, levels: list[Borrower]) -> None:
    """Every level's current limit from the last period's demand (upstream's updateBorrowing)."""
    remaining = nominal_sum
    floors: dict[int, int] = {}
    items: list[AllocItem] = []
    limited: list[Borrower] = []
    lower_sum = floor_sum = 0
    for level in levels:
        level.demand.period_ended()
        limits, demand = level.limits, level.demand
        if level.exempt:
            limits.current = max(limits.lower, demand.high_watermark)
            remaining -= limits.current
            continue
        floor = max(limits.lower, min(limits.nominal, demand.high_watermark))
        floors[id(level)] = floor
        items.append(AllocItem(floor, limits.upper, max(floor, demand.smoothed)))
        limited.append(level)
        lower_sum += limits.lower
        floor_sum += floor
    if not limited:
        return
    if remaining <= lower_sum:
        for level in limited:
            level.limits.current = level.limits.lower
    elif remaining <= floor_sum:
        share = (remaining - lower_sum) / (floor_sum - lower_sum)
        for level in limited:
            lower = level.limits.lower
            level.limits.current = lower + go_round((floors[id(level)] - lower) * share)
    else:
        for level, allocation in zip(limited, allocate(nominal_sum, items), strict=True):
            level.limits.current = go_round(allocation)
