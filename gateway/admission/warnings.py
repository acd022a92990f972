"""Warnings admission adds to a request's answer (upstream's warning.AddWarning on the request's
context): plugins call ``add``; the error funnel collects them around each request and sends them
as Warning headers with whatever the answer is, success or error."""

from __future__ import annotations

from contextvars import ContextVar, Token

_collected: ContextVar[list[str] | None] = ContextVar("admission_warnings", default=None)


def add(text: str) -> None:
    """One warning for the current request (dropped outside of one)."""
    collected = _collected.get()
    if collected is not None and text:
        collected.append(text)


def collect() -> tuple[list[str], Token[list[str] | None]]:
    """Start collecting the current request's warnings: the list they are added to, in order, and
    the token that ``stop`` takes. (Two calls, not a context manager: the error funnel does this for
    every request, and a generator-based one costs several times more.)"""
    collected: list[str] = []
    return collected, _collected.set(collected)


def stop(token: Token[list[str] | None]) -> None:
    """Stop the collecting ``collect`` started."""
    _collected.reset(token)
