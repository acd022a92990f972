"""Children that die with the process that started them (Linux's PR_SET_PDEATHSIG).

The parent names itself in the child's environment (``child_env``); the child, first thing, asks
the kernel for SIGTERM when that parent goes (``die_with_parent``). The child asks rather than a
``preexec_fn`` in the parent because a preexec_fn makes Python fork() instead of vfork(): fork()
runs gRPC's fork handlers, which gRPC skips while its threads are busy, and the child then broke
before it could exec (seen as a worker of `serve --gateways 2` that never ran).
"""

from __future__ import annotations

import ctypes
import os
import signal

PARENT_PID = "PROTOKUBE_DIE_WITH_PARENT"
PR_SET_PDEATHSIG = 1


def child_env() -> dict[str, str]:
    """The environment for a child that must not outlive this process."""
    return {**os.environ, PARENT_PID: str(os.getpid())}


def die_with_parent() -> None:
    """In a child started with ``child_env``: SIGTERM when the parent dies, even by SIGKILL; now if it
    died already. The variable is removed, so that this process's own children do not inherit it.

    The kernel signals when the parent's *thread* that started the child ends: parents start such
    children from threads that live as long as they do (the event loop's, or its executor's)."""
    parent = os.environ.pop(PARENT_PID, None)
    if parent is None:
        return
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(parent):  # it died before we asked
        os.kill(os.getpid(), signal.SIGTERM)
