"""The roles a resource's storage can play, one per verb (upstream's k8s.io/apiserver rest package).

A storage plays the roles it implements — the main resource most of them, a subresource (status,
finalize, …) a few. When the routes are installed (handlers/installer.py) each verb's handler is
bound to the storage typed by the role it needs; a verb whose role the storage does not play gets
no handler. Handlers talk to storage only through these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import DeleteOptions, ListOptions, WriteOptions
from protokube.gateway.watchcache.cacher import Listed, WatchStream
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1.types_pb2 import Status

# The new object from the current one (None when there is none): PUT replaces, PATCH patches,
# apply merges, subresources copy their part in (upstream's UpdatedObjectInfo). May raise.
UpdatedObject = Callable[[Obj | None], Obj]


@dataclass(frozen=True, slots=True)
class DeleteResult:
    view: ObjectView
    # False when the object still exists, marked for deletion (finalizers, graceful deletion).
    deleted: bool


@runtime_checkable
class Storage(Protocol):
    """Every storage: the codec of the objects it takes and returns."""

    codec: Codec


@runtime_checkable
class Getter(Protocol):
    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView: ...


@runtime_checkable
class Lister(Protocol):
    async def list(self, namespace: str, options: ListOptions) -> Listed: ...


@runtime_checkable
class Watcher(Protocol):
    async def watch(self, namespace: str, options: ListOptions, deadline: float) -> WatchStream: ...


@runtime_checkable
class Creater(Protocol):
    """Creates in its collection. Answers with the object, or with a Status when there is none to show
    (the bindings resource)."""

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> ObjectView | Status: ...


@runtime_checkable
class NamedCreater(Protocol):
    """Creates something for a named object — pods/NAME/eviction, pods/NAME/binding (upstream's
    NamedCreater). Answers with an object, or with a Status when there is none to show."""

    async def create_for(self, namespace: str, name: str, obj: Obj, options: WriteOptions) -> ObjectView | Status: ...


class BothCreater(Creater, NamedCreater, Protocol):
    """A storage that creates in its collection and for a named object (bindings)."""


@runtime_checkable
class Connecter(Protocol):
    """A subresource that connects the client to a backend: pods/NAME/log, exec, attach,
    portforward, proxy; nodes and services proxy (upstream's Connecter). Served for the verbs of its
    subresource; a sub-path after it (pods/NAME/proxy/PATH) only where ``takes_path``."""

    takes_path: bool

    async def connect(self, request: Connection) -> None:
        """Returns when there is nothing to send (204); otherwise raises why the backend cannot
        be reached."""


@dataclass(frozen=True, slots=True)
class Connection:
    """What a connect request asks for."""

    namespace: str
    name: str  # as in the URL: pods/proxy and friends take "NAME", "NAME:PORT" or "SCHEME:NAME:PORT"
    path: str  # after the subresource (proxies), or ""
    query: Mapping[str, list[str]]
    upgrade: bool  # asks to switch protocols (exec, attach and port forwarding need that)


@runtime_checkable
class Updater(Protocol):
    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        """Returns the object written and whether it was created (create-on-update)."""


@runtime_checkable
class Applier(Protocol):
    async def apply(
        self, namespace: str, name: str, applied: dict[str, Any], options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        """Server-side apply; returns the object and whether it was created."""


@runtime_checkable
class GracefulDeleter(Protocol):
    async def delete(self, namespace: str, name: str, options: DeleteOptions) -> DeleteResult: ...


@runtime_checkable
class CollectionDeleter(Protocol):
    async def delete_collection(self, namespace: str, options: DeleteOptions, list_options: ListOptions) -> Listed: ...


# What a Connecter serves: every verb an HTTP method maps to but list, watch and deletecollection.
CONNECT_VERBS = frozenset({"get", "create", "update", "patch", "delete"})
