"""The timeout filter's two ways of running a handler (gateway/filters/timeout.py).

A read answered from memory (GET or LIST at resourceVersion=0, a read outside the resources) starts
in the request's own task with the deadline in its context, and when it ends without waiting no task
is made for it; when it waits, it goes on in a task of its own, gets the 504 at its deadline and runs
on to its end, and goes when its client leaves. Every other request runs in a task of its own from the
start. The filter is driven here with handlers that record where they run (the suites of
tests/gateway check the 504s, seats and CEL evaluations end to end).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from protokube.gateway.filters.timeout import TIMEOUT_BODY, RequestTimeout
from protokube.gateway.request import REQUEST_DEADLINE, ApiRequest, Response
from protokube.gateway.requestinfo import request_info

TIMEOUT = 30.0
CONFIGMAP = "/api/v1/namespaces/default/configmaps/c"


def request(method: str, path: str, query: bytes = b"") -> ApiRequest:
    scope = {"method": method, "path": path, "query_string": query, "headers": [], "scheme": "http"}
    made = ApiRequest(scope, _no_body())
    made.info = request_info(method, path, None)
    return made


async def _no_body() -> AsyncIterator[bytes]:
    return
    yield b""


class Recorded:
    """Where a handler ran: its task at its start and after its wait, and its deadline."""

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[object] | None] = []
        self.deadline: float | None = None
        self.ended = False


def handler(recorded: Recorded, wait: Callable[[], Awaitable[object]] | None = None) -> Callable:
    async def handle(_: ApiRequest) -> Response:
        recorded.tasks.append(asyncio.current_task())
        recorded.deadline = REQUEST_DEADLINE.get()
        if wait is not None:
            await wait()
            recorded.tasks.append(asyncio.current_task())
        recorded.ended = True
        return Response(b"answered", status=200)

    return handle


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))


@pytest.mark.parametrize(
    ("method", "path", "query"),
    [("GET", CONFIGMAP, b"resourceVersion=0"), ("GET", CONFIGMAP[:-2], b"resourceVersion=0"), ("GET", "/version", b"")],
)
def test_a_read_from_memory_that_does_not_wait_runs_in_the_requests_task(method: str, path: str, query: bytes) -> None:
    async def scenario() -> None:
        recorded = Recorded()
        started = time.monotonic()
        response = await RequestTimeout(handler(recorded), TIMEOUT)(request(method, path, query))
        assert response.body == b"answered"
        assert recorded.tasks == [asyncio.current_task()]
        assert recorded.deadline is not None and started + TIMEOUT <= recorded.deadline <= time.monotonic() + TIMEOUT
        assert REQUEST_DEADLINE.get() is None  # only the handler's context has it

    run(scenario)


@pytest.mark.parametrize("query", [b"", b"resourceVersion=1"])
def test_other_requests_run_in_a_task_of_their_own(query: bytes) -> None:
    async def scenario() -> None:
        for method, path in (("GET", CONFIGMAP), ("POST", CONFIGMAP[:-2])):
            recorded = Recorded()
            response = await RequestTimeout(handler(recorded), TIMEOUT)(request(method, path, query))
            assert response.body == b"answered"
            assert recorded.tasks[0] is not asyncio.current_task() and recorded.deadline is not None

    run(scenario)


def test_a_read_from_memory_that_waits_goes_on_in_a_task_of_its_own() -> None:
    async def scenario() -> None:
        recorded = Recorded()
        waited = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.05, waited.set_result, None)
        response = await RequestTimeout(handler(recorded, lambda: waited), TIMEOUT)(
            request("GET", CONFIGMAP, b"resourceVersion=0")
        )
        assert response.body == b"answered"
        here = asyncio.current_task()
        assert recorded.tasks[0] is here and recorded.tasks[1] is not here and recorded.tasks[1] is not None

    run(scenario)


def test_a_read_from_memory_past_its_deadline_gets_the_504_and_runs_on() -> None:
    async def scenario() -> None:
        recorded = Recorded()
        release = asyncio.Event()
        started = time.monotonic()
        filtered = RequestTimeout(handler(recorded, release.wait), TIMEOUT)
        response = await filtered(request("GET", CONFIGMAP, b"resourceVersion=0&timeout=200ms"))
        assert (response.status_code, response.body) == (504, TIMEOUT_BODY)
        assert 0.2 <= time.monotonic() - started < 5
        assert not recorded.ended
        release.set()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if recorded.ended:
                break
        assert recorded.ended  # its answer is dropped, but it ran to its end

    run(scenario)


def test_a_read_from_memory_whose_client_leaves_goes_with_it() -> None:
    async def scenario() -> None:
        recorded = Recorded()
        cancelled = asyncio.Event()

        async def wait() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        filtered = RequestTimeout(handler(recorded, wait), TIMEOUT)
        serving = asyncio.create_task(filtered(request("GET", CONFIGMAP, b"resourceVersion=0")))
        await asyncio.sleep(0.05)
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        await asyncio.wait_for(cancelled.wait(), 5)
        assert not recorded.ended

    run(scenario)
