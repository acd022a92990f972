"""NamespaceLifecycle: objects may be created only in an existing namespace that is not being deleted."""

from __future__ import annotations

from gateway import errors
from gateway.admission import CREATE, Attributes
from gateway.storage.cacher import Cacher


class NamespaceLifecycle:
    def __init__(self, namespaces: Cacher) -> None:
        self.namespaces = namespaces

    async def validate(self, attributes: Attributes) -> None:
        """The watch cache answers first; storage is asked only when the cache has not seen the
        namespace (it may have been created just now)."""
        if attributes.operation != CREATE or not attributes.resource.namespaced or attributes.subresource:
            return
        name = attributes.namespace
        view = self.namespaces.cached("", name) or await self.namespaces.get_latest("", name)
        if view is None:
            raise errors.not_found(self.namespaces.resource, name)
        if view.obj.metadata.HasField("deletionTimestamp"):
            raise errors.new(
                403,
                "Forbidden",
                f"{name} is forbidden: unable to create new content in namespace {name} because it is being terminated",
            )
