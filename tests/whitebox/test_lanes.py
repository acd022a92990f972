"""The event loop's lanes (gateway/lanes.py): what runs first on the gateway's one CPU
when APF holds a flow back. The loop is the gateway's own (uvloop with its call_soon), run here
without a server: no HTTP request can show in which order callbacks ran."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from protokube.gateway import lanes
from protokube.gateway.app import NAMESPACES
from protokube.gateway.flowcontrol.queueset import EXEMPT_QUEUES, Request
from protokube.gateway.flowcontrol.seats import WorkEstimate
from protokube.gateway.lanes import LANE, MAX_DEFERRAL, Lane, LaneLoop

from .stack import running_server
from .test_flowcontrol_units import queue_set


def run(scenario: Callable[[LaneLoop], Awaitable[Any]]) -> Any:
    loop = LaneLoop()
    try:
        return loop.run_until_complete(scenario(loop))
    finally:
        loop.close()


def in_lane(lane: Lane | None) -> contextvars.Context:
    context = contextvars.copy_context()
    context.run(LANE.set, lane)
    return context


async def steps(log: list[str], name: str, count: int) -> None:
    for i in range(count):
        log.append(f"{name}{i}")
        await asyncio.sleep(0)


def interleaving(*tasks: tuple[str, Lane | None, int]) -> list[str]:
    """The order in which the steps of tasks (name, lane, steps), started in this order, ran."""

    async def scenario(loop: LaneLoop) -> list[str]:
        log: list[str] = []
        started = [loop.create_task(steps(log, name, count), context=in_lane(lane)) for name, lane, count in tasks]
        await asyncio.gather(*started)
        return log

    return run(scenario)


def test_background_steps_wait_until_no_foreground_step_is_ready() -> None:
    order = interleaving(("b", Lane(True, 0), 3), ("f", Lane(False, 1), 3))
    assert order == ["f0", "f1", "f2", "b0", "b1", "b2"]


def test_without_a_lane_or_in_the_foreground_steps_take_turns_as_in_any_loop() -> None:
    order = interleaving(("a", None, 3), ("c", Lane(False, 0), 3))
    assert order == ["a0", "c0", "a1", "c1", "a2", "c2"]


def test_the_oldest_dispatched_request_runs_first_and_arrivals_last() -> None:
    arrival, newer, older = Lane(True, lanes.ARRIVALS), Lane(True, 2), Lane(True, 1)
    order = interleaving(("arrival", arrival, 2), ("newer", newer, 2), ("older", older, 2))
    assert order == ["older0", "older1", "newer0", "newer1", "arrival0", "arrival1"]


def test_background_work_goes_on_under_a_foreground_that_never_rests() -> None:
    async def scenario(loop: LaneLoop) -> tuple[int, float]:
        log: list[str] = []
        deadline = time.monotonic() + 10 * MAX_DEFERRAL

        async def busy() -> None:
            while time.monotonic() < deadline:
                await asyncio.sleep(0)

        spinning = loop.create_task(busy(), context=in_lane(Lane(False, 0)))
        loop.create_task(steps(log, "b", 1000), context=in_lane(Lane(True, 0)))
        await spinning
        return len(log), loop.deferred

    ran, deferred = run(scenario)
    assert 3 <= ran < 1000  # one step per MAX_DEFERRAL at least, far from all of them
    assert deferred >= ran


def test_a_cancelled_background_callback_never_runs_and_an_error_reaches_the_handler() -> None:
    async def scenario(loop: LaneLoop) -> tuple[list[str], list[str]]:
        ran: list[str] = []
        errors: list[str] = []
        loop.set_exception_handler(lambda _, context: errors.append(str(context["exception"])))
        background = in_lane(Lane(True, 0))
        loop.call_soon(ran.append, "cancelled", context=background).cancel()
        loop.call_soon(lambda: 1 / 0, context=background)
        loop.call_soon(ran.append, "after the error", context=background)
        while loop.background or loop.draining:
            await asyncio.sleep(0)
        return ran, errors

    ran, errors = run(scenario)
    assert ran == ["after the error"]
    assert errors == ["division by zero"]


def test_a_connection_reads_its_next_request_in_the_lane_of_its_last_one() -> None:
    async def scenario(loop: LaneLoop) -> list[bool]:
        seen = []

        async def request(backlogged: bool) -> bool:
            connection = LANE.get()
            assert connection is not None and connection.order == lanes.ARRIVALS
            arrived_in_background = connection.background
            lane = lanes.enter(backlogged)
            assert LANE.get() is lane
            # held back, it has a place in the dispatch order; else it shares the foreground's lane
            assert lane.order < lanes.ARRIVALS if backlogged else lane is lanes.FOREGROUND
            return arrived_in_background

        async def connection() -> None:
            lanes.open_connection()
            for backlogged in (True, True, False, False):
                seen.append(await loop.create_task(request(backlogged)))  # a copy of the connection's context

        await loop.create_task(connection(), context=contextvars.Context())
        return seen

    assert run(scenario) == [False, True, True, False]


def test_the_shared_foreground_lane_never_changes() -> None:
    """A request made from within a foreground request's context (its lane is FOREGROUND, not a
    connection's) neither sends the foreground to the background nor gives it a dispatch order."""

    async def scenario(loop: LaneLoop) -> None:
        lanes.open_connection()
        assert lanes.enter(False) is lanes.FOREGROUND
        lanes.dispatched(LANE.get())
        inner = lanes.enter(True)
        assert inner.background and inner is not lanes.FOREGROUND
        assert not lanes.FOREGROUND.background and lanes.FOREGROUND.order == lanes.ARRIVALS

    run(scenario)


def test_a_request_is_crowded_when_others_of_its_flow_wait_or_execute_as_it_is_dispatched() -> None:
    async def scenario(loop: LaneLoop) -> None:
        qs, _ = queue_set(2, queues=1)  # one queue: every flow shares it
        elephants = [Request(("elephant", "e"), WorkEstimate(1)) for _ in range(3)]
        mouse = Request(("mouse", "m"), WorkEstimate(1))
        for r in [*elephants, mouse]:
            assert qs.start(r, 0) is None
        assert not elephants[0].crowded  # alone in the level when it was dispatched
        assert elephants[1].crowded  # beside the first
        qs.finish(elephants[0])
        assert elephants[2].decision is not None and elephants[2].decision.done()
        assert elephants[2].crowded  # the second still executes
        qs.finish(elephants[1])
        assert mouse.decision is not None and mouse.decision.done()
        assert not mouse.crowded  # the only one of its flow, whatever else runs
        qs.finish(elephants[2])
        qs.finish(mouse)
        assert qs.flows == {}

    run(scenario)


def test_an_exempt_request_is_never_crowded() -> None:
    async def scenario(loop: LaneLoop) -> None:
        qs, _ = queue_set(0, queues=EXEMPT_QUEUES)
        admins = [Request(("admin", "a"), WorkEstimate(1)) for _ in range(3)]
        for r in admins:
            assert qs.start(r, 0) is None
        assert not any(r.crowded for r in admins)
        for r in admins:
            qs.finish(r)

    run(scenario)


def test_a_request_dispatched_from_a_queue_wakes_up_before_the_arrivals() -> None:
    """Its seats are taken from the moment it is dispatched: its task's next step comes before the
    steps of requests not yet dispatched (its connection's lane had their order while it waited),
    and after those of requests dispatched before it."""

    async def scenario(loop: LaneLoop) -> list[str]:
        qs, _ = queue_set(1, queues=1)
        log: list[str] = []
        running = Request(("elephant", "e"), WorkEstimate(1))
        assert qs.start(running, 0) is None
        waiting = Request(("elephant", "e"), WorkEstimate(1))
        assert qs.start(waiting, 0) is None and waiting.decision is not None

        async def waiter() -> None:
            waiting.on_dispatch = partial(lanes.dispatched, LANE.get())
            asleep.set()
            await qs.wait(waiting, 10)
            lane = lanes.enter(background=True)
            assert lane.order < lanes.ARRIVALS
            await steps(log, "dispatched", 2)

        connection = Lane(True, lanes.ARRIVALS)
        asleep = asyncio.Event()
        woken = loop.create_task(waiter(), context=in_lane(connection))
        await asleep.wait()
        older = loop.create_task(steps(log, "older", 2), context=in_lane(Lane(True, -1)))  # before any dispatch
        arrival = loop.create_task(steps(log, "arrival", 3), context=in_lane(Lane(True, lanes.ARRIVALS)))
        qs.finish(running)  # dispatches the waiter
        assert connection.order < lanes.ARRIVALS
        await asyncio.gather(woken, older, arrival)
        assert connection.order == lanes.ARRIVALS  # its connection's next request arrives as any other
        return log

    assert run(scenario) == ["older0", "older1", "dispatched0", "dispatched1", "arrival0", "arrival1", "arrival2"]


def test_when_the_foreground_rests_first_of_the_background_or_after_it() -> None:
    async def scenario(loop: LaneLoop) -> list[str]:
        log: list[str] = []
        started = [
            loop.create_task(steps(log, "b", 2), context=in_lane(Lane(True, 0))),
            loop.create_task(steps(log, "f", 2), context=in_lane(Lane(False, lanes.ARRIVALS))),
        ]
        await asyncio.sleep(0)  # the foreground task took its first step; the background one waits
        log.append("called")
        lanes.call_when_resting(partial(log.append, "last"), after_background=True)
        lanes.call_when_resting(partial(log.append, "first"), after_background=False)
        await asyncio.gather(*started)
        return log

    # "last" comes after the background's later steps too: they are a dispatched request's, before arrivals
    assert run(scenario) == ["f0", "called", "f1", "first", "b0", "b1", "last"]


CONSISTENT_READERS = 8


def progress_requests(foreground: bool) -> tuple[int, list[str]]:
    """Readers that each take three steps (parsing, authenticating...) and then read consistently
    from a watch cache (over the in-memory storage, which answers a progress request at once), all
    in the background lane or all in the foreground, with a background request busy beside them:
    how many progress requests they sent, and in which order the readers and the busy request ended."""

    async def scenario(loop: LaneLoop) -> tuple[int, list[str]]:
        async with running_server() as server:
            cache = server.cachers[NAMESPACES].cache
            await cache.sync()  # its watch is open
            watch = cache._watch
            assert watch is not None
            sent = 0
            original = watch.request_progress

            def counted() -> None:
                nonlocal sent
                sent += 1
                original()

            watch.request_progress = counted  # type: ignore[method-assign]
            ended: list[str] = []

            async def reader(name: str) -> None:
                for _ in range(3):
                    await asyncio.sleep(0)
                await cache.sync()
                ended.append(name)

            async def busy() -> None:
                for _ in range(200):
                    await asyncio.sleep(0)
                ended.append("busy")

            tasks = [loop.create_task(busy(), context=in_lane(Lane(True, 0)))]  # dispatched first
            tasks += [
                loop.create_task(reader(f"r{i}"), context=in_lane(Lane(not foreground, i)))
                for i in range(1, CONSISTENT_READERS + 1)
            ]
            await asyncio.gather(*tasks)
            return sent, ended

    return run(scenario)


def test_background_readers_share_a_progress_request_sent_when_the_loop_has_nothing_else_to_run() -> None:
    """Sent as the first reader came, the request would come back before the next reader's steps
    ran (the oldest request runs first): one progress request per reader."""
    sent, ended = progress_requests(foreground=False)
    assert sent == 1 and ended[0] == "busy"


def test_foreground_readers_share_a_progress_request_sent_before_the_background_runs() -> None:
    sent, ended = progress_requests(foreground=True)
    assert sent == 1 and ended[-1] == "busy"
