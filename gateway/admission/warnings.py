"""Warnings admission adds to a request's answer (upstream's warning.AddWarning on the request's
context): plugins call ``add``; the error funnel collects them around each request and sends them
as Warning headers with whatever the answer is, success or error."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_collected: ContextVar[list[str] | None] = ContextVar("admission_warnings", default=None)


def add(text: str) -> None:
    """One warning for the current request (dropped outside of one)."""
    collected = _collected.get()
    if collected is not None and text:
        collected.append(text)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """The warnings added within the block, in order."""
    collected: list[str] = []
    token = _collected.set(collected)
    try:
        yield collected
    finally:
        _collected.reset(token)
