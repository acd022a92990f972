"""kill -9 at random points (fixed seeds) under a mixed write load, then a restart: every
acknowledged write is there, no unacknowledged write is half applied, revisions only grow, and a
watch resumed from its last resourceVersion sees every change once (no gap, no duplicate).

Three ways to crash: the whole `protokube serve` (gateway and embedded storage at once), the
storage alone (serve's supervisor starts it again; the gateway reconnects), the gateway alone (the
storage child follows it; serve is started again).
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.gateway.helpers import GatewayProcess

from .load import MixedLoad, WatchLog

pytestmark = pytest.mark.slow_module  # minutes: taken first by parallel workers (tests/conftest.py)

NAMESPACE = "crash"


def _running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (it may be reaped while we look)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between open and read
        return False


def _wait_gone(pid: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while _running(pid):
        assert time.monotonic() < deadline, f"process {pid} did not exit"
        time.sleep(0.02)


def _wait_ready(server: GatewayProcess, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    with server.client() as client:
        while True:
            try:
                if client.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "".join(server.log[-30:])
            time.sleep(0.05)


def _crash(server: GatewayProcess, how: str) -> GatewayProcess:
    """kill -9 as ``how`` says; returns the server to use afterwards (restarted where needed)."""
    assert server.proc is not None
    if how == "storage":
        storage = server.storage_pid()
        os.kill(storage, signal.SIGKILL)
        _wait_gone(storage)
        _wait_ready(server)
        return server
    storage = server.storage_pid()
    if how == "serve":
        os.killpg(server.proc.pid, signal.SIGKILL)
    else:  # the gateway alone: its storage child gets SIGTERM (PR_SET_PDEATHSIG) and exits
        os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(10)
    _wait_gone(storage)
    restarted = GatewayProcess(server.data_dir, *server.args)
    restarted.start()
    return restarted


@pytest.mark.parametrize("how", ["serve", "storage", "gateway"])
def test_kill_9_under_load(tmp_path: Path, how: str, crash_cycles: int) -> None:
    seed = {"serve": 1, "storage": 2, "gateway": 3}[how]
    rng = random.Random(seed)
    server = GatewayProcess(tmp_path / "data", "--bookmark-interval", "1").start()
    try:
        with server.client() as client:
            assert client.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}}).status_code == 201
            load = MixedLoad(server.url, NAMESPACE, seed)
            watch = WatchLog(server.url, load.path)
            watch.begin(client)
        watch.follow()
        for cycle in range(crash_cycles):
            load.start()
            time.sleep(rng.uniform(0.2, 1.0))  # a random point of the load
            server = _crash(server, how)
            load.stop()
            if how != "storage":
                watch.join()  # its connection died with the gateway
            load.base_url = watch.base_url = server.url
            with server.client() as client:
                revision = load.check(client)
                if not watch.alive():
                    watch.follow()  # resume from the last resourceVersion it saw
                listed = client.get(load.path).json()
                expected = {i["metadata"]["name"]: int(i["metadata"]["resourceVersion"]) for i in listed["items"]}
                # (the list's resourceVersion may come from other resources' writes, Lease renewals
                # among them, which this watch never sees: it must reach the listed objects' state)
                watch.wait_for_state(expected)
                if watch.errors == ["410"]:  # the window was gone: a reflector relists
                    watch.errors.clear()
                    try:
                        watch.join()
                    except AssertionError as err:  # seen once in CI, not since: what the gateway said
                        log = "".join(server.log)
                        raise AssertionError(f"{err} (now {time.monotonic():.2f}); the gateway's log:\n{log}") from None
                    watch.begin(client)
                    watch.follow()
                    continue
            assert watch.errors == [], (cycle, watch.errors)
            assert watch.state == expected, (cycle, sorted(set(watch.state.items()) ^ set(expected.items())))
            assert watch.last >= max(expected.values(), default=0)
            assert revision >= watch.last
        print(f"{how}: {crash_cycles} cycles, {load.acknowledged} acknowledged writes, {watch.relists} relists")
        assert load.acknowledged > 0
        assert load.server_errors == []
        if how == "storage":
            assert watch.relists == 0, "the gateway lived: its watch must resume without a relist"
    finally:
        server.kill()
