"""protokube/parent.py: a child started with ``child_env`` dies with the process that started it,
even when that process is killed with SIGKILL, and at once when it died before the child asked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .test_crash_safety import _running, _wait_gone

ROOT = Path(__file__).resolve().parents[2]
CHILD = "from protokube.parent import die_with_parent; die_with_parent(); print('asked', flush=True); input()"
PARENT = f"""
import subprocess, sys
from protokube.parent import child_env
child = subprocess.Popen([sys.executable, "-c", {CHILD!r}], env=child_env(), stdin=subprocess.PIPE)
print(child.pid, flush=True)
input()
"""


def test_the_child_gets_sigterm_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert parent.stdout.readline() == "asked\n"  # the child's print shares the parent's stdout
        time.sleep(0.2)
        assert _running(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        _wait_gone(child, timeout=10)
    finally:
        parent.kill()
        parent.wait(10)


def test_a_child_whose_parent_is_already_gone_stops_at_once() -> None:
    env = {**os.environ, "PROTOKUBE_DIE_WITH_PARENT": "0"}  # no process: not the one that started it
    child = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, stdin=subprocess.PIPE, capture_output=True, timeout=30
    )
    assert child.returncode == -signal.SIGTERM and child.stdout == b""


def test_without_the_variable_nothing_changes() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PROTOKUBE_DIE_WITH_PARENT"}
    child = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, input=b"\n", capture_output=True, timeout=30
    )
    assert child.returncode == 0 and child.stdout == b"asked\n"
