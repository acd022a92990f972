"""The watch hub's range watchers, found by key: what etcd's interval tree does for its watchable store.

A gateway watches one range per resource it serves (some fifty), so every event, tested against every
range, cost the storage a scan of them all. Here the key space is cut at every range's start and end;
each piece lists the watchers whose ranges cover it whole, and a key finds its piece with one
bisection. The pieces are made again at the first lookup after a watcher came or went (watchers come
in bursts, events all the time).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar


class Ranged(Protocol):
    key: bytes
    end: bytes | None  # b"": every key from ``key`` on


W = TypeVar("W", bound=Ranged)


class RangeWatchers(Generic[W]):
    def __init__(self) -> None:
        self._watchers: set[W] = set()
        self._bounds: list[bytes] = []  # the pieces' first keys, ascending
        self._covering: list[tuple[W, ...]] = []  # the watchers of each piece
        self._stale = False

    def __len__(self) -> int:
        return len(self._watchers)

    def __iter__(self) -> Iterator[W]:
        return iter(self._watchers)

    def add(self, watcher: W) -> None:
        self._watchers.add(watcher)
        self._stale = True

    def discard(self, watcher: W) -> None:
        if watcher in self._watchers:
            self._watchers.discard(watcher)
            self._stale = True

    def covering(self, key: bytes) -> tuple[W, ...]:
        """The watchers whose ranges hold ``key``."""
        if self._stale:
            self._cut()
        piece = bisect_right(self._bounds, key) - 1
        return self._covering[piece] if piece >= 0 else ()

    def _cut(self) -> None:
        """The pieces, by one sweep over the ranges' starts and ends in key order."""
        starting: dict[bytes, list[W]] = {}
        ending: dict[bytes, list[W]] = {}
        for watcher in self._watchers:
            end = watcher.end
            if end and end <= watcher.key:
                continue  # an empty range holds no key
            starting.setdefault(watcher.key, []).append(watcher)
            if end:
                ending.setdefault(end, []).append(watcher)
        bounds = sorted(starting.keys() | ending.keys())
        active: dict[W, None] = {}  # the watchers covering the piece being made, in the order they started
        covering: list[tuple[W, ...]] = []
        for bound in bounds:
            for watcher in ending.get(bound, ()):
                del active[watcher]
            for watcher in starting.get(bound, ()):
                active[watcher] = None
            covering.append(tuple(active))
        self._bounds, self._covering, self._stale = bounds, covering, False
