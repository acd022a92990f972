"""/healthz, /livez and /readyz, each a list of named checks (k8s.io/apiserver pkg/server/healthz).

``/readyz`` answers "ok" when every check passes, or with ``?verbose`` one line per check
(``[+]etcd ok``) and "readyz check passed"; a failing check makes it 500 with every line, the failed
ones as ``[-]etcd failed: reason withheld``. ``?exclude=NAME`` skips a check. ``/readyz/NAME``
runs one check alone: "ok", or 500 "internal server error: <why>". /livez has no readiness-only
checks (informer sync, shutdown), so during shutdown /readyz fails first while /livez stays ok.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from protokube.gateway.request import ApiRequest, Response

# A check passes by returning, and fails by raising with the reason.
CheckFunc = Callable[[], Awaitable[None]]
PLAIN_TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    run: CheckFunc


class CheckFailed(Exception):
    """A health check's reason for failing."""


async def ping() -> None:
    return None


class StorageProbe:
    """The storage checks (``etcd``, ``etcd-readiness``) as upstream's (storagebackend/factory/etcd3.go
    newETCD3Check): at most one probe per half its timeout, a burst of one; a check in between gets
    the outcome of the last probe sent (not of the last to answer), so /readyz polled often costs
    the storage nothing more. Before the first probe, the check fails as upstream's does."""

    def __init__(self, probe: CheckFunc, timeout: float) -> None:
        self._probe = probe
        self._timeout = timeout
        self._next = 0.0  # when the next probe may be sent (time.monotonic)
        self._last_sent = 0.0  # when the probe whose outcome is kept was sent
        self._failure: str | None = "etcd client connection not yet established"

    async def __call__(self) -> None:
        now = time.monotonic()
        if now < self._next:
            if self._failure is not None:
                raise CheckFailed(self._failure)
            return
        self._next = now + self._timeout / 2
        try:
            await asyncio.wait_for(self._probe(), self._timeout)
            failure = None
        except TimeoutError:
            failure = "storage did not answer in time"
        except Exception as err:  # the probe's failure is the check's reason
            failure = str(err) or type(err).__name__
        if now >= self._last_sent:
            self._last_sent, self._failure = now, failure
        if failure is not None:
            raise CheckFailed(failure)


def _text(body: str, status: int) -> Response:
    response = Response(body, status=status, content_type=PLAIN_TEXT)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


class HealthEndpoint:
    """One of /healthz, /livez, /readyz: its checks, in the order they are reported."""

    def __init__(self, name: str, checks: list[Check]) -> None:
        self.name = name
        self.checks = checks

    async def _failure(self, check: Check) -> str | None:
        try:
            await check.run()
        except Exception as err:  # a check's failure is reported, whatever it is
            return str(err) or type(err).__name__
        return None

    async def __call__(self, request: ApiRequest) -> Response:
        excluded = set(request.args.getlist("exclude"))
        # One after another, as upstream's handler runs them: a check that does not wait (most do not)
        # ends without a turn of the event loop.
        results = [await self._failure(c) for c in self.checks if c.name not in excluded]
        lines, failed, outcomes = [], False, iter(results)
        for check in self.checks:
            if check.name in excluded:
                excluded.discard(check.name)
                lines.append(f"[+]{check.name} excluded: ok\n")
            elif next(outcomes) is not None:
                failed = True
                lines.append(f"[-]{check.name} failed: reason withheld\n")
            else:
                lines.append(f"[+]{check.name} ok\n")
        if excluded:
            names = ",".join(f'"{name}"' for name in sorted(excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
        if failed:
            return _text("".join(lines) + f"{self.name} check failed\n", 500)
        if "verbose" not in request.args:
            return _text("ok", 200)
        return _text("".join(lines) + f"{self.name} check passed\n", 200)

    def single(self, check: Check) -> Callable[[ApiRequest], Awaitable[Response]]:
        """The endpoint of one check (/readyz/etcd)."""

        async def run_one(request: ApiRequest) -> Response:
            reason = await self._failure(check)
            return _text("ok", 200) if reason is None else _text(f"internal server error: {reason}\n", 500)

        return run_one
