"""API Priority and Fairness parts that no HTTP request can isolate: the dealer's bijection, fair
queuing's choices inside one level, multi-seat requests, lingering final seats, the allocation of
seats between levels and the Retry-After arithmetic."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from protokube.gateway.flowcontrol.concurrency import (
    AllocItem,
    Borrower,
    Limits,
    SeatDemand,
    allocate,
    nominal_limits,
    rebalance,
)
from protokube.gateway.flowcontrol.queueset import QUEUE_FULL, QueueSet, Request
from protokube.gateway.flowcontrol.retryafter import DroppedRequests
from protokube.gateway.flowcontrol.seats import WorkEstimate, level_max_seats
from protokube.gateway.flowcontrol.shufflesharding import check_dealer, deal


def test_every_hash_below_the_number_of_ordered_hands_deals_a_different_hand() -> None:
    hands = [tuple(deal(h, 8, 3)) for h in range(8 * 7 * 6)]
    assert len(set(hands)) == len(hands)
    assert set(hands) == set(itertools.permutations(range(8), 3))
    assert check_dealer(128, 6) is None
    assert check_dealer(1 << 20, 4) == "required entropy bits of deckSize 1048576 and handSize 4 is greater than 60"


class Recorder:
    """A queue set's observer that remembers the refusals, starts and ends."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self.reports: list[tuple[str, ...]] = []

    def waiting(self, flow_schema: str, requests: int, seats: int) -> None:
        pass

    def started(self, flow_schema: str, seats: int, queue_length: int, demand: int, now: int) -> None:
        self.reports.append(("started", flow_schema, f"seats={seats}", f"enqueued={queue_length}", f"demand={demand}"))

    def ended(self, flow_schema: str, requests: int, seats: int, demand: int, now: int) -> None:
        self.reports.append(("ended", flow_schema, f"requests={requests}", f"seats={seats}", f"demand={demand}"))

    def rejected(self, flow_schema: str, reason: str) -> None:
        self.refused.append(reason)

    def enqueued(self, flow_schema: str, queue_length: int) -> None:
        pass

    def demand(self, seats: int, now: int) -> None:
        pass


class Clock:
    """Monotonic nanoseconds that move only when the test says (virtual time follows them)."""

    def __init__(self) -> None:
        self.ns = 0

    def __call__(self) -> int:
        return self.ns


def queue_set(
    limit: int, queues: int = 8, hand: int = 1, length: int = 50, clock: Clock | None = None
) -> tuple[QueueSet, Recorder]:
    recorder = Recorder()
    qs = QueueSet("test", recorder, clock or Clock())
    qs.configure(queues, hand, length)
    qs.set_limit(limit)
    return qs, recorder


def request(flow: str, seats: int = 1) -> Request:
    return Request((flow, flow), WorkEstimate(seats))


def test_a_lone_request_overtakes_a_flooding_flow() -> None:
    async def scenario() -> None:
        clock = Clock()
        qs, _ = queue_set(limit=1, clock=clock)
        running = request("elephant")
        assert qs.start(running, hash_value=0) is None and running.decision is None  # ran at once
        flood = [request("elephant") for _ in range(10)]
        for r in flood:
            assert qs.start(r, hash_value=0) is None
        mouse = request("mouse")
        assert qs.start(mouse, hash_value=5) is None
        assert mouse.queue is not flood[0].queue
        clock.ns += 10_000_000  # the running elephant takes 10 ms
        qs.finish(running)
        # the seat goes to the mouse, whose queue was idle, before any of the flood
        assert mouse.decision is not None and mouse.decision.done()
        assert all(r.decision is None or not r.decision.done() for r in flood)
        assert qs.requests_waiting == 10

    asyncio.run(scenario())


def test_a_request_dispatched_at_once_reports_the_queue_it_joined_and_left() -> None:
    """upstream enqueues it and dispatches it at once: a queue length of 1 is observed; one
    dispatched after waiting had its length observed as it joined."""

    async def scenario() -> None:
        qs, recorder = queue_set(limit=1)
        first, second = request("a"), request("b")
        assert qs.start(first, 0) is None and first.decision is None
        assert qs.start(second, 1) is None and second.decision is not None
        qs.finish(first)
        qs.finish(second)
        assert recorder.reports == [
            ("started", "a", "seats=1", "enqueued=1", "demand=1"),
            ("ended", "a", "requests=-1", "seats=-1", "demand=1"),  # b waits
            ("started", "b", "seats=1", "enqueued=0", "demand=1"),
            ("ended", "b", "requests=-1", "seats=-1", "demand=0"),
        ]

    asyncio.run(scenario())


def test_a_full_queue_refuses_only_while_the_seats_are_taken() -> None:
    async def scenario() -> None:
        qs, recorder = queue_set(limit=1, queues=1, length=2)
        first = request("a")
        assert qs.start(first, 0) is None
        assert qs.start(request("a"), 0) is None and qs.start(request("a"), 0) is None
        assert qs.start(request("a"), 0) == QUEUE_FULL
        assert recorder.refused == [QUEUE_FULL]

    asyncio.run(scenario())


def test_a_wide_request_waits_for_enough_seats() -> None:
    async def scenario() -> None:
        qs, _ = queue_set(limit=4)
        narrow = [request("a") for _ in range(3)]
        for r in narrow:
            qs.start(r, 0)
        wide = request("b", seats=3)
        qs.start(wide, 3)
        assert wide.decision is not None and not wide.decision.done()
        qs.finish(narrow[0])
        assert not wide.decision.done()  # 2 seats free, 3 needed
        qs.finish(narrow[1])
        assert wide.decision.done() and qs.seats_in_use == 4

    asyncio.run(scenario())


def test_final_seats_are_held_for_the_additional_latency() -> None:
    async def scenario() -> None:
        qs, _ = queue_set(limit=10)
        write = Request(("w", "w"), WorkEstimate(1, 5, 0.05))
        qs.start(write, 0)
        assert qs.seats_in_use == 5
        qs.finish(write)
        assert qs.seats_in_use == 5 and qs.requests_executing == 0
        await asyncio.sleep(0.1)
        assert qs.seats_in_use == 0

    asyncio.run(scenario())


def test_a_waiter_that_times_out_leaves_its_queue() -> None:
    async def scenario() -> None:
        qs, recorder = queue_set(limit=1)
        qs.start(request("a"), 0)
        waiting = request("b")
        qs.start(waiting, 1)
        assert await qs.wait(waiting, 0.05) == "time-out"
        assert qs.requests_waiting == 0 and recorder.refused == ["time-out"]

    asyncio.run(scenario())


def test_a_dispatched_waiter_resumes_at_the_next_turn_of_the_loop() -> None:
    """Its seats are held from its dispatch: one callback wakes its waiter (a shield inside a
    wait_for took three turns of the loop, each behind whatever else was ready)."""

    async def scenario() -> int:
        qs, _ = queue_set(limit=1)
        running, waiting = request("a"), request("b")
        qs.start(running, 0)
        qs.start(waiting, 1)
        turns = 0

        async def spin() -> None:
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        async def wait() -> int:
            assert await qs.wait(waiting, 10) is None
            return turns

        waiter = asyncio.create_task(wait())
        spinner = asyncio.create_task(spin())
        await asyncio.sleep(0.01)  # both are at their awaits
        dispatched_at = turns
        qs.finish(running)
        resumed_at = await waiter
        spinner.cancel()
        return resumed_at - dispatched_at

    assert asyncio.run(scenario()) == 1


def test_a_waiter_cancelled_before_a_dispatch_meets_its_request_leaves_the_seat_to_the_next() -> None:
    """Its cancellation cancels its decision at once; a seat freed before the waiter hears of it
    goes to the next request, and the cancelled one leaves its queue once (refused: cancelled)."""

    async def scenario() -> None:
        qs, recorder = queue_set(limit=1, queues=1)
        running, gone, next_one = request("a"), request("b"), request("c")
        qs.start(running, 0)
        qs.start(gone, 0)
        qs.start(next_one, 0)
        waiter = asyncio.create_task(qs.wait(gone, 10))
        await asyncio.sleep(0)  # it waits
        waiter.cancel()
        qs.finish(running)  # before the waiter's task runs again
        assert next_one.decision is not None and next_one.decision.result() is True
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert recorder.refused == ["cancelled"]
        assert qs.requests_waiting == 0 and qs.requests_executing == 1 and qs.flows == {("c", "c"): 1}
        assert [r[:2] for r in recorder.reports] == [("started", "a"), ("ended", "a"), ("started", "c")]

    asyncio.run(scenario())


def test_a_waiter_cancelled_while_its_request_waits_withdraws_it() -> None:
    async def scenario() -> None:
        qs, recorder = queue_set(limit=1)
        running, gone = request("a"), request("b")
        qs.start(running, 0)
        qs.start(gone, 1)
        waiter = asyncio.create_task(qs.wait(gone, 10))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert recorder.refused == ["cancelled"]
        assert qs.requests_waiting == 0 and qs.flows == {("a", "a"): 1}
        qs.finish(running)
        assert qs.idle

    asyncio.run(scenario())


def test_shares_bounds_and_the_largest_request() -> None:
    limits = nominal_limits(600, 20, 245, 50, None)  # global-default
    assert (limits.nominal, limits.lower, limits.upper, limits.current) == (49, 24, 649, 37)
    assert level_max_seats(49, 6) == 8
    assert level_max_seats(3, 4) == 1


@pytest.mark.parametrize(
    ("required", "items"),
    [
        (10, [AllocItem(1, 10, 5), AllocItem(1, 10, 5)]),
        (10, [AllocItem(1, 3, 50), AllocItem(1, 20, 1)]),
        (30, [AllocItem(5, 10, 1), AllocItem(5, 10, 1), AllocItem(0, 100, 1)]),
    ],
)
def test_allocations_sum_to_what_is_required_within_their_bounds(required: int, items: list[AllocItem]) -> None:
    allocations = allocate(required, items)
    assert sum(allocations) == pytest.approx(required)
    assert all(i.lower - 1e-9 <= a <= i.upper + 1e-9 for a, i in zip(allocations, items, strict=True))


def test_a_busy_level_borrows_what_an_idle_one_lends() -> None:
    busy = Borrower(Limits(10, 10, 20, 10), SeatDemand(), exempt=False)
    idle = Borrower(Limits(10, 0, 20, 5), SeatDemand(), exempt=False)
    busy.demand.set(20, time.monotonic_ns())
    rebalance(20, [busy, idle])
    assert busy.limits.current > 10 and idle.limits.current < 10
    assert busy.limits.current + idle.limits.current == 20


def test_retry_after_doubles_under_drops_and_shrinks_when_quiet() -> None:
    now = [1000.0]
    drops = DroppedRequests(clock=lambda: now[0])
    for second in range(6):
        now[0] = 1000.0 + second
        for _ in range(10):
            drops.record("pl")
    assert drops.retry_after("pl") > 1
    grown = drops.retry_after("pl")
    for second in range(6, 60, 2):
        now[0] = 1000.0 + second
        drops.record("pl")
    assert drops.retry_after("pl") < grown
    assert drops.retry_after("other") == 1
