"""A request's API Priority and Fairness seat is given back when the request ends, whatever ends it
(issue 34): its deadline while the handler waits for a body the client never sends, its client
leaving mid-body, its client leaving while it waits in a queue.

The requests are raw HTTP/1.1 exchanges over TLS as users with no role bindings: a SelfSubjectReview
create (every authenticated user may make one) announcing a 1000-byte body and sending only ``{``.
Seats and queues are read from /debug/api_priority_and_fairness/dump_priority_levels.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from protokube.gateway.filters.unreadbody import DRAIN_TIMEOUT

from .helpers import HTTP_SERVERS, GatewayProcess

SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
DUMP = "/debug/api_priority_and_fairness/dump_priority_levels"
TIMEOUT_BODY = (
    b'{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout",'
    b'"reason":"Timeout","details":{},"code":504}\n'
)
STALLED = 20
DEADLINE = 1.0  # ?timeout=1s
QUEUED_LEVEL = "seat-release-test"
QUEUED_USER = "queued"
CONNECT_TIMEOUT = 10.0
ANSWER_TIMEOUT = 20.0


def token(user: str) -> str:
    return f"{user}-token"


@pytest.fixture(scope="module", params=HTTP_SERVERS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """RBAC (the default) and users without bindings: ``nobody`` is in global-default, ``queued``
    in a level of its own with a single queue and seats it neither lends nor borrows; on each HTTP server."""
    data = tmp_path_factory.mktemp("seats")
    tokens = data / "tokens.csv"
    tokens.write_text("".join(f"{token(user)},{user},uid-{user}\n" for user in ("nobody", QUEUED_USER)))
    process = GatewayProcess(data, "--token-auth-file", str(tokens), "--http-server", request.param).start()
    try:
        with process.client() as admin:
            for plural, body in _queued_level_objects():
                assert admin.post(f"{FC}/{plural}", json=body).status_code == 201
            level_uid = admin.get(f"{FC}/prioritylevelconfigurations/{QUEUED_LEVEL}").json()["metadata"]["uid"]
        with _user_client(process, QUEUED_USER) as queued:  # in force once the answers name the level
            deadline = time.monotonic() + 10
            while _review(queued).headers.get("X-Kubernetes-PF-PriorityLevel-UID") != level_uid:
                assert time.monotonic() < deadline, f"{QUEUED_USER} is not classified into {QUEUED_LEVEL}"
                time.sleep(0.05)
        yield process
    finally:
        process.kill()


def _queued_level_objects() -> list[tuple[str, dict]]:
    level = {
        "metadata": {"name": QUEUED_LEVEL},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 1,
                "lendablePercent": 0,
                "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 10}},
            },
        },
    }
    schema = {
        "metadata": {"name": QUEUED_LEVEL},
        "spec": {
            "priorityLevelConfiguration": {"name": QUEUED_LEVEL},
            "matchingPrecedence": 500,
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": QUEUED_USER}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True}],
                }
            ],
        },
    }
    return [("prioritylevelconfigurations", level), ("flowschemas", schema)]


def _tls(server: GatewayProcess) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=server.data_dir / "pki" / "ca.crt")


def _user_client(server: GatewayProcess, user: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token(user)}"}
    return httpx.Client(base_url=server.secure_url, verify=_tls(server), headers=headers, timeout=30)


def _review(client: httpx.Client) -> httpx.Response:
    return client.post(SSR, json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})


def assert_user_is_served(server: GatewayProcess, user: str) -> None:
    with _user_client(server, user) as client:
        response = _review(client)
    assert response.status_code == 201, response.text
    assert response.json()["status"]["userInfo"]["username"] == user


def level_counts(server: GatewayProcess, level: str) -> tuple[int, int]:
    """(waiting requests, executing requests) of ``level``, from its queue set."""
    with server.client() as admin:
        dump = admin.get(DUMP).text
    for line in dump.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if cells[0] == level:
            return int(cells[4]), int(cells[5])
    raise AssertionError(f"{level} is not in the dump:\n{dump}")


def nominal_seats(server: GatewayProcess, level: str) -> int:
    with server.client() as admin:
        text = admin.get("/metrics").text
    prefix = f'apiserver_flowcontrol_nominal_limit_seats{{priority_level="{level}"}} '
    return int(float(next(line for line in text.splitlines() if line.startswith(prefix))[len(prefix) :]))


async def until_counts(server: GatewayProcess, level: str, wanted: Callable[[int, int], bool], ceiling: float) -> None:
    """Poll ``level``'s (waiting, executing) until ``wanted`` holds, for at most ``ceiling`` seconds."""
    deadline = time.monotonic() + ceiling
    seen = await asyncio.to_thread(level_counts, server, level)
    while not wanted(*seen):
        assert time.monotonic() < deadline, f"{level}: (waiting, executing) still {seen} after {ceiling:.1f}s"
        await asyncio.sleep(0.05)
        seen = await asyncio.to_thread(level_counts, server, level)


class Stalled:
    """A SelfSubjectReview create that announces Content-Length 1000, sends ``{`` and then nothing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, server: GatewayProcess, user: str, timeout: str | None = None) -> Stalled:
        connecting = asyncio.open_connection("127.0.0.1", server.secure_port, ssl=_tls(server))
        reader, writer = await asyncio.wait_for(connecting, CONNECT_TIMEOUT)
        query = f"?timeout={timeout}" if timeout else ""
        head = (
            f"POST {SSR}{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token(user)}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        )
        writer.write(head.encode() + b"{")
        await writer.drain()
        return cls(reader, writer)

    async def answer(self) -> tuple[int, dict[str, str], bytes]:
        """The status, headers (names in lower case) and body of the server's answer."""
        async with asyncio.timeout(ANSWER_TIMEOUT):
            lines = (await self.reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return int(lines[0].split()[1]), headers, body

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError, TimeoutError):
            await asyncio.wait_for(self.writer.wait_closed(), 5)


async def stall(server: GatewayProcess, user: str, count: int, timeout: str | None = None) -> list[Stalled]:
    return list(await asyncio.gather(*(Stalled.open(server, user, timeout) for _ in range(count))))


def test_requests_whose_deadline_passes_while_their_body_stalls_give_their_seats_back(server: GatewayProcess) -> None:
    """The seats come back at the deadline. Until then the 504s are not even sent: the server waits
    DRAIN_TIMEOUT more for the rest of each body before it answers and closes the connection.
    Seats still held then were held by handlers waiting for the body forever (freed only when a
    garbage collection happened to destroy their tasks)."""
    waiting, baseline = level_counts(server, "global-default")
    assert waiting == 0

    async def scenario() -> list[tuple[int, dict[str, str], bytes]]:
        started = time.monotonic()
        stalled = await stall(server, "nobody", STALLED, timeout=f"{DEADLINE:g}s")
        ceiling = DEADLINE + DRAIN_TIMEOUT - 1.0 - (time.monotonic() - started)
        await until_counts(server, "global-default", lambda _, executing: executing == baseline, ceiling)
        try:
            return list(await asyncio.gather(*(request.answer() for request in stalled)))
        finally:
            await asyncio.gather(*(request.close() for request in stalled))

    for status, headers, body in asyncio.run(scenario()):
        assert (status, body) == (504, TIMEOUT_BODY)  # a 504 is only given to a request that executed
        assert headers["connection"] == "close"
    assert level_counts(server, "global-default") == (0, baseline)
    assert_user_is_served(server, "nobody")


def test_clients_that_leave_mid_body_give_their_seats_back(server: GatewayProcess) -> None:
    """No ?timeout: the 60 s request timeout is far; only the clients' leaving ends the requests."""
    _, baseline = level_counts(server, "global-default")

    async def scenario() -> None:
        stalled = await stall(server, "nobody", STALLED)
        try:
            await until_counts(server, "global-default", lambda _, executing: executing == baseline + STALLED, 20)
        finally:
            await asyncio.gather(*(request.close() for request in stalled))
        await until_counts(server, "global-default", lambda _, executing: executing == baseline, 10)

    asyncio.run(scenario())
    assert_user_is_served(server, "nobody")


def test_a_client_that_leaves_while_queued_gives_its_queue_place_back(server: GatewayProcess) -> None:
    """Stalled requests take every seat of the level; one more waits in its queue (for at most
    15 s, a quarter of the request timeout) until its client leaves."""
    seats = nominal_seats(server, QUEUED_LEVEL)
    assert seats >= 1 and level_counts(server, QUEUED_LEVEL) == (0, 0)
    cancelled = 'reason="cancelled"'

    async def scenario() -> None:
        holders = await stall(server, QUEUED_USER, seats)
        try:
            await until_counts(server, QUEUED_LEVEL, lambda _, executing: executing == seats, 10)
            (queued,) = await stall(server, QUEUED_USER, 1)
            await until_counts(server, QUEUED_LEVEL, lambda waiting, _: waiting == 1, 10)
            await queued.close()
            await until_counts(server, QUEUED_LEVEL, lambda waiting, executing: (waiting, executing) == (0, seats), 10)
        finally:
            await asyncio.gather(*(request.close() for request in holders))
        await until_counts(server, QUEUED_LEVEL, lambda waiting, executing: (waiting, executing) == (0, 0), 10)

    asyncio.run(scenario())
    with server.client() as admin:
        rejected = [
            line
            for line in admin.get("/metrics").text.splitlines()
            if line.startswith("apiserver_flowcontrol_rejected_requests_total") and QUEUED_LEVEL in line
        ]
    assert any(cancelled in line and line.endswith(" 1.0") for line in rejected), rejected  # not "time-out"
    assert_user_is_served(server, QUEUED_USER)
