"""The watch cache takes the events of the gateway's own writes from the objects written
(WatchCache.writing and written) instead of decoding the stored bytes again: the entry it keeps is
the one decoding gives, whether the event comes while the write is in flight or after it ended;
what the writer does with the object afterwards does not reach the cache; only an event carrying
exactly the bytes written is taken from the object; and nothing is left behind."""

from __future__ import annotations

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.watchcache.entries import Entry, make_entry
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core

from .stack import run, running_server

CONFIGMAPS = ("", "v1", "configmaps")


async def cached(store: Store, name: str, revision: int) -> Entry:
    """The cache's entry of ``name`` once the cache has seen ``revision``."""
    cache = store.storage.cache
    await cache.wait_for(revision)
    entry = cache.store[f"default/{name}"]
    assert entry.resource_version == revision
    return entry


async def decoded_entry(store: Store, name: str) -> Entry:
    """The entry the cache makes by decoding the stored bytes."""
    objects = store.storage.store
    kv, _ = await objects.backend.get(objects.key("default", name))
    assert kv is not None
    view = ObjectView(objects.codec, kv.mod_revision, value=kv.value, keep_object=False)
    return make_entry(f"default/{name}", view, store.storage.cache.selectable)


def same(entry: Entry, other: Entry) -> None:
    assert (entry.key, entry.namespace, entry.labels, entry.field_values) == (
        other.key,
        other.namespace,
        other.labels,
        other.field_values,
    )
    assert entry.view.raw == other.view.raw
    assert entry.view.json_item() == other.view.json_item()


def nothing_kept(store: Store) -> None:
    cache = store.storage.cache
    assert not cache._writing and not cache._written


def test_the_entries_of_own_writes_are_those_decoding_gives() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            store = server.stores[CONFIGMAPS]
            created = await store.create(
                "default",
                core.ConfigMap(metadata={"name": "cm", "labels": {"app": "web"}}, data={"a": "1"}),
                WriteOptions(field_manager="test"),
            )
            same(await cached(store, "cm", created.resource_version), await decoded_entry(store, "cm"))

            def relabelled(current: core.ConfigMap | None) -> core.ConfigMap:
                assert current is not None
                new = core.ConfigMap()
                new.CopyFrom(current)
                new.metadata.labels["app"] = "db"
                new.data["b"] = "2"
                return new

            updated, _ = await store.update("default", "cm", relabelled, WriteOptions(field_manager="test"))
            entry = await cached(store, "cm", updated.resource_version)
            assert entry.labels == {"app": "db"}
            same(entry, await decoded_entry(store, "cm"))
            nothing_kept(store)

    run(scenario)


def test_what_the_writer_does_afterwards_is_not_cached() -> None:
    """The writer changing the object it got back (which it should not) changes nothing cached,
    whichever came first, the event or the write's answer."""

    async def scenario() -> None:
        async with running_server() as server:
            store = server.stores[CONFIGMAPS]
            written = await store.create(
                "default", core.ConfigMap(metadata={"name": "kept"}, data={"a": "1"}), WriteOptions()
            )
            written.obj.data["a"] = "changed afterwards"
            written.obj.metadata.labels["late"] = "label"
            entry = await cached(store, "kept", written.resource_version)
            assert entry.labels == {}
            assert dict(entry.view.obj.data) == {"a": "1"}
            same(entry, await decoded_entry(store, "kept"))
            nothing_kept(store)

    run(scenario)


def test_an_event_in_flight_is_made_from_the_object_only_for_the_same_bytes() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            store = server.stores[CONFIGMAPS]
            objects, cache = store.storage.store, store.storage.cache
            key = objects.key("default", "direct")

            def encoded(**data: str) -> tuple[core.ConfigMap, bytes]:
                obj = objects.codec.normalize(core.ConfigMap(metadata={"name": "direct", "namespace": "default"}))
                obj.data.update(data)
                return obj, objects.codec.encode(obj)

            announced, announced_value = encoded(a="announced")
            cache.writing(key, announced_value, announced)
            _, other_value = encoded(a="other")  # someone else's bytes land instead
            revision = await objects.backend.create(key, other_value)
            entry = await cached(store, "direct", revision)
            assert dict(entry.view.obj.data) == {"a": "other"}
            same(entry, await decoded_entry(store, "direct"))
            cache.written(key, announced_value, 0)

            current = entry.view.resource_version
            obj, value = encoded(a="same")
            cache.writing(key, value, obj)
            revision = await objects.backend.update(key, value, current)
            entry = await cached(store, "direct", revision)  # taken from ``obj``, in flight
            assert not cache._writing
            assert entry.view.obj.metadata.resourceVersion == str(revision)
            assert obj.metadata.resourceVersion == ""  # the writer's object is left as it was
            same(entry, await decoded_entry(store, "direct"))
            cache.written(key, value, revision)
            nothing_kept(store)

    run(scenario)


def test_a_failed_write_leaves_nothing() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            store = server.stores[CONFIGMAPS]
            await store.create("default", core.ConfigMap(metadata={"name": "taken"}), WriteOptions())
            with pytest.raises(StatusError):
                await store.create("default", core.ConfigMap(metadata={"name": "taken"}), WriteOptions())
            nothing_kept(store)

    run(scenario)
