"""A Backend that encrypts the values it writes and decrypts the values it reads and watches.

Everything above it (object store, watch cache) sees plaintext. A value that no listed provider
can read (a removed key, another server's data) is passed on as stored: the layers above then
meet an object they cannot decode, which is what upstream reports as a corrupt object (and what
``ignoreStoreReadErrorWithClusterBreakingPotential`` can delete).
"""

from __future__ import annotations

import logging

from protokube.gateway.storage.backend import (
    Backend,
    ChangedWatch,
    KeyValue,
    ListResult,
    ModRevisionMismatch,
    Watch,
    WatchResponse,
)
from protokube.gateway.storage.encryption.providers import PrefixTransformers, TransformError

log = logging.getLogger("protokube.encryption")


class EncryptedBackend:
    def __init__(self, backend: Backend, transformers: PrefixTransformers) -> None:
        self.backend = backend
        self.transformers = transformers
        self._stale: dict[bytes, int] = {}  # key → the revision whose value was read with an old key

    def decrypt(self, key: bytes, value: bytes, mod_revision: int) -> bytes:
        if not value:
            return value
        try:
            plain, stale = self.transformers.read(value, key)
        except TransformError as err:
            log.warning("cannot decrypt %s: %s", key.decode(errors="replace"), err)
            return value
        if stale:
            self._stale[key] = mod_revision
        return plain

    def plain(self, kv: KeyValue) -> KeyValue:
        plain = KeyValue()
        plain.CopyFrom(kv)
        plain.value = self.decrypt(kv.key, kv.value, kv.mod_revision)
        return plain

    def stale(self, key: bytes, mod_revision: int) -> bool:
        return self._stale.get(key) == mod_revision

    @property
    def progress_notify(self) -> bool:
        return self.backend.progress_notify

    async def get(self, key: bytes, revision: int = 0) -> tuple[KeyValue | None, int]:
        kv, at = await self.backend.get(key, revision)
        return (None if kv is None else self.plain(kv)), at

    async def list(self, start: bytes, end: bytes, revision: int = 0, limit: int = 0) -> ListResult:
        found = await self.backend.list(start, end, revision, limit)
        return ListResult([self.plain(kv) for kv in found.kvs], found.revision, found.more, found.count)

    async def current_revision(self) -> int:
        return await self.backend.current_revision()

    async def create(self, key: bytes, value: bytes) -> int:
        return await self.backend.create(key, self.transformers.to_storage(value, key))

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> int:
        try:
            revision = await self.backend.update(key, self.transformers.to_storage(value, key), mod_revision)
            self._stale.pop(key, None)
            return revision
        except ModRevisionMismatch as mismatch:
            raise ModRevisionMismatch(None if mismatch.current is None else self.plain(mismatch.current)) from None

    async def delete(self, key: bytes, mod_revision: int) -> int:
        try:
            revision = await self.backend.delete(key, mod_revision)
            self._stale.pop(key, None)
            return revision
        except ModRevisionMismatch as mismatch:
            raise ModRevisionMismatch(None if mismatch.current is None else self.plain(mismatch.current)) from None

    def watch(self, start: bytes, end: bytes, start_revision: int) -> Watch:
        return ChangedWatch(self.backend.watch(start, end, start_revision), self._decrypt_events)

    async def close(self) -> None:
        await self.backend.close()

    async def _decrypt_events(self, response: WatchResponse) -> None:
        for event in response.events:
            event.kv.value = self.decrypt(event.kv.key, event.kv.value, event.kv.mod_revision)
            if event.HasField("prev_kv"):
                prev = event.prev_kv
                prev.value = self.decrypt(prev.key, prev.value, prev.mod_revision)
