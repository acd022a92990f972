"""The API Priority and Fairness filter (upstream's WithPriorityAndFairness), and the plain
max-in-flight filter that replaces it with --enable-priority-and-fairness=false.

A request is classified, its seats estimated, and then it runs, waits in its level's queues for
at most a quarter of its deadline (a minute at most; 15 s for a watch), or is refused with a 429
``Too many requests, please try again later.`` and a Retry-After. A watch gives its seats back
once its initial events are sent. Every classified response names the FlowSchema and priority
level by UID in ``X-Kubernetes-PF-FlowSchema-UID`` and ``X-Kubernetes-PF-PriorityLevel-UID``.
Long-running requests other than watches (exec, attach, log, portforward, proxy) pass both filters
untracked and unclassified, as upstream's skip them.
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import Final

from protokube.gateway import lanes
from protokube.gateway.errors import StatusError
from protokube.gateway.filters.timeout import long_running
from protokube.gateway.flowcontrol.controller import Controller, Route
from protokube.gateway.flowcontrol.metrics import (
    MUTATING,
    READ_ONLY,
    WAITING,
    FlowControlMetrics,
    request_kind,
)
from protokube.gateway.flowcontrol.queueset import NS, Request
from protokube.gateway.flowcontrol.retryafter import DroppedRequests
from protokube.gateway.flowcontrol.seats import WorkEstimator
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.user import MASTERS

TOO_MANY_REQUESTS: Final = "Too many requests, please try again later.\n"
REQUEST_TIMEOUT: Final = 60.0  # upstream's --request-timeout
MAX_WAIT: Final = 60.0
WATCH_WAIT: Final = REQUEST_TIMEOUT / 4
GO_DURATION: Final = re.compile(r"((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+")
DURATION_UNITS: Final = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def too_many_requests(retry_after: int, headers: tuple[tuple[str, str], ...] = ()) -> Response:
    """upstream's tooManyRequests: http.Error's plain-text answer."""
    response = Response(TOO_MANY_REQUESTS, 429, content_type="text/plain; charset=utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Retry-After"] = str(retry_after)
    for name, value in headers:
        response.headers[name] = value
    return response


def request_timeout(query_timeout: str | None) -> float:
    """The deadline upstream's WithRequestDeadline gives: ?timeout when valid and shorter."""
    if query_timeout and GO_DURATION.fullmatch(query_timeout):
        parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", query_timeout)
        seconds = sum(float(n) * DURATION_UNITS[u] for n, u in parts)
        if 0 < seconds < REQUEST_TIMEOUT:
            return seconds
    return REQUEST_TIMEOUT


def wait_limit(request: ApiRequest, info: RequestInfo) -> float:
    if info.verb == "watch":
        return WATCH_WAIT
    return min(request_timeout(request.args.get("timeout")) / 4, MAX_WAIT)


class PriorityAndFairness:
    def __init__(
        self, next_handler: Handler, controller: Controller, estimator: WorkEstimator, metrics: FlowControlMetrics
    ) -> None:
        self.next = next_handler
        self.controller = controller
        self.estimator = estimator
        self.metrics = metrics
        self.dropped = DroppedRequests()

    async def __call__(self, request: ApiRequest) -> Response:
        info = request.info
        assert info is not None
        if info.verb != "watch" and long_running(info):
            return await self.next(request)
        route = self.controller.classify(request.user, info)
        level = route.level
        estimate = route.estimate
        if estimate is None:
            estimate = self.estimator.estimate(info, request.args, level.max_seats)
        flow = route.flow
        flow.work_seats.observe(estimate.max_seats)
        if estimate.watchers is not None:
            flow.watch_count.observe(estimate.watchers)
        queued = Request(route.flow_key, estimate)
        queues = level.queues
        refused = queues.start(queued, route.hash_value)
        if refused is None and queued.decision is not None and not queued.decision.done():
            refused = await self._wait(request, info, route, queued)
            now = queues.clock()
        elif refused is None:  # dispatched at once: it starts as it arrives
            now = queued.start_ns
            if not route.exempt:
                flow.waited[True].observe_zero()
        else:
            now = queues.clock()
            if not route.exempt:
                flow.waited[False].observe((now - queued.arrival) / NS)
        if refused is not None:
            lanes.enter(background=True)  # the 429, and the connection's next request, wait for the rest
            self.dropped.record(level.name)
            self.controller.level_finished(level)
            return too_many_requests(self.dropped.retry_after(level.name), route.headers)
        # It executes from now on, in its own lane.
        lane = lanes.enter(background=queued.crowded)
        route.executing.add(1)
        streaming: Execution | None = None
        try:
            response = await self.next(request)
            if route.watch and response.status_code == 200 and response.content_length is None:
                streaming = Execution(self, route, queued, now, lane)
        except StatusError as err:
            err.headers.update(route.headers)
            raise
        finally:
            if streaming is None:
                self.finish(route, queued, now, lane)
        response.headers.add_prepared(route.response_headers)  # a handler never sets them: added
        if streaming is not None:
            # The watch streams on: its seats go back once its initial events are sent.
            request.on_watch_initialized.append(streaming)
            request.on_stream_end.append(streaming)
            asyncio.get_running_loop().call_later(REQUEST_TIMEOUT, streaming)
        return response

    def finish(self, route: Route, queued: Request, started: int, lane: lanes.Lane) -> None:
        """The request's execution ended (``started``: the queue set's clock when it began)."""
        if route.watch and lane.background:
            lane.background = False  # its seats are back: it streams on in the foreground
        route.executing.add(-1)
        level = route.level
        ended = level.queues.finish(queued)
        route.execution.observe((ended - started) / NS)
        if level.quiescing:
            self.controller.level_finished(level)

    async def _wait(self, request: ApiRequest, info: RequestInfo, route: Route, queued: Request) -> str | None:
        self.metrics.note(WAITING, route.kind, 1)
        queued.user, queued.details = request.user.name, _details(request, info)  # for the debug dump
        connection = lanes.LANE.get()
        queued.on_dispatch = partial(lanes.dispatched, connection)
        refused: str | None = "cancelled"
        try:
            refused = await route.level.queues.wait(queued, wait_limit(request, info))
        except BaseException:
            lanes.undispatched(connection)
            raise
        finally:
            self.metrics.note(WAITING, route.kind, -1)
            waited = route.level.queues.clock() - queued.arrival
            route.flow.waited[refused is None].observe(waited / NS)
        return refused


class Execution:
    """A watch that streams on: calling it ends its execution, once, whoever calls it first: its
    initial events sent, its stream's end or its deadline."""

    __slots__ = ("filter", "lane", "queued", "route", "started")

    def __init__(self, apf: PriorityAndFairness, route: Route, queued: Request, started: int, lane: lanes.Lane) -> None:
        self.filter = apf
        self.route: Route | None = route
        self.queued = queued
        self.started = started
        self.lane = lane

    def __call__(self) -> None:
        route = self.route
        if route is not None:
            self.route = None
            self.filter.finish(route, self.queued, self.started, self.lane)


def _details(request: ApiRequest, info: RequestInfo) -> tuple[str, ...]:
    """What dump_requests?includeRequestDetails=1 shows: verb, path, namespace, name, version,
    resource, subresource."""
    return (info.verb, request.path, info.namespace, info.name, info.version, info.resource, info.subresource)


class MaxInFlight:
    """--enable-priority-and-fairness=false: at most --max-requests-inflight read-only and
    --max-mutating-requests-inflight mutating requests at once; watches are not counted, and
    system:masters are never refused (upstream's WithMaxInFlightLimit). A refusal is a 429 with
    Retry-After: 1."""

    def __init__(self, next_handler: Handler, read_only: int, mutating: int) -> None:
        self.next = next_handler
        self.limits = {READ_ONLY: read_only, MUTATING: mutating}
        self.in_flight = {READ_ONLY: 0, MUTATING: 0}

    async def __call__(self, request: ApiRequest) -> Response:
        info = request.info
        assert info is not None
        kind = request_kind(info.verb)
        limit = self.limits[kind]
        if limit <= 0 or long_running(info):
            return await self.next(request)
        if self.in_flight[kind] >= limit:
            if MASTERS in request.user.groups:
                return await self.next(request)
            return too_many_requests(1)
        self.in_flight[kind] += 1
        try:
            return await self.next(request)
        finally:
            self.in_flight[kind] -= 1
