"""The Retry-After of a priority level's 429s (k8s.io/apiserver pkg/util/flowcontrol
dropped_requests_tracker.go): it starts at 1 s, doubles (up to 32) when the level dropped at least
3 × Retry-After requests in the last Retry-After seconds (at most once per Retry-After seconds),
and shrinks by one second when it dropped fewer than Retry-After."""

from __future__ import annotations

import time
from collections.abc import Callable

MAX_RETRY_AFTER = 32


class LevelDrops:
    def __init__(self) -> None:
        self.history: list[tuple[int, int]] = []  # (second, drops) of earlier seconds
        self.second = 0
        self.count = 0
        self.retry_after = 1
        self.updated = 0  # second of the last doubling

    def record(self, second: int) -> None:
        if second == self.second:
            self.count += 1
            return
        self.history.append((self.second, self.count))
        keep = min(2 * self.retry_after, MAX_RETRY_AFTER)
        self.history = [(s, n) for s, n in self.history if second - s <= keep]
        self.second, self.count = second, 1
        recent = sum(n for s, n in self.history if second - s <= self.retry_after and s < second)
        if second - self.updated >= self.retry_after and recent >= 3 * self.retry_after:
            self.retry_after = min(2 * self.retry_after, MAX_RETRY_AFTER)
            self.updated = second
        elif recent < self.retry_after and self.retry_after > 1:
            self.retry_after -= 1


class DroppedRequests:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.levels: dict[str, LevelDrops] = {}

    def record(self, level: str) -> None:
        self.levels.setdefault(level, LevelDrops()).record(int(self.clock()))

    def retry_after(self, level: str) -> int:
        drops = self.levels.get(level)
        return drops.retry_after if drops is not None else 1
