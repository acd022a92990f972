"""CEL's cost limits (k8s.io/apiserver/pkg/apis/cel/config.go and apiextensions-apiserver's CRD
validation, 1.32) and the runtime meter that enforces them: every library call, operator and
macro iteration of an evaluation is charged to the ``Meter`` of the thread evaluating it; past
the expression's limit, or once the request that started it is gone, the evaluation stops.

``offloaded`` runs a piece of CEL work where it cannot hold the event loop: first on the loop
within a small slice of cost (nearly every evaluation ends there), and only when the slice runs
out, again from the start on a thread of its own, whose meter is stopped when the awaiting
request is cancelled (its timeout, a disconnect, shutdown). Evaluation is pure, so the second
run gives what the first would have.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import TypeVar

from protokube.gateway.request import REQUEST_DEADLINE

T = TypeVar("T")

PER_CALL_LIMIT = 1_000_000  # celconfig.PerCallLimit: one expression's runtime cost
RUNTIME_BUDGET = 10_000_000  # celconfig.RuntimeCELCostBudget: one object's rules, one policy evaluation
STATIC_EXPRESSION_LIMIT = 10_000_000  # apiextensions validation.StaticEstimatedCostLimit
STATIC_CRD_LIMIT = 100_000_000  # apiextensions validation.StaticEstimatedCRDCostLimit
MAX_REQUEST_SIZE = 3 * 1024 * 1024  # celconfig.MaxRequestSizeBytes: what sizes an unbounded value
# What an evaluation may spend on the event loop before it is moved to a thread: a cost (a few ms
# here), and a time (for what costs nothing: converting a long list, walking a large object).
INLINE_SLICE = 2_000
INLINE_SECONDS = 0.005
THREADS = 4  # evaluations on threads at once, a process (more wait: the GIL runs one at a time anyway)
YIELD_EVERY = 50  # calls between two moments a thread's evaluation lets go of the GIL (well under 1 ms)

COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"  # cel-go's interrupt
INTERRUPTED = "operation interrupted"  # cel-go's words for a cancelled context
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"


class Stopped(BaseException):
    """An evaluation stopped by its meter (a BaseException: no ``except Exception`` of a library
    function may turn it into a CEL error value). ``str()`` is cel-go's message."""


class LimitExceeded(Stopped):
    """The expression's cost went past PER_CALL_LIMIT."""


class Interrupted(Stopped):
    """The request the evaluation was for is gone."""


class _SliceUsed(Stopped):
    """The inline slice ran out: the work starts again on a thread."""


class Meter:
    """The cost of the evaluations of one piece of work: ``call`` is the expression being
    evaluated, ``total`` everything so far; ``slice`` bounds the total on the event loop."""

    __slots__ = ("call", "calls", "cancelled", "deadline", "depth", "slice", "stop_at", "total")

    def __init__(self, slice_: int | None = None, stop_at: float | None = None) -> None:
        self.call = 0
        self.total = 0
        self.calls = 0
        self.depth = 0  # expressions being evaluated (a composition variable within another)
        self.slice = slice_  # None: the work runs on a thread of its own
        self.deadline = time.monotonic() + INLINE_SECONDS
        self.stop_at = stop_at  # the request's deadline (its timeout): the work stops there
        self.cancelled = False

    def charge(self, cost: int) -> None:
        self.call += cost
        if self.call > PER_CALL_LIMIT:
            raise LimitExceeded(COST_LIMIT_EXCEEDED)
        if self.cancelled:
            raise Interrupted(INTERRUPTED)
        if self.slice is not None:
            if self.total + self.call > self.slice or time.monotonic() > self.deadline:
                raise _SliceUsed("inline slice used")
            return
        self.calls += 1
        if self.calls % YIELD_EVERY == 0:
            if self.stop_at is not None and time.monotonic() > self.stop_at:
                raise Interrupted(INTERRUPTED)
            # Let the event loop's thread have the GIL now: it would wait for the interpreter's
            # switch interval (5 ms) each time it wants it back, several times a request.
            time.sleep(0)


class _Current(threading.local):
    meter: Meter | None = None


_CURRENT = _Current()


def charge(cost: int) -> None:
    """Charge the evaluation running in this thread (nothing when no work is metered)."""
    meter = _CURRENT.meter
    if meter is not None:
        meter.charge(cost)


def current() -> Meter | None:
    return _CURRENT.meter


def off_the_loop() -> None:
    """What comes next may take long: work metered on the event loop starts again on a thread."""
    meter = _CURRENT.meter
    if meter is not None and meter.slice is not None:
        raise _SliceUsed("inline slice used")


@contextlib.contextmanager
def expression() -> Iterator[None]:
    """One expression's evaluation: its cost (with that of the composition variables it reads
    first) counts against PER_CALL_LIMIT, then into the total."""
    meter = _CURRENT.meter
    if meter is None:
        yield
        return
    if meter.depth == 0:
        meter.call = 0
    meter.depth += 1
    try:
        yield
    finally:
        meter.depth -= 1
        if meter.depth == 0:
            meter.total += meter.call
            meter.call = 0


_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _run(work: Callable[[], T], meter: Meter) -> T:
    previous, _CURRENT.meter = _CURRENT.meter, meter
    try:
        return work()
    finally:
        _CURRENT.meter = previous


async def offloaded(work: Callable[[], T]) -> T:
    """``work()`` (CEL evaluations that read ``current()``'s meter) without holding the event loop."""
    try:
        return _run(work, Meter(INLINE_SLICE))
    except _SliceUsed:
        pass
    meter = Meter(stop_at=REQUEST_DEADLINE.get())
    loop = asyncio.get_running_loop()
    slots = _SLOTS.setdefault(loop, asyncio.Semaphore(THREADS))
    await slots.acquire()  # released when the thread ends, not when its request does
    done: asyncio.Future[T] = loop.create_future()

    def report(outcome: Callable[[], None]) -> None:
        if not done.done():
            outcome()

    def body() -> None:
        try:
            value = _run(work, meter)
        except BaseException as err:  # handed to the awaiting task as it is
            failure = err
            outcome = lambda: done.set_exception(failure)  # noqa: E731
        else:
            outcome = lambda: done.set_result(value)  # noqa: E731
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(report, outcome)
            loop.call_soon_threadsafe(slots.release)

    # A daemon thread: a process told to stop does not wait for it (and its meter is stopped).
    threading.Thread(target=body, name="cel-evaluation", daemon=True).start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        meter.cancelled = True  # the thread stops at its next charge ...
        done.cancel()  # ... and what it ends with goes nowhere
        raise
