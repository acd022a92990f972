"""The namespace plugins (k8s.io/apiserver's lifecycle, plugin/pkg/admission/namespace/*):

- NamespaceLifecycle: objects may be created only in an existing namespace that is not being deleted;
- NamespaceExists: every request in a namespace that does not exist is refused (404);
- NamespaceAutoProvision: creating an object in a missing namespace creates the namespace first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protokube.gateway import errors
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.admission import CREATE, DELETE, Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher
from protokube.gateway.watchcache.entries import entry_fields

NAMESPACES = ("", "v1", "namespaces")
IMMORTAL = frozenset({"default", "kube-system", "kube-public"})
PHASE = "status.phase"  # a namespace's selectable field
ACCESS_REVIEWS = frozenset({("authorization.k8s.io", "v1", "localsubjectaccessreviews")})


async def _namespace(namespaces: Cacher, name: str) -> ObjectView | None:
    """The watch cache answers first; storage is asked only when the cache has not seen the
    namespace (it may have been created just now)."""
    return namespaces.cached("", name) or await namespaces.get_latest("", name)


def _in_namespace(attributes: Attributes) -> bool:
    """A request about a namespaced object (not a namespace itself)."""
    return bool(attributes.namespace) and attributes.resource.namespaced


class NamespaceLifecycle:
    """Also: the namespaces the server keeps (default, kube-system, kube-public) may not be deleted;
    access reviews are answered whatever the namespace (saying it does not exist would leak it)."""

    def __init__(self, namespaces: Cacher) -> None:
        self.namespaces = namespaces

    async def validate(self, attributes: Attributes) -> None:
        resource = attributes.resource
        if resource.key == NAMESPACES:
            if attributes.operation == DELETE and attributes.name in IMMORTAL:
                raise forbidden(attributes, "this namespace may not be deleted")
            return
        if attributes.operation == DELETE or not _in_namespace(attributes) or resource.key in ACCESS_REVIEWS:
            return
        name = attributes.namespace
        phase = await self._phase(name)
        if phase is None:
            raise errors.not_found(self.namespaces.resource, name)
        if attributes.operation == CREATE and phase == "Terminating":
            refusal = forbidden(
                attributes, f"unable to create new content in namespace {name} because it is being terminated"
            )
            refusal.status.details.causes.add(
                reason="NamespaceTerminating",
                message=f"namespace {name} is being terminated",
                field="metadata.namespace",
            )
            raise refusal

    async def _phase(self, name: str) -> str | None:
        """The namespace's status.phase (None: there is no such namespace): the cache's entry holds it
        as a selectable field, so a cached namespace is not decoded (every create in it asks)."""
        entry = self.namespaces.cached_entry("", name)
        if entry is not None and PHASE in entry.field_names:
            return entry_fields(entry)[PHASE]
        view = await _namespace(self.namespaces, name)
        return None if view is None else view.obj.status.phase


class NamespaceExists:
    def __init__(self, namespaces: Cacher) -> None:
        self.namespaces = namespaces

    async def validate(self, attributes: Attributes) -> None:
        if _in_namespace(attributes) and await _namespace(self.namespaces, attributes.namespace) is None:
            raise errors.not_found(self.namespaces.resource, attributes.namespace)


class NamespaceAutoProvision:
    """``stores``: the server's stores by key (the namespaces' one is read when a request comes)."""

    def __init__(self, namespaces: Cacher, stores: Mapping[tuple[str, str, str], Any]) -> None:
        self.namespaces = namespaces
        self.stores = stores

    async def admit(self, attributes: Attributes) -> None:
        if attributes.operation != CREATE or not _in_namespace(attributes) or attributes.dry_run:
            return
        name = attributes.namespace
        if await _namespace(self.namespaces, name) is not None:
            return
        store = self.stores[NAMESPACES]
        try:
            await store.create("", store.codec.from_dict({"metadata": {"name": name}}).obj, WriteOptions())
        except errors.StatusError as err:
            if err.code != 409:  # made meanwhile by someone else: fine
                raise forbidden(attributes, err.status.message) from None
