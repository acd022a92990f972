"""guaranteed_update, the one retry loop every writer uses (upstream's GuaranteedUpdate), on the
in-memory backend: conflicts retried from a fresh read, stale guesses checked before answering,
refusals and errors leave storage untouched, no-ops write nothing, removal and dry-run."""

from __future__ import annotations

import asyncio

import pytest

from protokube.gateway import errors
from protokube.gateway.codecs import codec_for
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.storage.memory import MemoryBackend
from protokube.gateway.storage.objectstore import ObjectStore, Removal
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core
from protokube.schema.registry import registry

from .stack import run, running_server

CONFIGMAPS = registry().resource("", "v1", "configmaps")


def configmap(name: str, **data: str) -> core.ConfigMap:
    return core.ConfigMap(metadata={"name": name, "namespace": "default"}, data=data)


async def seeded(backend: MemoryBackend, **data: str) -> tuple[ObjectStore, ObjectView]:
    store = ObjectStore(backend, CONFIGMAPS, codec_for(CONFIGMAPS))
    first = await store.create("default", store.codec.normalize(configmap("cm", **data)))
    return store, first


def with_data(view: ObjectView | None, **data: str) -> core.ConfigMap:
    assert view is not None
    obj = view.copy()
    obj.data.update(data)
    return obj


def test_conflict_is_retried_from_a_fresh_read() -> None:
    """Someone else writes between our read and our write: our transform runs again on their result."""

    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        calls: list[dict[str, str]] = []

        async def add_b(current: ObjectView | None) -> core.ConfigMap:
            assert current is not None
            calls.append(dict(current.obj.data))
            if len(calls) == 1:  # the other writer lands first
                other = with_data(current, c="3")
                await backend.update(store.key("default", "cm"), store.codec.encode(other), current.resource_version)
            return with_data(current, b="2")

        result = await store.guaranteed_update("default", "cm", add_b)
        assert calls == [{"a": "1"}, {"a": "1", "c": "3"}]
        assert dict(result.view.obj.data) == {"a": "1", "b": "2", "c": "3"}
        stored = await store.get("default", "cm")
        assert stored is not None and dict(stored.obj.data) == {"a": "1", "b": "2", "c": "3"}
        assert result.view.resource_version == stored.resource_version == first.resource_version + 2

    run(scenario)


def test_a_stale_guess_costs_a_retry_not_a_lost_update() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        newer = await store.guaranteed_update("default", "cm", lambda cur: _const(with_data(cur, a="2")))
        seen: list[int] = []

        async def add(current: ObjectView | None) -> core.ConfigMap:
            assert current is not None
            seen.append(current.resource_version)
            return with_data(current, b="x")

        result = await store.guaranteed_update("default", "cm", add, cached=first)  # the guess is one write old
        assert seen == [first.resource_version, newer.view.resource_version]
        assert dict(result.view.obj.data) == {"a": "2", "b": "x"}

    run(scenario)


def test_a_refused_guess_is_checked_with_storage_before_answering() -> None:
    """A precondition fails on the cache's stale copy but holds for storage's: the write lands."""

    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        newer = (await store.guaranteed_update("default", "cm", lambda cur: _const(with_data(cur, a="2")))).view

        async def only_at_newer(current: ObjectView | None) -> core.ConfigMap:
            assert current is not None
            if current.resource_version != newer.resource_version:
                raise errors.conflict(CONFIGMAPS, "cm", errors.OBJECT_MODIFIED)
            return with_data(current, b="ok")

        result = await store.guaranteed_update("default", "cm", only_at_newer, cached=first)
        assert dict(result.view.obj.data) == {"a": "2", "b": "ok"}

    run(scenario)


def test_a_failed_precondition_is_answered_and_nothing_is_written() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        writes, revision = backend.writes, backend.revision

        async def wants_old_version(current: ObjectView | None) -> core.ConfigMap:
            raise errors.conflict(CONFIGMAPS, "cm", errors.OBJECT_MODIFIED)

        with pytest.raises(errors.StatusError) as raised:
            await store.guaranteed_update("default", "cm", wants_old_version, cached=first)
        assert raised.value.code == 409
        assert (backend.writes, backend.revision) == (writes, revision)

    run(scenario)


def test_a_transform_error_leaves_storage_untouched() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        store, _ = await seeded(backend, a="1")
        writes = backend.writes

        async def broken(current: ObjectView | None) -> core.ConfigMap:
            raise ValueError("the transform failed")

        with pytest.raises(ValueError, match="the transform failed"):
            await store.guaranteed_update("default", "cm", broken)
        assert backend.writes == writes
        stored = await store.get("default", "cm")
        assert stored is not None and dict(stored.obj.data) == {"a": "1"}

    run(scenario)


def test_a_no_op_writes_nothing_and_keeps_the_resource_version() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        writes = backend.writes
        result = await store.guaranteed_update("default", "cm", lambda cur: _const(with_data(cur)), cached=first)
        assert backend.writes == writes and result.view.resource_version == first.resource_version

    run(scenario)


def test_a_no_op_on_a_current_guess_is_confirmed_without_running_the_transform_again() -> None:
    """The guess would change nothing and storage shows it current: one read confirms it, and the
    transform (a patch's whole computation) does not run a second time on the same object."""

    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        writes = backend.writes
        seen: list[int] = []

        async def unchanged(current: ObjectView | None) -> core.ConfigMap:
            assert current is not None
            seen.append(current.resource_version)
            return with_data(current)

        result = await store.guaranteed_update("default", "cm", unchanged, cached=first)
        assert seen == [first.resource_version]
        assert backend.writes == writes and result.view.resource_version == first.resource_version

    run(scenario)


def test_a_no_op_on_a_stale_guess_runs_again_on_storage_s_copy() -> None:
    """The guess would change nothing but storage holds a newer object: the transform runs on that
    one, and its change is written."""

    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        newer = (await store.guaranteed_update("default", "cm", lambda cur: _const(with_data(cur, a="2")))).view
        seen: list[int] = []

        async def a_is_1(current: ObjectView | None) -> core.ConfigMap:
            assert current is not None
            seen.append(current.resource_version)
            return with_data(current, a="1")

        result = await store.guaranteed_update("default", "cm", a_is_1, cached=first)
        assert seen == [first.resource_version, newer.resource_version]
        assert dict(result.view.obj.data) == {"a": "1"} and result.view.resource_version > newer.resource_version

    run(scenario)


async def cached_copy(backend: MemoryBackend, store: ObjectStore) -> ObjectView:
    """The object as the watch cache holds it: a view of the stored bytes decoded once, which keeps
    only the protobuf bytes (watchcache/cache.py and entries.py)."""
    kv, _ = await backend.get(store.key("default", "cm"))
    assert kv is not None
    cached = ObjectView(store.codec, kv.mod_revision, value=kv.value, keep_object=False)
    cached.decode_once()
    return cached


def test_a_no_op_on_the_watch_cache_s_copy_writes_nothing() -> None:
    """A guess that keeps only protobuf bytes is compared as the stored bytes would be: the same
    object (whatever resourceVersion it carries) writes nothing, one other label is written."""

    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        writes = backend.writes

        def same(current: ObjectView | None) -> core.ConfigMap:
            obj = with_data(current)
            obj.metadata.resourceVersion = ""  # as a PUT without one
            return obj

        result = await store.guaranteed_update(
            "default", "cm", lambda cur: _const(same(cur)), cached=await cached_copy(backend, store)
        )
        assert backend.writes == writes and result.view.resource_version == first.resource_version

        def labelled(current: ObjectView | None) -> core.ConfigMap:
            obj = with_data(current)
            obj.metadata.labels["x"] = "y"
            return obj

        changed = await store.guaranteed_update(
            "default", "cm", lambda cur: _const(labelled(cur)), cached=await cached_copy(backend, store)
        )
        assert backend.writes == writes + 1 and changed.view.resource_version > first.resource_version
        assert dict(changed.view.obj.metadata.labels) == {"x": "y"}

    run(scenario)


def test_removal_dry_run_and_creation() -> None:
    async def scenario() -> None:
        backend = MemoryBackend()
        store, first = await seeded(backend, a="1")
        dry = await store.guaranteed_update("default", "cm", lambda cur: _const(Removal()), dry_run=True)
        assert dry.removed and await store.get("default", "cm") is not None
        removed = await store.guaranteed_update("default", "cm", lambda cur: _const(Removal()), cached=first)
        assert removed.removed and removed.view.resource_version == first.resource_version
        assert await store.get("default", "cm") is None

        async def create_if_absent(current: ObjectView | None) -> core.ConfigMap:
            assert current is None
            return store.codec.normalize(configmap("cm", fresh="yes"))

        created = await store.guaranteed_update("default", "cm", create_if_absent)
        assert created.created and dict(created.view.obj.data) == {"fresh": "yes"}

    run(scenario)


def test_concurrent_updates_through_the_registry_all_land() -> None:
    """Twenty unconditional updates racing on one object, each adding its own key: none is lost."""

    async def scenario() -> None:
        backend = MemoryBackend()
        async with running_server(backend) as server:
            configmaps = server.stores[CONFIGMAPS.key]
            await configmaps.create("default", configmap("shared"), WriteOptions())

            def adding(key: str):
                def updated(current: core.ConfigMap | None) -> core.ConfigMap:
                    assert current is not None
                    new = configmaps.codec.copy(current)
                    new.metadata.resourceVersion = ""
                    new.data[key] = "1"
                    return new

                return updated

            await asyncio.gather(
                *(configmaps.update("default", "shared", adding(f"k{i}"), WriteOptions()) for i in range(20))
            )
            final = await configmaps.get("default", "shared", None)
            assert sorted(final.obj.data) == sorted(f"k{i}" for i in range(20))
            assert backend.conflicts > 0  # they did race

    run(scenario)


async def _const(value: object) -> object:
    return value
