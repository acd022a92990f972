"""Lanes on the event loop: API Priority and Fairness carried to the gateway's one CPU.

Upstream runs each dispatched request on a goroutine of its own: the three seats an elephant flow
holds are three of the machine's cores, and a mouse's request dispatched beside them runs on
another. The gateway runs every request on one event loop, whose ready callbacks run first come,
first served: at every await of its request the mouse would queue behind the steps of the
elephant's executing requests (and behind the parsing of the elephant's next ones), and the few
milliseconds APF lets it wait for a seat would become many times more.

So every context carries a ``Lane``:

- A request dispatched while other requests of its flow wait or execute in its level (a flow with
  more than one request at a time: one APF holds back when its level is full), or refused with a
  429, runs in the background lane: its callbacks run only when no foreground callback has become
  ready since the last background one. A flow with one request at a time stays in the foreground,
  and so does every request of the exempt level, which APF never holds back.
- Among background callbacks, the oldest dispatched request's run first, so that its seats come
  back as soon as they can: taking turns, three requests on one CPU would all end late, and a
  mouse waiting for a seat would wait for the last of them. A request dispatched from a queue
  takes its place in that order as it is dispatched, before its task wakes up: it holds its seats
  from then on.
- A connection keeps the lane of its last request for the next one read from it, which is parsed,
  authenticated and classified before APF knows whose it is; those arrivals come after every
  dispatched request. A request dispatched alone of its flow brings its connection back to the
  foreground.
- A watch returns to the foreground once its initial events are sent, when it gives its seats back.
- Work done once for many requests waits until the foreground rests (``call_when_resting``): a
  consistent read's progress request goes out once the readers whose steps are ready have come to
  it, and they share it.
- Background work is never starved: once ``MAX_DEFERRAL`` has passed without a background callback,
  one runs whatever is ready.

``LaneLoop`` is uvloop's loop with ``call_soon`` overridden: asyncio's tasks and futures schedule
every step and done-callback through it, with the context they run in. It costs a foreground
callback about 0.25 µs (some 20 per request).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import Context, ContextVar
from typing import Any

import uvloop
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

MAX_DEFERRAL = 0.05  # seconds a ready background callback waits at most while foreground work goes on
ARRIVALS = sys.maxsize  # the order of connections' lanes: requests not yet dispatched come last


class Lane:
    """Mutable, so that a connection's lane (shared by the requests read from it) can change.
    Background callbacks run by ``order``: the oldest dispatched request first."""

    __slots__ = ("background", "order")

    def __init__(self, background: bool, order: int) -> None:
        self.background = background
        self.order = order


LANE: ContextVar[Lane | None] = ContextVar("lane", default=None)
# The lane of the executing requests not held back: their order plays no part, so they share it.
# Nothing changes it: a request in it is nobody's connection.
FOREGROUND = Lane(False, ARRIVALS)
_dispatches = itertools.count()


def open_connection() -> None:
    """In a connection's task: the requests read from it start in its lane (foreground at first)."""
    LANE.set(Lane(False, ARRIVALS))


def dispatched(lane: Lane | None) -> None:
    """A request that waited in a queue has just been dispatched (``lane`` is its connection's): its
    wake-up, and its execution after it, come in dispatch order — before the arrivals, whose order it
    had while it waited, and which would otherwise keep its seats idle."""
    if lane is not None and lane is not FOREGROUND:
        lane.order = next(_dispatches)


def undispatched(lane: Lane | None) -> None:
    """The request ``dispatched`` was about will not execute after all (cancelled as it woke up):
    its connection's next request arrives as any other."""
    if lane is not None and lane is not FOREGROUND:
        lane.order = ARRIVALS


def enter(background: bool) -> Lane:
    """The current request's lane from now on: in the background, its own, in its dispatch order; in
    the foreground, FOREGROUND. Its connection's next request starts in the same one (background or
    not)."""
    connection = LANE.get()
    order = ARRIVALS
    if connection is not None and connection is not FOREGROUND:
        order = connection.order  # dispatched() gave it one if it waited
        connection.background, connection.order = background, ARRIVALS
    if not background:
        LANE.set(FOREGROUND)
        return FOREGROUND
    lane = Lane(True, next(_dispatches) if order == ARRIVALS else order)
    LANE.set(lane)
    return lane


def in_background() -> bool:
    """Whether the current request runs in the background lane."""
    lane = LANE.get()
    return lane is not None and lane.background


FIRST = -1  # before every dispatched request (dispatch orders start at 0)


def call_when_resting(callback: Callable[[], Any], after_background: bool) -> None:
    """Run ``callback`` (in no request's context) once the foreground rests, no foreground callback
    being ready: first of the background's work, or after its ready work too — the dispatched
    requests' and the arrivals' so far. On another loop: ``call_soon``."""
    loop = asyncio.get_running_loop()
    if isinstance(loop, LaneLoop):
        loop.when_resting(callback, ARRIVALS if after_background else FIRST)
    else:
        loop.call_soon(callback)


_call_soon = uvloop.Loop.call_soon


class LaneLoop(uvloop.Loop):
    def __init__(self) -> None:
        super().__init__()
        self.background: list[tuple[int, int, asyncio.Handle]] = []  # a heap by (lane order, arrival)
        self.deferred = 0  # requests' background callbacks scheduled so far
        self.sequence = itertools.count()  # ties of the heap: first scheduled, first run
        self.draining = False
        self.foreground_since = False  # a foreground callback became ready since the last background one
        self.last_background = 0.0
        self.drain_context = Context()  # _drain runs in no request's context (saves a copy per call)
        self.resting_context = Context()  # when_resting's callbacks too (a context cannot be entered twice)

    def call_soon(self, callback: Callable[..., Any], *args: Any, context: Context | None = None) -> asyncio.Handle:
        lane = LANE.get() if context is None else context.get(LANE)
        if lane is None or not lane.background:
            self.foreground_since = True
            return _call_soon(self, callback, *args, context=context)
        handle = asyncio.Handle(callback, args, self, context)
        self.deferred += 1
        self._defer(lane.order, handle)
        return handle

    def when_resting(self, callback: Callable[[], Any], order: int) -> None:
        """``callback`` in the background lane at ``order``, not counted as a request's callback."""
        self._defer(order, asyncio.Handle(callback, (), self, self.resting_context))

    def _defer(self, order: int, handle: asyncio.Handle) -> None:
        heapq.heappush(self.background, (order, next(self.sequence), handle))
        if not self.draining:
            self.draining = True
            self.last_background = time.monotonic()
            _call_soon(self, self._drain, context=self.drain_context)

    def _drain(self) -> None:
        """Runs after the callbacks that were ready before it; goes to the back again while new
        foreground callbacks keep coming, else runs one background callback."""
        if self.foreground_since and time.monotonic() - self.last_background < MAX_DEFERRAL:
            self.foreground_since = False
            _call_soon(self, self._drain, context=self.drain_context)
            return
        self.foreground_since = False
        self.last_background = time.monotonic()
        while self.background:
            handle = heapq.heappop(self.background)[2]
            if not handle.cancelled():
                handle._run()  # asyncio's own: runs in the handle's context, errors to the exception handler
                break
        if self.background:
            _call_soon(self, self._drain, context=self.drain_context)
        else:
            self.draining = False


class LaneCounts(Collector):
    """The running loop's counts, when it is a LaneLoop (read at scrape time, on the loop)."""

    def collect(self) -> Iterator[Metric]:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if not isinstance(loop, LaneLoop):
            return
        yield CounterMetricFamily(
            "protokube_event_loop_background_callbacks",
            "Callbacks (task steps, done-callbacks) scheduled in the background lane of the gateway's event loop",
            value=loop.deferred,
        )
        yield GaugeMetricFamily(
            "protokube_event_loop_background_callbacks_waiting",
            "Ready background-lane callbacks waiting for the foreground to be idle",
            value=len(loop.background),
        )
