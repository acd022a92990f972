"""Request deadlines as kube-apiserver sets them (k8s.io/apiserver WithRequestDeadline and
WithTimeoutForNonLongRunningRequests).

- A request that is not long-running has ``--request-timeout`` (60 s); ``?timeout=`` (a Go duration)
  can only shorten it, and a bad value is a 400 ``invalid timeout specified in the request URL - …``.
  When the deadline passes before the handler answers, the handler is cancelled where it waits —
  as upstream's handler finds every call it waits on (storage, webhooks, its queue, the body)
  ended by its request context's deadline — and the client gets upstream's 504: the Status
  JSON-encoded as Go's json.Encoder writes ``err.ErrStatus`` (no kind or apiVersion), sniffed by Go
  as text/plain. A handler waiting for a body that never comes ends so, and gives its APF seats back.
  The handler runs in the request's own task (no task of its own, no loop turn to start or end
  it), and the deadlines of many requests share one timer (deadlines.py).
- Long-running requests (watches; attach, exec, log, portforward and proxy subresources) get no
  deadline here; a watch without ``timeoutSeconds`` lasts ``--min-request-timeout`` (1800 s) times
  [1, 2) (``watch_timeout`` of handlers/watch.py), so that watches of many clients do not all end at once.
"""

from __future__ import annotations

import time
from typing import Final

from protokube.gateway import errors
from protokube.gateway.deadlines import Deadlines
from protokube.gateway.request import REQUEST_DEADLINE, ApiRequest, Handler, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.schema.wellknown import parse_duration

REQUEST_TIMEOUT: Final = 60.0  # --request-timeout
MIN_REQUEST_TIMEOUT: Final = 1800.0  # --min-request-timeout
LONG_RUNNING_VERBS: Final = frozenset({"watch", "proxy"})
LONG_RUNNING_SUBRESOURCES: Final = frozenset({"attach", "exec", "proxy", "log", "portforward"})
# json.NewEncoder(w).Encode(&NewTimeoutError("request did not complete within the allotted timeout", 0).ErrStatus)
TIMEOUT_BODY: Final = (
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
        self.deadlines = Deadlines()

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
        token = REQUEST_DEADLINE.set(time.monotonic() + timeout)
        try:
            with self.deadlines.watch(timeout) as deadline:
                return await self.next(request)
        except TimeoutError:
            if not deadline.expired:  # the handler's own, not the deadline
                raise
        finally:
            REQUEST_DEADLINE.reset(token)
        return Response(TIMEOUT_BODY, status=504, content_type="text/plain; charset=utf-8")
