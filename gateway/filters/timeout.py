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
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import partial

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
        loop = asyncio.get_running_loop()
        token = REQUEST_DEADLINE.set(time.monotonic() + timeout)  # in the context the handler's task copies
        try:
            handler = loop.create_task(self.next(request))
        finally:
            REQUEST_DEADLINE.reset(token)
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
