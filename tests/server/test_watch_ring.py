"""The watch hub's ring of recent events: what it keeps alive, and whole revisions in and out."""

from __future__ import annotations

import gc
from pathlib import Path

from protokube.server.backend import SqliteBackend
from protokube.server.lessor import Lessor
from protokube.server.mvcc import MvccStore
from protokube.server.records import PUT, Entry, Event
from protokube.server.watchhub import WatchHub


def _hub(tmp_path: Path, ring_size: int) -> tuple[WatchHub, SqliteBackend]:
    backend = SqliteBackend(tmp_path, in_memory=True)
    return WatchHub(MvccStore(backend, Lessor(), cluster_id=1, member_id=1), ring_size=ring_size), backend


def _revision(rev: int, *keys: bytes) -> tuple[int, list[Event]]:
    """One revision's events: a put of each key (a fresh entry each, as a commit makes them)."""
    return rev, [Event(PUT, key, rev, Entry(key, rev, rev, 1, b"v", 0), None) for key in keys]


def test_the_ring_keeps_only_its_events_and_their_entries(tmp_path: Path) -> None:
    """The collector walks every object the ring keeps alive, at every full collection: two per event
    (the event, its entry), no list or tuple per revision besides."""
    hub, backend = _hub(tmp_path, ring_size=100_000)
    try:
        gc.collect()
        before = len(gc.get_objects())
        for rev in range(2, 1002):
            hub.publish([_revision(rev, b"/k/%d" % rev)])
        gc.collect()
        kept = len(gc.get_objects()) - before
    finally:
        backend.close()
    assert kept <= 2 * 1000 + 10  # before: four per event (event, entry, the revision's list and tuple)


def test_the_ring_drops_and_pages_whole_revisions(tmp_path: Path) -> None:
    hub, backend = _hub(tmp_path, ring_size=3)
    try:
        hub.publish([_revision(2, b"/a", b"/b"), _revision(3, b"/c", b"/d")])
        # Four events for a ring of three: revision 2 goes, both its events.
        assert [(ev.rev, ev.key) for ev in hub.ring] == [(3, b"/c"), (3, b"/d")]
        assert (hub.ring_first_rev, hub.ring_events) == (3, 2)
        hub.publish([_revision(4, b"/e", b"/f", b"/g", b"/h")])
        # A revision larger than the ring stays whole, alone.
        assert [ev.rev for ev in hub.ring] == [4, 4, 4, 4]
        assert (hub.ring_first_rev, hub.ring_events) == (4, 4)
        hub.publish([_revision(5, b"/i")])
        assert [ev.rev for ev in hub.ring] == [5]
        events, last = hub._ring_page(5)
        assert ([ev.key for ev in events], last) == ([b"/i"], 5)
    finally:
        backend.close()


def test_a_page_of_the_ring_ends_between_revisions(tmp_path: Path) -> None:
    hub, backend = _hub(tmp_path, ring_size=100)
    hub.stream_buffer_bytes = 4 * 6  # a page ends once it holds 6 bytes: two events of /k + b"v" here
    try:
        hub.publish([_revision(2, b"/a", b"/b", b"/c"), _revision(3, b"/d"), _revision(4, b"/e")])
        events, last = hub._ring_page(2)
        assert ([ev.key for ev in events], last) == ([b"/a", b"/b", b"/c"], 2)
        events, last = hub._ring_page(3)
        assert ([ev.key for ev in events], last) == ([b"/d", b"/e"], 4)
    finally:
        backend.close()
