"""--request-timeout and --min-request-timeout as kube-apiserver applies them: a request that is not
long-running and outlives its deadline gets upstream's 504 (storage paused with SIGSTOP makes one
slow); ?timeout= only shortens the deadline and a bad value is a 400; watches are exempt."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .helpers import GatewayProcess, watch_lines

TIMEOUT_BODY = (
    b'{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout",'
    b'"reason":"Timeout","details":{},"code":504}\n'
)
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    server = GatewayProcess(tmp_path_factory.mktemp("timeouts"), "--request-timeout", "2s").start()
    yield server
    server.kill()


@contextlib.contextmanager
def storage_paused(server: GatewayProcess) -> Iterator[None]:
    pid = server.storage_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_slow_request_gets_upstreams_504(slow_server: GatewayProcess) -> None:
    with slow_server.client() as client, storage_paused(slow_server):
        started = time.monotonic()
        response = client.post(CONFIGMAPS, json={"metadata": {"name": "late"}})
        elapsed = time.monotonic() - started
    assert response.status_code == 504
    assert response.content == TIMEOUT_BODY
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers.get("Audit-Id")
    assert 1.9 <= elapsed < 5, elapsed


def test_timeout_parameter_shortens_the_deadline(slow_server: GatewayProcess) -> None:
    with slow_server.client() as client, storage_paused(slow_server):
        started = time.monotonic()
        response = client.post(CONFIGMAPS, params={"timeout": "300ms"}, json={"metadata": {"name": "later"}})
        elapsed = time.monotonic() - started
        longer = client.post(CONFIGMAPS, params={"timeout": "1h"}, json={"metadata": {"name": "latest"}})
        longer_elapsed = time.monotonic() - started - elapsed
    assert response.status_code == 504 and elapsed < 1.5, elapsed
    assert longer.status_code == 504 and 1.9 <= longer_elapsed < 5, longer_elapsed  # only shortens


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", 'invalid timeout specified in the request URL - time: invalid duration "abc"'),
        ("5", 'invalid timeout specified in the request URL - time: invalid duration "5"'),
        ("99999999999h", 'invalid timeout specified in the request URL - time: invalid duration "99999999999h"'),
    ],
)
def test_bad_timeout_parameter_is_400(slow_server: GatewayProcess, value: str, message: str) -> None:
    with slow_server.client() as client:
        response = client.get(CONFIGMAPS, params={"timeout": value})
    assert response.status_code == 400
    assert response.json()["message"] == message
    assert response.json()["reason"] == "BadRequest"


def test_watches_outlive_the_request_timeout(slow_server: GatewayProcess) -> None:
    with slow_server.client() as client, httpx.Client(base_url=slow_server.url, timeout=10) as writer:
        events = watch_lines(client, CONFIGMAPS, stop_after=1, timeout=10, labelSelector="watched=yes")
        time.sleep(2.5)  # past --request-timeout
        body = {"metadata": {"name": "after-timeout", "labels": {"watched": "yes"}}}
        assert writer.post(CONFIGMAPS, json=body).status_code == 201
        event = next(events)
        events.close()
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after-timeout")


def test_min_request_timeout_flag(tmp_path: Path) -> None:
    """A watch without timeoutSeconds ends after min-request-timeout × [1, 2)."""
    server = GatewayProcess(tmp_path, "--min-request-timeout", "1").start()
    try:
        with server.client() as client:
            started = time.monotonic()
            with client.stream("GET", CONFIGMAPS, params={"watch": "1", "resourceVersion": "0"}) as response:
                assert response.status_code == 200
                for _ in response.iter_bytes():
                    pass
            elapsed = time.monotonic() - started
    finally:
        server.kill()
    assert 0.9 <= elapsed < 3.5, elapsed
