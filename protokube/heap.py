"""The garbage collector of the long-running processes (gateway and storage), set once they have started.

Both keep large, long-lived state in memory (the watch caches; the keyspace) and serve requests
whose objects live a few milliseconds. CPython collects its youngest generation every 700 net
allocations: under load, some 120 times a second, each moving the objects of the requests then in
flight to the middle generation, and every tenth of those collections moving them on to the oldest.
Once such moves reach a quarter of the oldest generation, a full collection walks every object in
it — everything made since start — with the event loop, and every request in flight, stopped.

- While the process starts (``starting``), nothing is collected: startup makes some 110,000
  objects that all live as long as the process, and collecting while it builds them cost the
  gateway ~0.1 s of CPU in full collections that found nothing to free.
- What startup built (modules, the registry and its schemas, the first load of the caches or of
  the keyspace) is frozen as it is (``settle``): full collections never walk it, as none of it
  ever becomes garbage. It is not collected first: the garbage startup leaves is the few hundred
  objects of the command line's parser and such (measured: ~700 in the gateway, ~600 in the
  storage, nothing holding a file or socket), and a full collection of the gateway's heap at that
  point took 60-95 ms of its start.
- Young collections come every 2,000 net allocations and the middle generation is collected every
  20 of them: requests' objects mostly die before being moved on. Measured in a gateway holding
  20,000 objects created after start, over 15 s of GETs at 16 clients: full collections (31-35 ms
  each) 11 → 2, time stopped 720 → 150 ms, GET p99 28 → 9 ms. A larger middle threshold made its
  collections long (13-35 ms) while the caches grow.
"""

from __future__ import annotations

import gc

THRESHOLDS = (2000, 20, 10)


def starting() -> None:
    """No collections until ``settle``."""
    gc.disable()


def settle() -> None:
    """Freeze what exists now, set the thresholds above and collect from now on."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    gc.enable()
