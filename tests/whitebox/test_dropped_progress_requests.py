"""Consistent reads against a storage that drops progress requests, as etcd 3.6 does: a request
made while the watcher catches up, or while nothing was written since the watch started
(storage/mvcc/watchable_store.go progressIfSync), gets no answer at all. The watch cache asks again
and confirms by storage's current revision, so reads neither hang nor time out (with an answer
awaited per request, `protokube serve --storage` against etcd 3.6.4 never became ready)."""

from __future__ import annotations

import asyncio

import pytest

from protokube.gateway.storage.memory import MemoryBackend, MemoryWatch
from protokube.gateway.watchcache.cache import TooLargeResourceVersion
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from tests.whitebox.stack import run, running_server

CONFIGMAPS = ("", "v1", "configmaps")


class DroppingWatch(MemoryWatch):
    """etcd 3.6's rule: no answer while nothing was written since the watch started; and none to the
    first ``catching_up`` requests, as to a watcher that is not yet synced."""

    def __init__(self, backend: DroppingBackend, start: bytes, end: bytes, start_revision: int) -> None:
        super().__init__(backend, start, end, start_revision)
        self.catching_up = backend.catching_up
        self.asked = 0
        self.drop_next = 0  # requests to drop from now on, whenever they come

    def request_progress(self) -> None:
        self.asked += 1
        if self.drop_next:
            self.drop_next -= 1
            return
        if self.asked > self.catching_up and self.backend.revision >= self.start_revision:
            super().request_progress()


class DroppingBackend(MemoryBackend):
    def __init__(self, catching_up: int) -> None:
        super().__init__()
        self.catching_up = catching_up
        self.watches: list[DroppingWatch] = []

    def watch(self, start: bytes, end: bytes, start_revision: int) -> DroppingWatch:
        made = DroppingWatch(self, start, end, start_revision)
        self.watches.append(made)
        return made


def consistent_reads(backend: DroppingBackend) -> tuple[int, int]:
    """Start a server on ``backend``, read consistently from a cache, write a ConfigMap through its
    object store (not through the cache), read again: the revision the cache then has, and the write's."""

    async def scenario() -> tuple[int, int]:
        async with running_server(backend) as server:
            cacher = server.cachers[CONFIGMAPS]
            before = backend.revision
            await cacher.cache.sync(2.0)  # nothing written meanwhile: confirmed by the revision
            assert cacher.cache.revision >= before
            late = core.ConfigMap(metadata=meta.ObjectMeta(name="late", namespace="default"))
            stored = (await cacher.store.create("default", late)).resource_version
            await cacher.cache.sync(2.0)  # must see the write acknowledged before it
            return cacher.cache.revision, stored

    return run(scenario)


def test_dropped_requests_are_asked_again() -> None:
    backend = DroppingBackend(catching_up=3)
    served, written = consistent_reads(backend)
    assert served >= written
    assert max(w.asked for w in backend.watches) > 3  # asked again after the dropped ones


def test_answered_requests_confirm_as_before() -> None:
    backend = DroppingBackend(catching_up=0)
    served, written = consistent_reads(backend)
    assert served >= written


def test_a_reader_that_gives_up_leaves_the_others_waiting() -> None:
    """Two readers wait for the same unanswered request: the one whose wait ends first gets
    TooLargeResourceVersion, and its giving up cancels nothing of the other's, which is confirmed
    when the cache asks again."""
    backend = DroppingBackend(catching_up=0)

    async def scenario() -> None:
        async with running_server(backend) as server:
            cache = server.cachers[CONFIGMAPS].cache
            await cache.sync(2.0)  # the server's own first reads (a controller's) are answered by now
            for watch in backend.watches:
                watch.drop_next = 1  # the readers' request is dropped, the retry answered
            patient = asyncio.create_task(cache.sync(5.0))
            with pytest.raises(TooLargeResourceVersion):
                await cache.sync(0.02)  # gathered with the patient one, gives up before the retry
            await patient

    run(scenario)
