"""What a handler needs to serve one resource (upstream's RequestScope), and nothing more.

The composition root builds a scope per (resource, subresource) once, when it installs the routes
(handlers/installer.py); each verb's handler is bound there to the scope and to the storage typed by
the role that verb needs (registry/rest.py), so a scope carries no storage of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from protokube.gateway.negotiation.negotiate import Formats
from protokube.gateway.objects.codec import Codec
from protokube.gateway.requestinfo import RequestInfo
from protokube.schema.registry import Registry, Resource

if TYPE_CHECKING:
    from protokube.gateway.auth.authorization import Authorizer
    from protokube.gateway.auth.unsafedelete import UnsafeDeleter


@dataclass(frozen=True, slots=True)
class RequestScope:
    resource: Resource
    subresource: str
    codec: Codec  # of the objects the storage takes and returns (a subresource's may be its own kind)
    formats: Formats  # the wire formats this resource is served in
    registry: Registry  # every kind the server knows (to word errors about a body's kind)
    authorizer: Authorizer  # the filter chain's, for what a handler authorizes itself (create on update)
    # Deletes corrupt objects (only with the AllowUnsafeMalformedObjectDeletion gate on).
    unsafe_deleter: UnsafeDeleter | None = None

    def namespace(self, info: RequestInfo) -> str:
        return info.namespace if self.resource.namespaced else ""
