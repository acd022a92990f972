"""The garbage collector (upstream's kube-controller-manager garbagecollector), in the server.

Informers of every served resource keep the graph (gcgraph.py); what the graph says needs
attention goes into a queue that one worker drains, deciding each time from live reads of
storage, never from the graph alone:

- a dependent none of whose owners exists any more (missing, or another object under the name:
  uid mismatch) is deleted — in the policy its own finalizers ask for, Background otherwise;
  references to owners that are gone are removed from dependents that still have an owner;
- a dependent whose owner is deleting in foreground is deleted too (in foreground itself when it
  has dependents), and the owner's foregroundDeletion finalizer goes once no dependent with
  blockOwnerDeletion is left;
- an owner with the orphan finalizer has its reference removed from every dependent, then the
  finalizer.

Its state is what storage holds: after a restart the informers' initial lists bring every object
back into the graph, and the periodic resync finds what is still waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable

from protokube.gateway.controllers.gcgraph import (
    ATTEMPT_DELETE,
    ATTEMPT_ORPHAN,
    Attention,
    Graph,
    Node,
    OwnerRef,
    ResourceKey,
)
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, WriteOptions
from protokube.gateway.registry.deletion import BACKGROUND, FOREGROUND, FOREGROUND_FINALIZER, ORPHAN, ORPHAN_FINALIZER
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError
from protokube.gateway.storage.corrupt import CorruptObject

log = logging.getLogger("protokube.gc")
RESYNC_SECONDS = 30.0  # how often the whole graph is looked over again
RETRY_SECONDS = 1.0  # an item that failed is tried again after this long
MANAGER = "kube-controller-manager"  # the field manager of the collector's writes (upstream's)
# What an owner reference leads to: an owner that keeps the dependent, none (missing, or another
# object under the name), or an owner deleting in foreground that waits for its dependents.
SOLID, DANGLING, WAITING = "solid", "dangling", "waiting"


class Gone(Exception):
    """The object changed identity or went away while the collector was writing it."""


class Feed:
    """An informer's sink: one resource's objects into the graph."""

    def __init__(self, collector: GarbageCollector, resource: ResourceKey) -> None:
        self.collector = collector
        self.resource = resource

    def replace(self, views: Iterable[ObjectView]) -> None:
        nodes = [Node.of(self.resource, view.obj) for view in views]
        self.collector.attend(self.collector.graph.replace(self.resource, nodes))

    def changed(self, event_type: str, view: ObjectView) -> None:
        graph = self.collector.graph
        if event_type == "DELETED":
            self.collector.attend(graph.remove(view.obj.metadata.uid))
        else:
            self.collector.attend(graph.put(Node.of(self.resource, view.obj)))


class GarbageCollector:
    def __init__(self, stores: Callable[[], Iterable[Store]]) -> None:
        self.stores = stores  # every resource's store, as the server serves them now
        self.graph = Graph()
        self._queue: OrderedDict[Attention, None] = OrderedDict()
        self._wake = asyncio.Event()
        self._informers: dict[ResourceKey, tuple[Informer, asyncio.Task[None]]] = {}
        self._by_key: dict[ResourceKey, Store] = {}
        self._resources_changed = asyncio.Event()

    def attend(self, items: Iterable[Attention]) -> None:
        for item in items:
            self._queue[item] = None
        if self._queue:
            self._wake.set()

    # ---- running --------------------------------------------------------------------------------
    async def run(self) -> None:
        worker = asyncio.create_task(self._work())
        try:
            while True:
                self._follow_resources()
                with contextlib.suppress(TimeoutError):  # a resource served or withdrawn: follow it now
                    await asyncio.wait_for(self._resources_changed.wait(), RESYNC_SECONDS)
                self._resources_changed.clear()
                self.attend(self.graph.needing_attention())
        finally:
            worker.cancel()
            for _, task in self._informers.values():
                task.cancel()
            await asyncio.gather(worker, *(task for _, task in self._informers.values()), return_exceptions=True)
            self._informers.clear()
            self.graph = Graph()
            self._queue.clear()

    def resources_changed(self) -> None:
        """The registry changed (a CRD's resources came or went): follow them without waiting."""
        self._resources_changed.set()

    def _follow_resources(self) -> None:
        """An informer per served resource (resources come and go while the server runs)."""
        current = {store.resource.key: store for store in self.stores()}
        for key, store in current.items():
            if key not in self._informers:
                informer = Informer(store, Feed(self, key))
                self._informers[key] = (informer, asyncio.create_task(informer.run()))
        for key in [k for k in self._informers if k not in current]:
            self._informers.pop(key)[1].cancel()
            self.graph.forget(key)
        self._by_key = current

    async def _synced(self) -> None:
        """Decisions about dependents need every resource's objects in the graph."""
        for informer, _ in list(self._informers.values()):
            await informer.synced.wait()

    async def _work(self) -> None:
        while True:
            await self._wake.wait()
            await self._synced()
            while self._queue:
                item, _ = self._queue.popitem(last=False)
                try:
                    await self._attempt(item)
                except (StatusError, StorageError) as err:
                    log.warning("garbage collector: %s %s: %s", *item, err)
                    asyncio.get_running_loop().call_later(RETRY_SECONDS, self.attend, [item])
                except Exception:  # a fault of ours: logged, and the collector goes on with the rest
                    log.exception("garbage collector: %s %s failed", *item)
            self._queue = OrderedDict()  # a dict keeps the table of its largest burst (a relist: every owned object)
            self._wake.clear()

    async def _attempt(self, item: Attention) -> None:
        action, uid = item
        node = self.graph.nodes.get(uid)
        store = self._by_key.get(node.resource) if node is not None else None
        if node is None or store is None:
            return
        try:
            latest = await store.storage.get_latest(node.namespace, node.name)
        except CorruptObject:
            return  # unreadable now: left for an unsafe delete
        if latest is None or latest.obj.metadata.uid != uid:
            return  # gone: the informer tells the graph soon
        if action == ATTEMPT_ORPHAN:
            await self._orphan_dependents(node, store, latest.obj)
        else:
            await self._attempt_delete(node, store, latest.obj)

    # ---- decisions ------------------------------------------------------------------------------
    async def _attempt_delete(self, node: Node, store: Store, obj: Obj) -> None:
        meta = obj.metadata
        if meta.HasField("deletionTimestamp"):
            if FOREGROUND_FINALIZER in meta.finalizers:
                await self._wait_for_dependents(node, store)
            return
        refs = [OwnerRef.of(ref) for ref in meta.ownerReferences]
        if not refs:
            return
        states: dict[str, list[OwnerRef]] = {SOLID: [], DANGLING: [], WAITING: []}
        for ref in refs:
            states[await self._owner_state(ref, node)].append(ref)
        solid, dangling, waiting = states[SOLID], states[DANGLING], states[WAITING]
        if solid:
            if dangling or waiting:  # only the owners still there keep it
                gone = {ref.uid for ref in dangling + waiting}
                await self._update(store, node, lambda o: _drop_owner_refs(o, gone))
            return
        if waiting and next(self.graph.dependents(node), None) is not None:
            await self._delete(store, node, FOREGROUND)  # its own dependents first, then it
            return
        if ORPHAN_FINALIZER in meta.finalizers:
            policy = ORPHAN
        elif FOREGROUND_FINALIZER in meta.finalizers:
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        await self._delete(store, node, policy)

    async def _owner_state(self, ref: OwnerRef, dependent: Node) -> str:
        """DANGLING (no such owner), WAITING (deleting in foreground) or SOLID."""
        owner_store = self._store_of(ref)
        if owner_store is None:
            return SOLID  # a kind not served: nothing can be decided (upstream retries forever)
        if owner_store.resource.namespaced and not dependent.namespace:
            return SOLID  # a cluster-scoped dependent cannot name a namespaced owner: unresolvable
        namespace = dependent.namespace if owner_store.resource.namespaced else ""
        known = self.graph.nodes.get(ref.uid)
        if known is not None and not known.deleting and (known.namespace, known.name) == (namespace, ref.name):
            return SOLID  # the graph has it, alive: no read needed
        try:
            latest = await owner_store.storage.get_latest(namespace, ref.name)
        except CorruptObject:
            return SOLID  # an owner that cannot be read may still be there
        if latest is None or latest.obj.metadata.uid != ref.uid:
            return DANGLING
        meta = latest.obj.metadata
        return WAITING if meta.HasField("deletionTimestamp") and FOREGROUND_FINALIZER in meta.finalizers else SOLID

    def _store_of(self, ref: OwnerRef) -> Store | None:
        group, _, version = ref.api_version.rpartition("/")
        candidates = [s for s in self._by_key.values() if s.resource.group == group and s.resource.kind == ref.kind]
        exact = [s for s in candidates if s.resource.version == version]
        found = exact or candidates
        return found[0] if found else None

    async def _wait_for_dependents(self, node: Node, store: Store) -> None:
        """Foreground deletion: remove the finalizer once no blocking dependent is left."""
        blocking = self.graph.blocking(node)
        if blocking:
            self.attend((ATTEMPT_DELETE, d.uid) for d in blocking if not d.deleting)
            return
        await self._update(store, node, lambda o: _drop_finalizer(o, FOREGROUND_FINALIZER))

    async def _orphan_dependents(self, node: Node, store: Store, obj: Obj) -> None:
        meta = obj.metadata
        if not meta.HasField("deletionTimestamp") or ORPHAN_FINALIZER not in meta.finalizers:
            return
        for dependent in list(self.graph.dependents(node)):
            dependent_store = self._by_key.get(dependent.resource)
            if dependent_store is not None:
                await self._update(dependent_store, dependent, lambda o: _drop_owner_refs(o, {node.uid}))
        await self._update(store, node, lambda o: _drop_finalizer(o, ORPHAN_FINALIZER))

    # ---- writes ---------------------------------------------------------------------------------
    async def _update(self, store: Store, node: Node, change: Callable[[Obj], None]) -> None:
        """Change the object as it is now (if it is still the node's object)."""

        def updated(current: Obj | None) -> Obj:
            if current is None or current.metadata.uid != node.uid:
                raise Gone()
            obj = store.codec.copy(current)
            change(obj)
            return obj

        with contextlib.suppress(Gone):
            try:
                await store.update(node.namespace, node.name, updated, WriteOptions(field_manager=MANAGER))
            except StatusError as err:
                if err.code != 404:
                    raise

    async def _delete(self, store: Store, node: Node, policy: str) -> None:
        log.info(
            "garbage collector deletes %s %s/%s (%s)", store.resource.group_resource, node.namespace, node.name, policy
        )
        options = DeleteOptions(propagation_policy=policy, preconditions=True, precondition_uid=node.uid)
        try:
            await store.delete(node.namespace, node.name, options)
        except StatusError as err:
            if err.code not in (404, 409):  # gone, or another object under the name now
                raise


def _drop_owner_refs(obj: Obj, uids: set[str]) -> None:
    refs = obj.metadata.ownerReferences
    for index in reversed(range(len(refs))):
        if refs[index].uid in uids:
            del refs[index]


def _drop_finalizer(obj: Obj, finalizer: str) -> None:
    kept = [f for f in obj.metadata.finalizers if f != finalizer]
    del obj.metadata.finalizers[:]
    obj.metadata.finalizers.extend(kept)
