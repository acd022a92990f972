"""The resourcequota controller (kube-controller-manager's pkg/controller/resourcequota): every
ResourceQuota's status.hard is its spec.hard and its status.used what the objects of its
namespace cost (gateway/admission/resourcequota/usage.py).

A quota is recounted when it is made, when its spec.hard changes, every ``resync`` seconds, and
when objects it counts are given back: deleted, or changed so that they cost less (a pod that
ended, a service that is no longer a NodePort or LoadBalancer, a claim of another size) — what
upstream's quota monitor watches. Status is written on condition that the quota did not change
since it was read (the admission plugin charges it meanwhile); a conflict recounts it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Hashable, Iterable, Mapping

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.admission.resourcelist import equal, from_message, mask
from protokube.gateway.admission.resourcequota.evaluators import CORE, IGNORED, Evaluator, evaluator_for
from protokube.gateway.admission.resourcequota.usage import calculate_usage, counted_resource, evaluators
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions, WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.resourcequota")
QUOTAS = ("", "v1", "resourcequotas")
OPTIONS = WriteOptions(field_manager="kube-controller-manager")
RESYNC_PERIOD = 300.0  # --resource-quota-sync-period
DISCOVERY_PERIOD = 30.0  # how often resources named by count/ quotas are looked for (upstream's discovery)
RETRY_DELAY = 0.2
Key = tuple[str, str]  # namespace, name
GroupResource = tuple[str, str]
Stores = Callable[[], Mapping[tuple[str, str, str], Store]]


class Replenishment:
    """A watch of one resource's objects: deletions, and updates that lower what they cost, mark
    the namespace's quotas that count the resource for a recount."""

    def __init__(self, controller: ResourceQuotaController, evaluator: Evaluator) -> None:
        self.controller = controller
        self.evaluator = evaluator
        self.costs: dict[Key, Hashable] = {}  # what an update must change to matter, by object

    def replace(self, views: Iterable[ObjectView]) -> None:
        self.costs = {}
        if self.evaluator.updates_matter:
            for view in views:
                self._remember(view.obj)
        self.controller.replenish(self.evaluator, None)  # deletions missed meanwhile

    def changed(self, event_type: str, view: ObjectView) -> None:
        if event_type != "DELETED" and not self.evaluator.updates_matter:
            return  # an object that is only counted costs the same until it goes (not even decoded)
        meta = view.obj.metadata
        key = (meta.namespace, meta.name)
        if event_type == "DELETED":
            self.costs.pop(key, None)
            self.controller.replenish(self.evaluator, meta.namespace)
            return
        before = self.costs.get(key)
        after = self._remember(view.obj)
        if event_type == "MODIFIED" and before is not None and before != after:
            self.controller.replenish(self.evaluator, meta.namespace)

    def _remember(self, obj: Obj) -> Hashable:
        cost = self.evaluator.replenish_key(obj)
        if cost is not None:
            self.costs[(obj.metadata.namespace, obj.metadata.name)] = cost
        return cost


class ResourceQuotaController:
    def __init__(self, stores: Stores, resync: float = RESYNC_PERIOD) -> None:
        self.stores = stores
        self.resync = resync
        self.quotas: dict[Key, Message] = {}  # as the quotas' informer has them
        self.queue: set[Key] = set()
        self.dirty = asyncio.Event()
        self.monitors: dict[GroupResource, tuple[Store, asyncio.Task[None]]] = {}

    # ---- the quotas' informer sink ----
    def replace(self, views: Iterable[ObjectView]) -> None:
        self.quotas = {(view.obj.metadata.namespace, view.obj.metadata.name): view.obj for view in views}
        self._enqueue(self.quotas)
        self._monitor_resources()

    def changed(self, event_type: str, view: ObjectView) -> None:
        quota = view.obj
        key = (quota.metadata.namespace, quota.metadata.name)
        if event_type == "DELETED":
            self.quotas.pop(key, None)
            return
        old = self.quotas.get(key)
        self.quotas[key] = quota
        # its own status writes do not matter: only a new quota, or new limits
        if old is None or not equal(from_message(old.spec.hard), from_message(quota.spec.hard)):
            self._enqueue([key])
            self._monitor_resources()

    def replenish(self, evaluator: Evaluator, namespace: str | None) -> None:
        """Recount the quotas (of ``namespace``, or all) that limit something ``evaluator`` measures."""
        self._enqueue(
            key
            for key, quota in self.quotas.items()
            if (namespace is None or key[0] == namespace) and evaluator.matching_resources(quota.status.hard)
        )

    def _enqueue(self, keys: Iterable[Key]) -> None:
        before = len(self.queue)
        self.queue.update(keys)
        if len(self.queue) > before:
            self.dirty.set()

    # ---- running ----
    async def run(self) -> None:
        quotas = self.stores().get(QUOTAS)
        if quotas is None:
            return
        informer = asyncio.create_task(Informer(quotas, self).run())
        last_resync = last_discovery = time.monotonic()
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.dirty.wait(), DISCOVERY_PERIOD)
                now = time.monotonic()
                if now - last_discovery >= DISCOVERY_PERIOD:
                    self._monitor_resources()
                    last_discovery = now
                if now - last_resync >= self.resync:
                    self._enqueue(self.quotas)
                    last_resync = now
                await self._work(quotas)
        finally:
            tasks = [informer, *(task for _, task in self.monitors.values())]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _work(self, quotas: Store) -> None:
        self.dirty.clear()
        retry = False
        while self.queue:
            key = self.queue.pop()
            quota = self.quotas.get(key)
            if quota is None:
                continue
            try:
                await self.sync(quotas, quota)
            except (StatusError, StorageError) as err:
                if isinstance(err, StatusError) and err.code == 404:
                    continue
                log.info("resource quota %s/%s: %s", *key, err)
                retry = True
                self.queue.add(key)
                break
        if retry:
            await asyncio.sleep(RETRY_DELAY)
            self.dirty.set()

    def _monitor_resources(self) -> None:
        """Watch every resource the quotas count (the core ones always); drop watches of
        resources no longer served."""
        stores = self._by_group_resource()
        wanted = {group_resource for group_resource in CORE if group_resource in stores}
        for quota in self.quotas.values():
            for name in quota.spec.hard:
                group_resource = counted_resource(name)
                if group_resource is not None and group_resource in stores and group_resource not in IGNORED:
                    wanted.add(group_resource)
        for group_resource, (store, task) in list(self.monitors.items()):
            if stores.get(group_resource) is not store:
                task.cancel()
                del self.monitors[group_resource]
        for group_resource in wanted - self.monitors.keys():
            store = stores[group_resource]
            sink = Replenishment(self, evaluator_for(*group_resource))
            self.monitors[group_resource] = (store, asyncio.create_task(Informer(store, sink).run()))

    def _by_group_resource(self) -> dict[GroupResource, Store]:
        found: dict[GroupResource, Store] = {}
        for (group, _, plural), store in self.stores().items():
            if store.resource.namespaced:
                found.setdefault((group, plural), store)
        return found

    async def sync(self, quotas: Store, quota: Message) -> None:
        """status.hard and status.used recounted, written when they changed."""
        namespace = quota.metadata.namespace
        stores = self._by_group_resource()
        listed: dict[GroupResource, list[Obj] | None] = {}
        for evaluator in evaluators(quota.spec.hard):
            store = stores.get(evaluator.group_resource)
            if store is not None:
                listed[evaluator.group_resource] = [v.obj for v in (await store.list(namespace, ListOptions())).items]
        hard = from_message(quota.spec.hard)
        used = from_message(quota.status.used)
        used.update(calculate_usage(quota, lambda group, plural: listed.get((group, plural))))
        used = mask(used, hard)
        status = quota.status
        if equal(hard, from_message(status.hard)) and equal(used, from_message(status.used)) and status.hard:
            return
        version = quota.metadata.resourceVersion

        def updated(current: Obj | None) -> Obj:
            if current is None:
                raise errors.not_found(quotas.resource, quota.metadata.name)
            new = quotas.codec.copy(current)
            new.metadata.resourceVersion = version
            new.status.ClearField("hard")
            new.status.ClearField("used")
            for name, value in hard.items():
                new.status.hard[name].string = str(value)
            for name, value in used.items():
                new.status.used[name].string = str(value)
            return new

        view, _ = await quotas.guaranteed_update(
            namespace,
            quota.metadata.name,
            updated,
            OPTIONS,
            quotas.strategy.prepare_for_status_update,
            subresource="status",
        )
        self.quotas[(namespace, quota.metadata.name)] = view.obj
