"""Requests' deadlines, many on one timer of the loop.

``asyncio.timeout()`` arms a timer of the loop for every use: on uvloop a libuv timer, armed and
cancelled again for every request, some 5 µs of the few tens a GET from the cache costs. Nearly
every request has the same timeout (``--request-timeout``, or the same ``?timeout=`` of one
client), so the deadlines of one timeout fall due in the order their requests came. Kept in that
order, they need one timer per timeout: armed for the oldest deadline; when it fires, the requests
whose deadlines have passed are cancelled, and it is armed again for the oldest that remains (the
one it was armed for has mostly ended long before). A deadline costs a dict entry while its
request runs.

Timeouts are counted in GRAIN (10 ms), rounded up: the timeouts of a client that sends a
different one with every request (or of readers that wait for what is left of a deadline) share a
few hundred timers at most, never one each that outlives its request.

``Deadlines.watch(timeout)`` is used as ``asyncio.timeout(timeout)`` is: the request's task is
cancelled at its deadline, and the CancelledError leaves the ``with`` block as TimeoutError.
"""

from __future__ import annotations

import asyncio
import math
from types import TracebackType
from typing import Any, Final

GRAIN: Final = 0.01  # seconds: a deadline is kept to this much


class Deadline:
    """The deadline of the current task: a context manager, as ``asyncio.timeout()``'s."""

    __slots__ = ("_cancelling", "_lane", "_task", "at", "expired")

    def __init__(self, lane: _Lane, task: asyncio.Task[Any], at: float) -> None:
        self._lane = lane
        self._task = task
        self._cancelling = task.cancelling()
        self.at = at  # on the loop's clock
        self.expired = False

    def __enter__(self) -> Deadline:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.expired:
            del self._lane.waiting[self]
            return
        # As asyncio.timeout: the cancellation is this deadline's own unless another came meanwhile.
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc

    def expire(self) -> None:
        self.expired = True
        self._task.cancel()


class _Lane:
    """The deadlines of one timeout, oldest first (a dict keeps the order they were added in)."""

    __slots__ = ("grains", "timer", "waiting")

    def __init__(self, grains: int) -> None:
        self.grains = grains  # the timeout, in GRAIN
        self.waiting: dict[Deadline, None] = {}
        self.timer: asyncio.TimerHandle | None = None


class Deadlines:
    """The deadlines of the requests on one event loop, one timer per timeout."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lanes: dict[int, _Lane] = {}  # by timeout, in GRAIN

    def watch(self, timeout: float) -> Deadline:
        """A deadline ``timeout`` seconds from now (rounded up to GRAIN) for the current task."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # (an app served on another loop than before: tests)
            self._loop, self._lanes = loop, {}
        task = asyncio.current_task()
        assert task is not None, "a deadline is for a task"
        grains = max(math.ceil(timeout / GRAIN), 0)
        lane = self._lanes.get(grains)
        if lane is None:
            lane = self._lanes[grains] = _Lane(grains)
        deadline = Deadline(lane, task, loop.time() + grains * GRAIN)
        lane.waiting[deadline] = None
        if lane.timer is None:
            lane.timer = loop.call_at(deadline.at, self._fire, lane)
        return deadline

    def _fire(self, lane: _Lane) -> None:
        """Cancel the requests whose deadlines have passed; arm the timer for the oldest left."""
        assert self._loop is not None
        now = self._loop.time()
        passed = []
        for deadline in lane.waiting:
            if deadline.at > now:
                break
            passed.append(deadline)
        for deadline in passed:
            del lane.waiting[deadline]
            deadline.expire()
        if lane.waiting:
            lane.timer = self._loop.call_at(next(iter(lane.waiting)).at, self._fire, lane)
        elif self._lanes.get(lane.grains) is lane:
            del self._lanes[lane.grains]
