"""Which storage serves each subresource, and the storage of the create-only bindings resource.

Most subresource storages work on their parent's store alone; some reach other resources' stores
(an eviction reads PodDisruptionBudgets, pods/log finds the pod's Node), which they look up in the
live table of stores when a request comes, so that the order stores are built in does not matter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from protokube.gateway.codecs import kind_codec
from protokube.gateway.objects.codec import Codec
from protokube.gateway.registry.approval import ApprovalStore
from protokube.gateway.registry.binding import BindingStore
from protokube.gateway.registry.connect import LogStore, NodeProxyStore, PodProxyStore, ServiceProxyStore, StreamStore
from protokube.gateway.registry.eviction import EvictionStore
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import (
    EphemeralContainersStore,
    FinalizeStore,
    ScalePaths,
    ScaleStore,
    StatusStore,
)
from protokube.schema.registry import Resource, Subresource

Key = tuple[str, str, str]
PODS: Key = ("", "v1", "pods")
NODES: Key = ("", "v1", "nodes")
SERVICES: Key = ("", "v1", "services")
ENDPOINTS: Key = ("", "v1", "endpoints")
BINDINGS: Key = ("", "v1", "bindings")
BUDGETS: Key = ("policy", "v1", "poddisruptionbudgets")
# Storages that write part of their parent, by subresource name (any resource).
PARENT_PARTS: dict[str, Callable[[Store], object]] = {
    "status": StatusStore,
    "finalize": FinalizeStore,
    "approval": ApprovalStore,
}


Later = Callable[[Key], Callable[[], Store | None]]
# The pods' own subresources: (pod store, subresource codec, lookup of other stores) → storage.
POD_PARTS: dict[str, Callable[[Store, Codec, Later], object]] = {
    "eviction": lambda pods, codec, later: EvictionStore(pods, codec, later(BUDGETS)),
    "binding": lambda pods, codec, later: BindingStore(pods, codec),
    "log": lambda pods, codec, later: LogStore(pods, later(NODES), codec),
    "exec": lambda pods, codec, later: StreamStore(pods, later(NODES), codec),
    "attach": lambda pods, codec, later: StreamStore(pods, later(NODES), codec),
    "portforward": lambda pods, codec, later: StreamStore(pods, later(NODES), codec, names_container=False),
    "proxy": lambda pods, codec, later: PodProxyStore(pods, later(NODES), codec),
    "ephemeralcontainers": lambda pods, codec, later: EphemeralContainersStore(pods),
}


def subresource_storage(
    resource: Resource, sub: Subresource, store: Store, stores: Mapping[Key, Store]
) -> object | None:
    """The storage of one subresource of ``resource`` (whose store is ``store``); None if none serves it."""

    def later(key: Key) -> Callable[[], Store | None]:
        return lambda: stores.get(key)

    codec: Codec = store.codec if sub.gvk == resource.gvk else kind_codec(sub.gvk, sub.message)
    if sub.name in PARENT_PARTS:
        return PARENT_PARTS[sub.name](store)
    if sub.name == "scale":  # a CRD's version names where its replicas are
        return ScaleStore(store, codec, getattr(resource.extension, "scale", None) or ScalePaths())
    if resource.key == PODS and sub.name in POD_PARTS:
        return POD_PARTS[sub.name](store, codec, later)
    if (resource.key, sub.name) == (NODES, "proxy"):
        return NodeProxyStore(store, codec)
    if (resource.key, sub.name) == (SERVICES, "proxy"):
        return ServiceProxyStore(store, later(ENDPOINTS), later(PODS), codec)
    return None


def virtual_storage(resource: Resource, codec: Codec, stores: Mapping[Key, Store]) -> object | None:
    """The storage of a resource without objects of its own that writes others' (bindings: pods)."""
    pods = stores.get(PODS)
    if resource.key == BINDINGS and pods is not None:
        return BindingStore(pods, codec)
    return None
