"""Requests' deadlines on one timer per timeout (gateway/deadlines.py), on a real event loop."""

from __future__ import annotations

import asyncio
import time

import pytest
import uvloop

from protokube.gateway.deadlines import Deadlines


def run(main) -> None:
    uvloop.run(asyncio.wait_for(main(), 10))


async def sleeper(deadlines: Deadlines, timeout: float, sleep: float) -> tuple[str, float]:
    """What a request watched by ``timeout`` and taking ``sleep`` seconds ends with, and when."""
    started = time.monotonic()
    try:
        with deadlines.watch(timeout):
            await asyncio.sleep(sleep)
    except TimeoutError:
        return "timed out", time.monotonic() - started
    return "done", time.monotonic() - started


def test_each_request_times_out_at_its_own_deadline() -> None:
    """Requests of one timeout that come one after another each expire at their own deadline,
    not all at the first's (one timer, armed again for the oldest left)."""

    async def main() -> None:
        deadlines = Deadlines()
        tasks = []
        for _ in range(3):
            tasks.append(asyncio.create_task(sleeper(deadlines, 0.3, 5)))
            await asyncio.sleep(0.1)
        outcomes = await asyncio.gather(*tasks)
        for outcome, took in outcomes:
            assert outcome == "timed out"
            assert 0.29 <= took < 0.45, outcomes

    run(main)


def test_requests_that_end_in_time_are_left_alone() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        quick = [asyncio.create_task(sleeper(deadlines, 0.2, 0.01)) for _ in range(5)]
        slow = asyncio.create_task(sleeper(deadlines, 0.2, 5))
        assert [o for o, _ in await asyncio.gather(*quick)] == ["done"] * 5
        assert (await slow)[0] == "timed out"
        await asyncio.sleep(0.3)  # the timer fired for the slow one; nothing else is cancelled after
        assert [o for o, _ in await asyncio.gather(sleeper(deadlines, 0.2, 0.05))] == ["done"]

    run(main)


def test_a_shorter_timeout_expires_before_a_longer_one_started_earlier() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        long = asyncio.create_task(sleeper(deadlines, 0.6, 5))
        await asyncio.sleep(0.05)
        short = asyncio.create_task(sleeper(deadlines, 0.1, 5))
        outcome, took = await short
        assert outcome == "timed out" and took < 0.3
        assert not long.done()
        outcome, took = await long
        assert outcome == "timed out" and 0.59 <= took < 0.8

    run(main)


def test_another_cancellation_stays_a_cancellation() -> None:
    """The client leaving (the request's task cancelled) is not a timeout."""

    async def main() -> None:
        deadlines = Deadlines()
        task = asyncio.create_task(sleeper(deadlines, 5, 5))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main)


def test_an_error_of_the_request_passes_through() -> None:
    async def main() -> None:
        deadlines = Deadlines()

        async def failing() -> None:
            with deadlines.watch(5):
                await asyncio.sleep(0)
                raise TimeoutError("its own")

        with pytest.raises(TimeoutError, match="its own"):
            await failing()

    run(main)


def test_timeouts_that_differ_by_less_than_a_grain_share_a_timer() -> None:
    """A client that sends another ?timeout with every request (or a reader waiting for what is left
    of a deadline) does not leave a timer per request behind: timeouts are kept to 10 ms."""

    async def main() -> None:
        deadlines = Deadlines()
        tasks = [asyncio.create_task(sleeper(deadlines, 5 + i * 1e-5, 0)) for i in range(500)]
        await asyncio.sleep(0)
        assert len(deadlines._lanes) <= 2
        await asyncio.gather(*tasks)

    run(main)
