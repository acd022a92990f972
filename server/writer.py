"""The writer thread: the one thread that writes the database (SQLite has one writer at a time), running
jobs in the order they were handed to it, each reporting its outcome on its caller's loop.

Lighter than an executor behind ``run_in_executor`` (no concurrent future wrapped in an asyncio one):
a group commit hands it one job per commit, and the event loop's thread pays for each hand-over. The
group commit takes the outcome in a callback (``call``), with no future and no task step between the
commit and its answers; other callers await a future (``run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
Done = Callable[[Any, BaseException | None], None]  # (result, exception): called on the caller's loop
Job = tuple[asyncio.AbstractEventLoop, Done, Callable[..., Any], tuple]


class Writer:
    def __init__(self, name: str = "sqlite-writer") -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    def call(self, loop: asyncio.AbstractEventLoop, done: Done, fn: Callable[..., Any], *args: Any) -> None:
        """Queue ``fn(*args)``; ``done(result, exception)`` is then called on ``loop``'s thread."""
        self._jobs.put((loop, done, fn, args))

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue ``fn(*args)``; the returned future of the running loop settles with its outcome."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.call(loop, functools.partial(_settle, future), fn, *args)
        return future

    def close(self) -> None:
        """Run the jobs queued so far, then end the thread."""
        self._jobs.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            loop, done, fn, args = job
            try:
                outcome = (fn(*args), None)
            except BaseException as exc:  # the caller's to handle, as from any awaited call
                outcome = (None, exc)
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for the outcome
                loop.call_soon_threadsafe(done, *outcome)


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is None:
        future.set_result(result)
    else:
        future.set_exception(exc)
