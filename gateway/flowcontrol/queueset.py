"""One priority level's queues and the seats they share (k8s.io/apiserver
pkg/util/flowcontrol/fairqueuing/queueset): fair queuing for server requests.

- A request arrives with its flow's hash; shuffle sharding deals the flow a hand of queues and the
  request joins the one with the least waiting work. It is refused (``queue-full``) when the level
  has no seat free and that queue already holds queueLengthLimit requests.
- Virtual time R advances at min(seats asked for, limit) / (non-empty queues) seat-seconds per
  second, so a queue that always has work is served as if it had its own fair share of seats. R and
  work are integers (seat-nanoseconds), as upstream keeps them in fixed point (SeatSeconds): sums
  and differences are exact however long the server runs, and ties are ties.
- Dispatch takes the oldest request of the queue whose next request would finish first in virtual
  time (queue's next dispatch R + that request's work, with a guessed 3 ms per seat), scanning
  round-robin, when enough seats are free; its queue's R then advances by the work, and is
  corrected by the real service time when it finishes. A queue's R never lags its oldest arrival.
- A request with final seats (a write that notifies watchers) keeps them for its additional
  latency after it finishes.
- ``queues: 0`` (a Reject level) only counts seats: ``concurrency-limit`` when they are taken.
  ``queues: -1`` (exempt) never waits.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from protokube.gateway.flowcontrol.seats import ESTIMATED_SERVICE_DURATION, NS, WorkEstimate
from protokube.gateway.flowcontrol.shufflesharding import deal

EXEMPT_QUEUES: Final = -1
HAND_CACHE: Final = 4096
QUEUE_FULL: Final = "queue-full"
CONCURRENCY_LIMIT: Final = "concurrency-limit"
TIME_OUT: Final = "time-out"
CANCELLED: Final = "cancelled"


class Observer(Protocol):
    """What a queue set reports (the level's metrics and seat-demand integrator)."""

    def waiting(self, flow_schema: str, requests: int, seats: int) -> None: ...

    def started(self, flow_schema: str, seats: int, queue_length: int, demand: int, now: int) -> None:
        """A request executes, taking ``seats`` (``queue_length``: of the queue it joined as it did,
        0 when none or when it waited in it); ``demand``: the level's seats in use and waiting as of
        ``now`` (the clock's nanoseconds)."""
        ...

    def ended(self, flow_schema: str, requests: int, seats: int, demand: int, now: int) -> None:
        """``requests`` (-1, or 0 when only its final seats come back) and ``seats`` (<= 0) leave."""
        ...

    def rejected(self, flow_schema: str, reason: str) -> None: ...

    def enqueued(self, flow_schema: str, queue_length: int) -> None: ...

    def demand(self, seats: int, now: int) -> None: ...


class Request:
    """A request as the queue set sees it. A plain class: a dataclass's ``__init__`` with a
    ``__post_init__`` and ``init=False`` fields is generated Python, ~3k instructions a request,
    which mypyc does not compile."""

    def __init__(self, flow: tuple[str, str], estimate: WorkEstimate) -> None:
        self.flow = flow  # (FlowSchema, distinguisher)
        self.estimate = estimate
        # What the debug dump shows of a waiting request (only those are dumped): set as it joins its queue.
        self.user = ""
        self.details: tuple[str, ...] = ()  # verb, path, namespace, name, version, resource, subresource
        self.arrive_time = 0.0  # wall-clock seconds
        self.queue: Queue | None = None
        self.decision: asyncio.Future[bool] | None = None  # True: execute; set when dispatched
        self.on_dispatch: Callable[[], None] | None = None  # called as it leaves its queue, before its waiter wakes
        # Set by the queue set: as it arrives, as it starts executing.
        self.arrival = 0  # the queue set's clock (monotonic nanoseconds)
        self.arrival_r = 0  # R (seat-nanoseconds)
        self.start_ns = 0  # the queue set's clock
        self.crowded = False  # other requests of its flow were in the level when it was dispatched
        # What queuing reads of its estimate (upstream's completeWorkEstimate: ``work``).
        self.seats = estimate.max_seats  # the most seats it occupies
        self.work = estimate.work  # seat-nanoseconds

    @property
    def flow_schema(self) -> str:
        return self.flow[0]

    @property
    def distinguisher(self) -> str:
        return self.flow[1]

    def complete(self, estimate: WorkEstimate) -> None:
        """Take ``estimate`` instead."""
        self.estimate = estimate
        self.seats = estimate.max_seats
        self.work = estimate.work


@dataclass(slots=True, eq=False)
class Queue:
    index: int
    waiting: deque[Request] = field(default_factory=deque)
    executing: int = 0
    seats_in_use: int = 0
    next_dispatch_r: int = 0
    waiting_work: int = 0
    waiting_seats: int = 0

    @property
    def empty(self) -> bool:
        return not self.waiting and not self.executing


class QueueSet:
    __slots__ = (
        "active_queues",
        "clock",
        "current_r",
        "desired_queues",
        "enqueues",
        "flows",
        "hand_size",
        "hands",
        "kept_queues",
        "last_time",
        "limit",
        "name",
        "observer",
        "queue_length_limit",
        "queued_seats_in_use",
        "queues",
        "requests_executing",
        "requests_waiting",
        "robin_index",
        "seats_in_use",
        "seats_waiting",
        "waiting_queues",
    )

    def __init__(self, name: str, observer: Observer, clock: Callable[[], int] = time.monotonic_ns) -> None:
        """``clock``: monotonic nanoseconds, which virtual time follows (upstream's QueueSet takes
        its clock too; tests hand it one that advances only when they say)."""
        self.name = name
        self.observer = observer
        self.clock = clock
        self.desired_queues = EXEMPT_QUEUES
        self.hand_size = 1
        self.queue_length_limit = 0
        self.kept_queues = 0  # queues that stay when empty: max(desired_queues, 0)
        self.limit = 0  # seats (the level's current concurrency limit)
        self.queues: list[Queue] = []
        self.current_r = 0  # seat-nanoseconds
        self.last_time = clock()
        self.robin_index = -1
        self.enqueues = 0
        self.requests_waiting = self.seats_waiting = 0
        self.requests_executing = self.seats_in_use = 0
        self.queued_seats_in_use = 0  # seats of executing requests that came from a queue
        self.active_queues = 0
        self.waiting_queues: set[Queue] = set()  # the queues with requests waiting
        self.hands: dict[int, list[int]] = {}  # dealt hands by flow hash
        self.flows: dict[tuple[str, str], int] = {}  # requests of each flow waiting or executing

    # ---- configuration --------------------------------------------------------------------------
    def configure(self, queues: int, hand_size: int, queue_length_limit: int) -> None:
        """Queues beyond a smaller count stay until they are empty."""
        self._sync_time()
        if (queues, hand_size) != (self.desired_queues, self.hand_size):
            self.hands.clear()
        self.desired_queues, self.hand_size, self.queue_length_limit = queues, hand_size, queue_length_limit
        self.kept_queues = max(queues, 0)
        while len(self.queues) < queues:
            self.queues.append(Queue(len(self.queues)))
        for queue in [q for q in self.queues[self.kept_queues :] if q.empty]:
            self._remove_queue(queue)
        self._dispatch_as_much_as_possible()

    def set_limit(self, limit: int) -> None:
        self._sync_time()
        self.limit = limit
        self._dispatch_as_much_as_possible()

    @property
    def idle(self) -> bool:
        return self.requests_waiting == 0 and self.requests_executing == 0

    # ---- virtual time -----------------------------------------------------------------------------
    @property
    def virtual_time(self) -> float:
        """R in seat-seconds (apiserver_flowcontrol_current_r)."""
        return self.current_r / NS

    def _sync_time(self) -> int:
        """R as of now; returns now (the clock's nanoseconds)."""
        now = self.clock()
        if self.active_queues:
            asked = self.queued_seats_in_use + self.seats_waiting
            self.current_r += (now - self.last_time) * min(asked, self.limit) // self.active_queues
        self.last_time = now
        return now

    def _became(self, queue: Queue, was_empty: bool) -> None:
        """Keep the count of non-empty queues after ``queue`` changed."""
        self.active_queues += int(was_empty) - int(queue.empty)

    def _bound(self, queue: Queue) -> None:
        """Anti-windup: a queue's dispatch R does not precede its oldest request's arrival R."""
        if queue.waiting and queue.next_dispatch_r < queue.waiting[0].arrival_r:
            queue.next_dispatch_r = queue.waiting[0].arrival_r

    # ---- arrival ----------------------------------------------------------------------------------
    def start(self, request: Request, hash_value: int) -> str | None:
        """Admit ``request``: dispatched at once, queued (its ``decision`` pending) or refused
        (the reason is returned)."""
        request.arrival = self._sync_time()
        request.arrival_r = self.current_r
        seats, flow = request.seats, request.flow
        queue = None
        if self.desired_queues < 1:
            if not self._can_accommodate(seats):
                self.observer.rejected(flow[0], CONCURRENCY_LIMIT)
                return CONCURRENCY_LIMIT
        else:
            queue = self.queues[self._shuffle_shard(hash_value)]
            if self.seats_in_use >= self.limit and len(queue.waiting) >= self.queue_length_limit:
                self.observer.rejected(flow[0], QUEUE_FULL)
                return QUEUE_FULL
        self.flows[flow] = self.flows.get(flow, 0) + 1
        if queue is None:
            self._execute(request, None, 0)
            return None
        request.queue = queue
        was_empty = not queue.waiting and not queue.executing
        if was_empty:
            queue.next_dispatch_r = self.current_r
        if not self.requests_waiting and self._can_accommodate(seats):
            # Nothing waits anywhere: the request would be enqueued and dispatched at once (upstream
            # dispatches it then too), after which its queue is not empty.
            self._execute(request, queue, 1)
            if was_empty:
                self.active_queues += 1
            return None
        request.arrive_time = time.time()
        request.decision = asyncio.get_running_loop().create_future()
        queue.waiting.append(request)
        self.waiting_queues.add(queue)
        queue.waiting_work += request.work
        queue.waiting_seats += request.seats
        self._became(queue, was_empty)
        self.requests_waiting += 1
        self.seats_waiting += request.seats
        self.observer.waiting(flow[0], 1, seats)
        self.observer.enqueued(flow[0], len(queue.waiting))
        self._bound(queue)
        self._demand_changed()
        self._dispatch_as_much_as_possible()
        return None

    def _leave(self, request: Request) -> None:
        flows, flow = self.flows, request.flow
        left = flows[flow] - 1
        if left:
            flows[flow] = left
        else:
            del flows[flow]

    def _shuffle_shard(self, hash_value: int) -> int:
        """The queue of the flow's hand with the least waiting work, visiting the hand from a
        rotating offset so that ties do not always favour the same queue."""
        hand = self.hands.get(hash_value)
        if hand is None:
            if len(self.hands) >= HAND_CACHE:
                self.hands.clear()
            hand = self.hands[hash_value] = deal(hash_value, self.desired_queues, self.hand_size)
        offset = self.enqueues % len(hand)
        self.enqueues += 1
        if not self.requests_waiting:  # every queue's waiting work is 0: the first visited wins the tie
            return hand[offset]
        best, least = hand[offset], None
        for i in range(len(hand)):
            index = hand[(offset + i) % len(hand)]
            work = self.queues[index].waiting_work
            if least is None or work < least:
                best, least = index, work
        return best

    # ---- dispatch -----------------------------------------------------------------------------
    def _can_accommodate(self, seats: int) -> bool:
        if self.desired_queues == EXEMPT_QUEUES:
            return True
        if seats > self.limit:  # too wide for the level: only when nothing else runs
            return self.requests_executing == 0
        return self.seats_in_use + seats <= self.limit

    def _dispatch_as_much_as_possible(self) -> None:
        while self.requests_waiting and self.seats_in_use < self.limit and self._dispatch_one():
            pass

    def _dispatch_one(self) -> bool:
        """The queue whose oldest request finishes first in virtual time; ties go to the queue met
        first scanning round-robin after the last one dispatched from."""
        chosen: Queue | None = None
        best: tuple[int, int] = (0, 0)
        count = len(self.queues)
        for queue in self.waiting_queues:
            key = (queue.next_dispatch_r + queue.waiting[0].work, (queue.index - self.robin_index - 1) % count)
            if chosen is None or key < best:
                chosen, best = queue, key
        if chosen is None:
            return False
        request = chosen.waiting[0]
        assert request.decision is not None
        if request.decision.cancelled():  # its waiter was cancelled, and has not withdrawn it yet
            self._withdraw(request, CANCELLED)
            return True
        if not self._can_accommodate(request.seats):
            return False
        chosen.waiting.popleft()
        if not chosen.waiting:
            self.waiting_queues.discard(chosen)
        chosen.waiting_work -= request.work
        chosen.waiting_seats -= request.seats
        self.requests_waiting -= 1
        self.seats_waiting -= request.seats
        self.observer.waiting(request.flow[0], -1, -request.seats)
        self._execute(request, chosen, 0)
        self._bound(chosen)
        if request.on_dispatch is not None:
            request.on_dispatch()
        request.decision.set_result(True)
        return True

    def _execute(self, request: Request, queue: Queue | None, queue_length: int) -> None:
        """``request`` executes, leaving ``queue`` if it has one (``queue_length``: 1 when it joined
        the queue only to leave it at once, 0 when it waited in it or has none)."""
        if queue is not None:
            self.robin_index = queue.index  # the queues after it win ties next time
            e = request.estimate
            if e.final_seats and e.final_seats > self.limit > 0:  # keep the work, spread over fewer seats
                spread = e.final_seats * e.additional_latency / self.limit
                request.complete(WorkEstimate(e.initial_seats, self.limit, spread))
            queue.executing += 1
            queue.seats_in_use += request.seats
            self.queued_seats_in_use += request.seats
            queue.next_dispatch_r += request.work
        now = request.start_ns = self.last_time  # every way here has just read the clock
        # An exempt request is never held back, on the event loop's lanes neither (lanes.py).
        request.crowded = self.flows[request.flow] > 1 and self.desired_queues != EXEMPT_QUEUES
        self.requests_executing += 1
        seats = request.seats
        self.seats_in_use += seats
        self.observer.started(request.flow[0], seats, queue_length, self.seats_in_use + self.seats_waiting, now)

    # ---- waiting ----------------------------------------------------------------------------------
    async def wait(self, request: Request, timeout: float) -> str | None:
        """Wait up to ``timeout`` seconds to be dispatched; the reason when not (``time-out``, or
        ``cancelled`` when the waiter is cancelled, after which the cancellation goes on).

        The waiter awaits its decision itself, so one callback wakes it once it is dispatched (a
        shield inside a wait_for took four, each a turn of the loop with its seats held); its
        cancellation cancels the decision, and the request leaves its queue as ``asyncio.Semaphore``'s
        waiters do: the first of its waiter and a dispatch that meets it withdraws it."""
        decision = request.decision
        if decision is None or decision.done():
            return None
        timer = asyncio.get_running_loop().call_later(max(timeout, 0), self._time_out, request)
        try:
            return None if await decision else TIME_OUT
        except asyncio.CancelledError:
            self._abandon(request)
            raise
        finally:
            timer.cancel()

    def _time_out(self, request: Request) -> None:
        """The request waited as long as it may: refused, unless decided already."""
        decision = request.decision
        assert decision is not None
        if not decision.done():
            self._withdraw(request, TIME_OUT)
            decision.set_result(False)

    def _abandon(self, request: Request) -> None:
        """Its waiter was cancelled: dispatched meanwhile, the request hands its seats back; still in
        its queue, it leaves it."""
        decision = request.decision
        assert decision is not None
        if not decision.cancelled():
            if decision.result():
                self.finish(request)
        elif self._waiting(request):
            self._withdraw(request, CANCELLED)

    def _waiting(self, request: Request) -> bool:
        """Whether ``request`` is in its queue (a dispatch may have withdrawn it since its waiter was
        cancelled)."""
        return request.queue is not None and request in request.queue.waiting

    def _withdraw(self, request: Request, reason: str) -> None:
        """``request`` leaves its queue without executing (its decision is the caller's to make)."""
        self._sync_time()
        queue = request.queue
        assert queue is not None
        was_empty = queue.empty
        queue.waiting.remove(request)
        if not queue.waiting:
            self.waiting_queues.discard(queue)
        queue.waiting_work -= request.work
        queue.waiting_seats -= request.seats
        self._became(queue, was_empty)
        self.requests_waiting -= 1
        self.seats_waiting -= request.seats
        self.observer.waiting(request.flow[0], -1, -request.seats)
        self.observer.rejected(request.flow[0], reason)
        self._leave(request)
        self._bound(queue)
        self._remove_if_surplus(queue)
        self._demand_changed()

    # ---- completion -------------------------------------------------------------------------------
    def finish(self, request: Request) -> int:
        """The request ended: its initial seats free now, its final seats after its additional
        latency. Returns the clock's reading (nanoseconds) at its end."""
        now = self._sync_time()
        self.requests_executing -= 1
        self._leave(request)
        queue = request.queue
        if queue is not None:  # it executes: its queue was not empty
            queue.executing -= 1
            served = now - request.start_ns
            queue.next_dispatch_r -= request.estimate.initial_seats * (ESTIMATED_SERVICE_DURATION - served)
            self._bound(queue)
            if queue.empty:
                self.active_queues -= 1
        latency = request.estimate.additional_latency
        if latency > 0:
            self.observer.ended(request.flow[0], -1, 0, self._demand(), now)
            asyncio.get_running_loop().call_later(latency, self._release_later, request)
        else:
            self._release(request, -1)
        return now

    def _release_later(self, request: Request) -> None:
        """A request's final seats come back after its additional latency."""
        self._sync_time()
        self._release(request, 0)

    def _release(self, request: Request, ended: int) -> None:
        """Give the request's seats back (``ended``: -1 when its end is reported here too); R is
        current."""
        seats = request.seats
        self.seats_in_use -= seats
        self.observer.ended(request.flow[0], ended, -seats, self.seats_in_use + self.seats_waiting, self.last_time)
        queue = request.queue
        if queue is not None:
            queue.seats_in_use -= seats
            self.queued_seats_in_use -= seats
            self._remove_if_surplus(queue)
        if self.requests_waiting:
            self._dispatch_as_much_as_possible()

    def _remove_if_surplus(self, queue: Queue) -> None:
        if len(self.queues) > self.kept_queues and queue.empty and queue.seats_in_use == 0:
            self._remove_queue(queue)

    def _remove_queue(self, queue: Queue) -> None:
        if queue not in self.queues:
            return
        index = self.queues.index(queue)
        del self.queues[index]
        for i in range(index, len(self.queues)):
            self.queues[i].index = i
        if self.robin_index >= index:
            self.robin_index -= 1

    def _demand(self) -> int:
        """The level's seat demand: seats in use and seats waiting."""
        return self.seats_in_use + self.seats_waiting

    def _demand_changed(self) -> None:
        self.observer.demand(self._demand(), self.last_time)
