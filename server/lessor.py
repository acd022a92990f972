"""In-memory lease table: TTLs, expiry times and the keys attached to each lease.

Leases are persisted (id, ttl) by the group committer; expiry times are not: after a restart
every lease gets its full TTL again, as etcd does after a leader change.
"""

from __future__ import annotations

import math
import random
import time
from typing import Final

MAX_LEASE_TTL: Final = 9_000_000_000  # etcd's MaxLeaseTTL, in seconds


class Lease:
    __slots__ = ("expiry", "id", "keys", "revoking", "ttl")

    def __init__(self, id_: int, ttl: int) -> None:
        self.id = id_
        self.ttl = ttl
        self.expiry = time.monotonic() + ttl
        self.keys: set[bytes] = set()
        self.revoking = False  # an expiry revoke has been submitted

    def remaining(self) -> int:
        """Whole seconds left (etcd truncates), never below zero."""
        return max(0, math.floor(self.expiry - time.monotonic()))


class Lessor:
    def __init__(self, min_ttl: int = 2) -> None:
        # etcd's minimum TTL: 1.5 election timeouts (1.5 s with default settings), rounded up.
        self.min_ttl = min_ttl
        self.leases: dict[int, Lease] = {}

    def new_id(self) -> int:
        """A fresh positive lease ID (etcd IDs are positive int64)."""
        while True:
            id_ = random.getrandbits(62) + 1
            if id_ not in self.leases:
                return id_

    def effective_ttl(self, ttl: int) -> int:
        return max(ttl, self.min_ttl)

    def renew(self, id_: int) -> int:
        """Restart a lease's TTL; returns the TTL, or 0 when the lease does not exist
        (or has expired and is about to be revoked)."""
        lease = self.leases.get(id_)
        now = time.monotonic()
        if lease is None or lease.expiry <= now:
            return 0
        lease.expiry = now + lease.ttl
        return lease.ttl

    def expired(self) -> list[int]:
        """IDs of leases past their expiry whose revoke has not been submitted yet."""
        now = time.monotonic()
        return [lease.id for lease in self.leases.values() if lease.expiry <= now and not lease.revoking]

    # --- applied by the group committer after a commit ----------------------------------
    def grant(self, id_: int, ttl: int) -> None:
        self.leases[id_] = Lease(id_, ttl)

    def revoke(self, id_: int) -> None:
        self.leases.pop(id_, None)

    def attach(self, key: bytes, old_lease: int, new_lease: int) -> None:
        """Move a key from one lease to another (0 = none) after a put or delete."""
        if old_lease == new_lease:
            return
        if old_lease and (lease := self.leases.get(old_lease)) is not None:
            lease.keys.discard(key)
        if new_lease and (lease := self.leases.get(new_lease)) is not None:
            lease.keys.add(key)
