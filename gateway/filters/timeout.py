"""Request deadlines as kube-apiserver sets them (k8s.io/apiserver WithRequestDeadline and
WithTimeoutForNonLongRunningRequests).

- A request that is not long-running has ``--request-timeout`` (60 s); ``?timeout=`` (a Go duration)
  can only shorten it, and a bad value is a 400 ``invalid timeout specified in the request URL - …``.
  When the deadline passes before the handler answers, the client gets upstream's 504 — the Status
  JSON-encoded as Go's json.Encoder writes ``err.ErrStatus`` (no kind or apiVersion), sniffed by Go
  as text/plain — and the handler runs on to its end in the background, its answer dropped, as
  upstream's does. Its reads of the body fail from then on (as reads of a Go request's closed Body
  do): a handler waiting for a body that never comes ends, and its APF seats are given back.
- Long-running requests (watches; attach, exec, log, portforward and proxy subresources) get no
  deadline here; a watch without ``timeoutSeconds`` lasts ``--min-request-timeout`` (1800 s) times
  [1, 2) (``watch_timeout`` of handlers/watch.py), so that watches of many clients do not all end at once.

The handler runs in a task of its own (with the deadline in its context, REQUEST_DEADLINE), which
the request's task waits for until the deadline. A read answered from memory (GET or LIST at
``resourceVersion=0``, and reads outside the resources: discovery, /version, OpenAPI) starts in
the request's task instead, and mostly ends there without waiting for anything: then no task, no
timer and no wake-up of the request's task are made for it (together about a third of such a
GET's CPU). When it does wait (APF queues it), it goes on in a task of its own from where it waits,
as every other request. Only such reads start so: code that takes ``asyncio.current_task()`` (an
``asyncio.timeout``: the watch cache's consistent reads, webhooks, quota evaluation, the body's
read) would take the request's task in that first step, not the handler's.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import types
from collections.abc import Callable, Coroutine, Generator
from functools import partial
from typing import Any, cast

from protokube.gateway import errors
from protokube.gateway.request import REQUEST_DEADLINE, ApiRequest, Handler, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.schema.wellknown import parse_duration

log = logging.getLogger("protokube.gateway")

REQUEST_TIMEOUT = 60.0  # --request-timeout
MIN_REQUEST_TIMEOUT = 1800.0  # --min-request-timeout
LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
# json.NewEncoder(w).Encode(&NewTimeoutError("request did not complete within the allotted timeout", 0).ErrStatus)
TIMEOUT_BODY = (
    b'{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout",'
    b'"reason":"Timeout","details":{},"code":504}\n'
)


def long_running(info: RequestInfo | None) -> bool:
    """upstream's BasicLongRunningRequestCheck with kube-apiserver's verbs and subresources."""
    if info is None:
        return False
    return info.verb in LONG_RUNNING_VERBS or info.subresource in LONG_RUNNING_SUBRESOURCES


def _answered_from_memory(request: ApiRequest) -> bool:
    """A read that is answered without waiting for storage or anything else (see the module's
    docstring): GET or LIST at resourceVersion 0, or a read outside the resources."""
    info = request.info
    if info is None or info.verb not in ("get", "list"):
        return False
    return not info.is_resource_request or request.args.get("resourceVersion") == "0"


def _requested_timeout(request: ApiRequest) -> float | None:
    """?timeout= in seconds (None when absent); 400 as upstream's parseTimeout words it."""
    value = request.args.get("timeout")
    if not value:
        return None
    try:
        nanos = parse_duration(value)
        if abs(nanos) >= 2**63:
            raise ValueError(f'time: invalid duration "{value}"')
    except ValueError as err:
        raise errors.bad_request(f"invalid timeout specified in the request URL - {err}") from None
    return nanos / 1e9


class RequestTimeout:
    def __init__(
        self,
        next_handler: Handler,
        request_timeout: float = REQUEST_TIMEOUT,
        min_request_timeout: float = MIN_REQUEST_TIMEOUT,
    ) -> None:
        self.next = next_handler
        self.request_timeout = request_timeout
        self.min_request_timeout = min_request_timeout

    async def __call__(self, request: ApiRequest) -> Response:
        if long_running(request.info):
            request.min_request_timeout = self.min_request_timeout
            return await self.next(request)
        timeout = self.request_timeout
        requested = _requested_timeout(request)
        if requested is not None and 0 < requested < timeout:
            timeout = requested
        if timeout <= 0:
            return await self.next(request)
        context = contextvars.copy_context()
        context.run(REQUEST_DEADLINE.set, time.monotonic() + timeout)
        running = cast(Coroutine[Any, Any, Response], self.next(request))  # every handler is a coroutine function
        if _answered_from_memory(request):
            try:
                waits_on = context.run(running.send, None)  # its first step, here (as an eager task's)
            except StopIteration as done:
                return cast(Response, done.value)  # answered without waiting
            running = cast(Coroutine[Any, Any, Response], _resumed(running, waits_on))
        loop = asyncio.get_running_loop()
        handler = loop.create_task(running, context=context)
        settled = loop.create_future()  # by the handler's end or the deadline, whichever comes first
        settle = partial(_settle, settled)
        handler.add_done_callback(settle)
        deadline = loop.call_later(timeout, settle)
        try:
            await settled
        except asyncio.CancelledError:  # the client left: its request goes with it (frees a queue place)
            handler.cancel()
            raise
        finally:
            deadline.cancel()
        if handler.done():
            return handler.result()
        request.close_body()
        handler.add_done_callback(_post_timeout(request, time.monotonic()))
        return Response(TIMEOUT_BODY, status=504, content_type="text/plain; charset=utf-8")


@types.coroutine
def _resumed(running: Coroutine[Any, Any, Response], waits_on: Any) -> Generator[Any, None, Response]:
    """The rest of a coroutine whose first step has run and yielded ``waits_on`` (the future it
    waits for, or None after a bare yield), to run as a task: yields that first, as the coroutine
    would have to its task, then hands it over."""
    while True:
        try:
            yield waits_on
        except GeneratorExit:
            running.close()
            raise
        except BaseException as err:  # the task's cancellation, thrown in where the coroutine waits
            try:
                waits_on = running.throw(err)
            except StopIteration as done:
                return done.value
            continue
        return (yield from running)


def _settle(settled: asyncio.Future[None], *_: object) -> None:
    if not settled.done():
        settled.set_result(None)


def _post_timeout(request: ApiRequest, timed_out_at: float) -> Callable[[asyncio.Future], None]:
    def done(task: asyncio.Future) -> None:
        outcome = "cancelled" if task.cancelled() else repr(task.exception() or "ok")
        log.info(
            "Post-timeout activity: request %s %s %s ended %.1fs after its timeout: %s",
            request.request_id,
            request.method,
            request.path,
            time.monotonic() - timed_out_at,
            outcome,
        )

    return done
