"""A range of numbered items (service IPs, node ports) whose allocations live in storage.

As upstream's allocator.Range over etcd, the state is one ``RangeAllocation`` object at a fixed key
(/registry/ranges/serviceips, /registry/ranges/servicenodeports): its ``range`` names the range and
its ``data`` is the bitmap of allocated offsets (bit i of the big-endian integer set: offset i is
taken). Every change is a compare-and-swap on that key, retried on conflict, so that gateways
sharing one storage never hand out an item twice and a restart loses nothing.

Items picked without a request come from the upper part of the range first, at random, and from the
lower part only when the upper is full; the lower part is left for requested items (upstream's
static subrange: ServiceIPStaticSubrange, ServiceNodePortStaticSubrange).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable

from protokube.gateway.storage.backend import Backend, KeyExists, ModRevisionMismatch
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core
from protokube.schema import envelope

API_VERSION, KIND = "v1", "RangeAllocation"


class RangeError(Exception):
    """An item cannot be had; the message is upstream's."""


class Allocated(RangeError):
    pass


class Full(RangeError):
    def __init__(self) -> None:
        super().__init__("range is full")


class RangeStore:
    def __init__(self, backend: Backend, key: str, range_text: str, size: int, static_size: int) -> None:
        self.backend = backend
        self.key = key.encode()
        self.range_text = range_text
        self.size = size
        self.static_size = min(static_size, size)  # offsets [0, static_size) are picked last

    async def _read(self) -> tuple[int, int | None]:
        """The bitmap and the key's mod revision (None: no allocation stored yet). A stored range
        other than ours (the flag changed) counts as empty; the repair at start marks what is used."""
        kv, _ = await self.backend.get(self.key)
        if kv is None:
            return 0, None
        stored = envelope.decode(kv.value, core.RangeAllocation, API_VERSION, KIND)
        bitmap = int.from_bytes(stored.data, "big") if stored.range == self.range_text else 0
        return bitmap, kv.mod_revision

    async def _write(self, bitmap: int, revision: int | None) -> None:
        allocation = core.RangeAllocation(range=self.range_text, data=_bytes(bitmap))
        allocation.metadata.creationTimestamp.seconds = int(time.time())
        value = envelope.encode(allocation, API_VERSION, KIND)
        if revision is None:
            await self.backend.create(self.key, value)
        else:
            await self.backend.update(self.key, value, revision)

    async def _change(self, change: Callable[[int], tuple[int, int]], dry_run: bool) -> int:
        """Apply ``change`` (bitmap -> (new bitmap, offset)) by compare-and-swap; returns the offset."""
        while True:
            bitmap, revision = await self._read()
            updated, offset = change(bitmap)
            if dry_run or updated == bitmap:
                return offset
            try:
                await self._write(updated, revision)
            except (KeyExists, ModRevisionMismatch):
                continue
            return offset

    async def allocate(self, offset: int, dry_run: bool = False) -> None:
        """Take ``offset``; Allocated when it is taken."""

        def take(bitmap: int) -> tuple[int, int]:
            if bitmap >> offset & 1:
                raise Allocated()
            return bitmap | 1 << offset, offset

        await self._change(take, dry_run)

    async def allocate_next(self, dry_run: bool = False, held: Iterable[int] = ()) -> int:
        """Take a free offset (upper part first, at random) other than ``held`` (what a dry run
        already picked); Full when there is none."""
        avoid = sum(1 << o for o in set(held))

        def take(bitmap: int) -> tuple[int, int]:
            offset = _pick(bitmap | avoid, self.static_size, self.size)
            if offset is None:
                offset = _pick(bitmap | avoid, 0, self.static_size)
            if offset is None:
                raise Full()
            return bitmap | 1 << offset, offset

        return await self._change(take, dry_run)

    async def release(self, offsets: Iterable[int]) -> None:
        mask = sum(1 << o for o in set(offsets) if 0 <= o < self.size)
        if mask:
            await self._change(lambda bitmap: (bitmap & ~mask, 0), dry_run=False)

    async def mark(self, offsets: Iterable[int]) -> None:
        """Mark offsets taken whether or not they were (the repair of what services hold)."""
        mask = sum(1 << o for o in set(offsets) if 0 <= o < self.size)
        await self._change(lambda bitmap: (bitmap | mask, 0), dry_run=False)

    async def allocated(self) -> set[int]:
        bitmap, _ = await self._read()
        return {i for i in range(bitmap.bit_length()) if bitmap >> i & 1}


def _pick(bitmap: int, start: int, end: int) -> int | None:
    """A free offset of [start, end): the first from a random place onward, wrapping around."""
    if start >= end:
        return None
    first = random.randrange(start, end)
    for low, high in ((first, end), (start, first)):
        free = ~bitmap >> low & ((1 << (high - low)) - 1)
        if free:
            return low + (free & -free).bit_length() - 1
    return None


def _bytes(bitmap: int) -> bytes:
    """big.Int.Bytes(): big-endian, no leading zero bytes (empty for zero)."""
    return bitmap.to_bytes((bitmap.bit_length() + 7) // 8, "big")
