"""A Backend that shows one served version of a webhook-converted CRD its objects in that version.

Stored objects stay in whatever version they were written (the storage version, once written
through this server); what this version reads, lists and watches is converted to it by the
conversion webhook — one ConversionReview per read, list page or watch response — and what it
writes is converted to the storage version first. Everything above (object store, watch cache,
registry) then sees the version's own objects, as the EncryptedBackend's layers see plaintext. A
write answers with what storage now holds, converted back (``read_back``): upstream's store decodes
the bytes it wrote into the answer, so a webhook that is not its own inverse shows there as in reads.

A failed conversion raises ``ConversionFailed``: reads and writes answer it (500, upstream's
message); the watch cache resumes from its last revision and converts again, so its watchers
see no gap once the webhook answers.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from protokube.gateway.apiextensions.webhookconversion import WebhookConverter
from protokube.gateway.storage.backend import (
    Backend,
    ChangedWatch,
    KeyValue,
    ListResult,
    ModRevisionMismatch,
    Watch,
    WatchResponse,
)
from protokube.schema import deep


class ConvertingBackend:
    def __init__(self, backend: Backend, converter: WebhookConverter, api_version: str, storage_version: str) -> None:
        self.backend = backend
        self.converter = converter
        self.api_version = api_version  # what this version's layers read and write
        self.storage_version = storage_version  # what is written to storage
        # The last write (key, value, the value stored): read_back converts what was stored, not the value again.
        self._last_write: tuple[bytes, bytes, bytes] | None = None

    async def converted(self, kvs: Sequence[KeyValue]) -> list[KeyValue]:
        """``kvs`` with their values in this version: those in another are copies with converted
        values (their objects carry their resourceVersion while the webhook sees them)."""
        out = list(kvs)
        places, objects = [], []
        for place, kv in enumerate(kvs):
            if not kv.value:
                continue
            obj = orjson.loads(kv.value)
            if obj.get("apiVersion") == self.api_version:
                continue
            if isinstance(obj.get("metadata"), dict):
                obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
            places.append(place)
            objects.append(obj)
        if not objects:
            return out
        for place, obj in zip(places, await self.converter.convert(objects, self.api_version), strict=True):
            copy = KeyValue()
            copy.CopyFrom(kvs[place])
            copy.value = _stored(obj)
            out[place] = copy
        return out

    async def _one(self, kv: KeyValue | None) -> KeyValue | None:
        return None if kv is None else (await self.converted([kv]))[0]

    async def _to_storage(self, value: bytes) -> bytes:
        obj = orjson.loads(value)
        if obj.get("apiVersion") == self.storage_version:
            return value
        return _stored((await self.converter.convert([obj], self.storage_version))[0])

    def stale(self, key: bytes, mod_revision: int) -> bool:
        return self.backend.stale(key, mod_revision)

    @property
    def progress_notify(self) -> bool:
        return self.backend.progress_notify

    async def get(self, key: bytes, revision: int = 0) -> tuple[KeyValue | None, int]:
        kv, at = await self.backend.get(key, revision)
        return await self._one(kv), at

    async def list(self, start: bytes, end: bytes, revision: int = 0, limit: int = 0) -> ListResult:
        found = await self.backend.list(start, end, revision, limit)
        return ListResult(await self.converted(found.kvs), found.revision, found.more, found.count)

    async def current_revision(self) -> int:
        return await self.backend.current_revision()

    async def create(self, key: bytes, value: bytes) -> int:
        stored = await self._to_storage(value)
        revision = await self.backend.create(key, stored)
        self._last_write = (key, value, stored)
        return revision

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> int:
        stored = await self._to_storage(value)
        try:
            revision = await self.backend.update(key, stored, mod_revision)
        except ModRevisionMismatch as mismatch:
            raise ModRevisionMismatch(await self._one(mismatch.current)) from None
        self._last_write = (key, value, stored)
        return revision

    async def read_back(self, key: bytes, value: bytes, revision: int) -> bytes:
        """What a read of ``value``, just written under ``key`` at ``revision``, gives: the value
        stored, converted to this version (the object store answers the write with it)."""
        last, self._last_write = self._last_write, None
        stored = last[2] if last is not None and last[:2] == (key, value) else await self._to_storage(value)
        converted = await self._one(KeyValue(key=key, value=stored, mod_revision=revision))
        assert converted is not None
        return converted.value

    async def delete(self, key: bytes, mod_revision: int) -> int:
        try:
            return await self.backend.delete(key, mod_revision)
        except ModRevisionMismatch as mismatch:
            raise ModRevisionMismatch(await self._one(mismatch.current)) from None

    def watch(self, start: bytes, end: bytes, start_revision: int) -> Watch:
        return ChangedWatch(self.backend.watch(start, end, start_revision), self._convert_events)

    async def close(self) -> None:
        await self.backend.close()

    async def _convert_events(self, response: WatchResponse) -> None:
        """The events of a watch response converted in one review (their objects and previous ones)."""
        kvs = [event.kv for event in response.events]
        kvs += [event.prev_kv for event in response.events if event.HasField("prev_kv")]
        for kv, converted in zip(kvs, await self.converted(kvs), strict=True):
            kv.value = converted.value


def _stored(obj: dict[str, object]) -> bytes:
    """An object as the codec stores it: no resourceVersion, keys sorted."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("resourceVersion", None)
    return deep.dumps(obj, orjson.OPT_SORT_KEYS)
