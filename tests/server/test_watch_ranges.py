"""The watch hub's index of range watchers (server/watchranges.py) finds, for every key, exactly the
watchers whose ranges hold it, as testing each range would: nested, overlapping, open-ended and
empty ranges, and after watchers come and go."""

from __future__ import annotations

import random

from protokube.server.mvcc import in_range
from protokube.server.watchranges import RangeWatchers


class Ranged:
    def __init__(self, key: bytes, end: bytes) -> None:
        self.key = key
        self.end = end

    def __repr__(self) -> str:
        return f"[{self.key!r}, {self.end!r})"


def _found(index: RangeWatchers[Ranged], key: bytes) -> set[Ranged]:
    found = index.covering(key)
    assert len(found) == len(set(found)), "a watcher listed twice"
    return set(found)


def test_every_key_finds_the_ranges_that_hold_it() -> None:
    rng = random.Random(7)
    letters = [bytes([c]) for c in b"abcdefgh"]
    watchers: list[Ranged] = []
    index: RangeWatchers[Ranged] = RangeWatchers()
    for round_ in range(200):
        if watchers and rng.random() < 0.3:
            gone = watchers.pop(rng.randrange(len(watchers)))
            index.discard(gone)
        else:
            key = b"".join(rng.choices(letters, k=rng.randint(1, 3)))
            end = rng.choice([b"", key, b"".join(rng.choices(letters, k=rng.randint(1, 3)))])
            watcher = Ranged(key, end)
            watchers.append(watcher)
            index.add(watcher)
        assert len(index) == len(watchers)
        for _ in range(20):
            probe = b"".join(rng.choices(letters, k=rng.randint(0, 4)))
            expected = {w for w in watchers if in_range(probe, w.key, w.end)}
            assert _found(index, probe) == expected, (round_, probe)


def test_nested_and_open_ended_ranges() -> None:
    everything, registry, configmaps, empty = (
        Ranged(b"", b""),
        Ranged(b"/registry/", b"/registry0"),
        Ranged(b"/registry/configmaps/", b"/registry/configmaps0"),
        Ranged(b"/z", b"/a"),  # ends before it starts: holds nothing
    )
    index: RangeWatchers[Ranged] = RangeWatchers()
    for watcher in (everything, registry, configmaps, empty):
        index.add(watcher)
    assert _found(index, b"/registry/configmaps/default/a") == {everything, registry, configmaps}
    assert _found(index, b"/registry/configmaps0") == {everything, registry}
    assert _found(index, b"/registry/pods/default/a") == {everything, registry}
    assert _found(index, b"/other") == {everything}
    assert _found(index, b"/z") == {everything}
    index.discard(everything)
    index.discard(everything)  # twice: nothing more happens
    assert _found(index, b"/other") == set()
    assert _found(index, b"/registry/configmaps/x") == {registry, configmaps}
    assert set(index) == {registry, configmaps, empty}
