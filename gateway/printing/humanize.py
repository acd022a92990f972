"""Human-readable durations, as kubectl and the server's printers show ages ("5m", "3d4h")."""

from __future__ import annotations

import time


def human_duration(seconds: float) -> str:
    """upstream's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def since(epoch_seconds: int | None, now: float | None = None) -> str:
    """upstream's translateTimestampSince: the age of a timestamp, "<unknown>" for none."""
    if not epoch_seconds:
        return "<unknown>"
    return human_duration((now if now is not None else time.time()) - epoch_seconds)
