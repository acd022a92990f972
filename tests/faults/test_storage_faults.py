"""Storage faults seen from the API: storage paused (SIGSTOP), the disk full, the data directory
read-only. Requests answer a Status that names no internal address (503/504 while storage is out
of reach, etcd's ``database space exceeded`` when the disk is full); reads that the watch cache
serves keep working; everything recovers, and nothing is corrupt afterwards.

(Storage killed under load is tests/faults/test_crash_safety.py's "storage" case.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.gateway.helpers import GatewayProcess, etcd_process

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
INTERNAL_NAMES = ("unix://", "storage.sock", "127.0.0.1", "Traceback")


def _no_internals(response: httpx.Response) -> None:
    for name in INTERNAL_NAMES:
        assert name not in response.text, response.text


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, what
        time.sleep(0.05)
    return time.monotonic() - started


def test_storage_paused_for_10_seconds(tmp_path: Path) -> None:
    server = GatewayProcess(tmp_path, "--request-timeout", "3s").start()
    answers: list[httpx.Response] = []
    stop = threading.Event()

    def load() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            n = 0
            while not stop.is_set():
                n += 1
                answers.append(client.post(CONFIGMAPS, json={"metadata": {"name": f"p{n}"}}))
                answers.append(client.get(CONFIGMAPS, params={"resourceVersion": "0"}))
                answers.append(client.get(f"{CONFIGMAPS}/p{n}"))

    try:
        with server.client() as client:
            assert client.post(CONFIGMAPS, json={"metadata": {"name": "before"}}).status_code == 201
            worker = threading.Thread(target=load, daemon=True)
            worker.start()
            time.sleep(0.5)
            storage = server.storage_pid()
            os.kill(storage, signal.SIGSTOP)
            try:
                noticed = _wait(lambda: client.get("/readyz").status_code != 200, 5, "/readyz stayed ok")
                # A probe goes out at most every half of its 1 s timeout (upstream's rate limit), then
                # takes that timeout to fail, and /readyz runs its two storage checks one after the other.
                assert noticed < 3.0, noticed
                readyz = client.get("/readyz", params={"verbose": "1"})
                assert "[-]etcd failed" in readyz.text and "[-]etcd-readiness failed" in readyz.text, readyz.text
                # As kube-apiserver: the "etcd" check is a liveness check too (AddHealthChecks); the rest is ok.
                assert client.get("/livez", params={"exclude": "etcd"}).status_code == 200
                assert client.get("/livez/ping").status_code == 200
                time.sleep(10 - noticed)
            finally:
                os.kill(storage, signal.SIGCONT)
            recovered = _wait(lambda: client.get("/readyz").status_code == 200, 15, "/readyz did not recover")
            created = client.post(CONFIGMAPS, json={"metadata": {"name": "after"}})
            assert created.status_code == 201, created.text
            stop.set()
            worker.join(30)
            assert client.get(f"{CONFIGMAPS}/before").status_code == 200
    finally:
        stop.set()
        server.kill()
    codes = [a.status_code for a in answers]
    assert set(codes) <= {200, 201, 404, 409, 503, 504}, codes  # 404: a get after its create timed out
    assert 504 in codes, "no request outlived the pause"
    for answer in answers:
        _no_internals(answer)
    assert recovered < 15


@contextlib.contextmanager
def small_filesystem(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``path`` (root only; the test is skipped otherwise)."""
    path.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs as this user: {made.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _integrity(data_dir: Path) -> None:
    for db in (data_dir / "storage").glob("*.db"):
        with contextlib.closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",), db


def test_disk_full(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "fs", "16m") as fs:
        ballast = fs / "ballast"
        ballast.write_bytes(b"\0" * 4 * 1024 * 1024)  # space to give back later
        server = GatewayProcess(fs / "data").start()
        acknowledged = []
        try:
            with server.client() as client:
                answer = None
                for n in range(40):
                    answer = client.post(
                        CONFIGMAPS, json={"metadata": {"name": f"big{n}"}, "data": {"k": "x" * 500_000}}
                    )
                    if answer.status_code != 201:
                        break
                    acknowledged.append(f"big{n}")
                assert answer is not None and answer.status_code == 500, "the disk never filled"
                assert answer.json()["message"] == "etcdserver: mvcc: database space exceeded", answer.text
                _no_internals(answer)
                assert client.get(f"{CONFIGMAPS}/big0").status_code == 200  # reads keep working
                assert client.get(CONFIGMAPS).status_code == 200
                refused = client.post(CONFIGMAPS, json={"metadata": {"name": "more"}, "data": {"k": "x" * 500_000}})
                assert refused.status_code == 500
                ballast.unlink()  # space returns
                again = client.post(CONFIGMAPS, json={"metadata": {"name": "again"}, "data": {"k": "v"}})
                assert again.status_code == 201, again.text
                acknowledged.append("again")
                assert client.get(f"{CONFIGMAPS}/more").status_code == 404  # the refused write stored nothing
        finally:
            server.kill()
        _integrity(fs / "data")
        server = GatewayProcess(fs / "data").start()  # and everything acknowledged is still there
        try:
            with server.client() as client:
                names = {i["metadata"]["name"] for i in client.get(CONFIGMAPS).json()["items"]}
        finally:
            server.kill()
    assert set(acknowledged) <= names


@pytest.mark.parametrize("command", ["serve", "storage"])
def test_read_only_data_dir(tmp_path: Path, command: str) -> None:
    """A read-only data dir is refused at start with one line (a file system with files open for
    writing cannot be made read-only under a running server: the kernel answers EBUSY; a commit
    the disk refuses takes the path of test_disk_full)."""
    with small_filesystem(tmp_path / "fs", "4m") as fs:
        (fs / "data").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        started = subprocess.run(
            [sys.executable, "-m", "protokube", command, "--data-dir", str(fs / "data"), "--listen", "127.0.0.1:0"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert started.returncode == 2
    assert started.stderr.strip().splitlines() == [
        f"protokube {command}: argument --data-dir: cannot use '{fs / 'data'}' as a data directory: "
        "Read-only file system (see --help)"
    ]


def test_etcd_quota_exceeded(tmp_path: Path) -> None:
    """Against etcd with a small --quota-backend-bytes: its NOSPACE error is kube-apiserver's 500
    with etcd's words (not a 413: that is etcd's request size limit), and reads keep working."""
    if shutil.which("etcd") is None:
        pytest.skip("etcd is not installed (Debian package etcd-server)")
    with etcd_process(tmp_path / "etcd", 30, f"--quota-backend-bytes={4 * 1024 * 1024}") as address:
        server = GatewayProcess(tmp_path / "data", "--storage", address).start()
        try:
            with server.client() as client:
                answer = None
                for n in range(40):
                    answer = client.post(
                        CONFIGMAPS, json={"metadata": {"name": f"big{n}"}, "data": {"k": "x" * 500_000}}
                    )
                    if answer.status_code != 201:
                        break
                assert answer is not None and answer.status_code == 500, answer and answer.text
                assert answer.json()["message"] == "etcdserver: mvcc: database space exceeded", answer.text
                assert "reason" not in answer.json()
                assert client.get(f"{CONFIGMAPS}/big0").status_code == 200
        finally:
            server.kill()


def test_backend_quota_through_the_gateway(tmp_path: Path) -> None:
    """`protokube serve --quota-backend-bytes` (etcd's flag): writes past the quota answer etcd's
    NOSPACE error as a 500 Status, as kube-apiserver relays it; reads keep working; deletes too."""
    server = GatewayProcess(tmp_path / "data", "--quota-backend-bytes", "16000000").start()
    try:
        with server.client() as client:
            answer = None
            for n in range(40):
                answer = client.post(CONFIGMAPS, json={"metadata": {"name": f"q{n}"}, "data": {"k": "x" * 900_000}})
                if answer.status_code != 201:
                    break
            assert answer is not None and answer.status_code == 500 and n > 0, answer and answer.text
            assert answer.json()["message"] == "etcdserver: mvcc: database space exceeded"
            _no_internals(answer)
            assert client.get(f"{CONFIGMAPS}/q0").status_code == 200
            assert client.delete(f"{CONFIGMAPS}/q0").status_code == 200
            refused = client.post(CONFIGMAPS, json={"metadata": {"name": "small"}})
            assert refused.status_code == 500  # the alarm is on: even a small write waits for `alarm disarm`
    finally:
        server.kill()
