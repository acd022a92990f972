"""The garbage collector of the long-running processes (gateway and storage), set once they have started.

Both keep large, long-lived state in memory (the watch caches; the keyspace) and serve requests
whose objects live a few milliseconds. CPython collects its youngest generation every 700 net
allocations: under load, some 120 times a second, each moving the objects of the requests then in
flight to the middle generation, and every tenth of those collections moving them on to the oldest.
Once such moves reach a quarter of the oldest generation, a full collection walks every object in
it — everything made since start — with the event loop, and every request in flight, stopped.

- What startup built (modules, the registry and its schemas, the first load of the caches or of
  the keyspace) is frozen: full collections never walk it, as none of it ever becomes garbage.
- Young collections come every 2,000 net allocations and the middle generation is collected every
  20 of them: requests' objects mostly die before being moved on. Measured in a gateway holding
  20,000 objects created after start, over 15 s of GETs at 16 clients: full collections (31-35 ms
  each) 11 → 2, time stopped 720 → 150 ms, GET p99 28 → 9 ms. A larger middle threshold made its
  collections long (13-35 ms) while the caches grow.
"""

from __future__ import annotations

import gc

THRESHOLDS = (2000, 20, 10)


def settle() -> None:
    """Freeze what exists now and set the thresholds above."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
