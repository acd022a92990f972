"""What a handler needs to serve one resource (upstream's RequestScope), and nothing more.

The composition root builds a scope per (resource, subresource) once; the router hands it to the
verb's handler with the request. A handler reaches storage only through ``storage`` and the roles
it plays (registry/rest.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.negotiation.negotiate import Formats
from gateway.objects.codec import Codec
from gateway.requestinfo import RequestInfo
from protokube.schema.registry import Registry, Resource

if TYPE_CHECKING:
    from gateway.auth.authorization import Authorizer
    from gateway.registry.unsafedelete import UnsafeDeleter


@dataclass(frozen=True, slots=True)
class RequestScope:
    resource: Resource
    subresource: str
    storage: object  # plays the roles of registry/rest.py that ``verbs`` name
    verbs: frozenset[str]  # what this storage can serve
    formats: Formats  # the wire formats this resource is served in
    registry: Registry  # every kind the server knows (to word errors about a body's kind)
    authorizer: Authorizer  # the filter chain's, for what a handler authorizes itself (create on update)
    # Deletes corrupt objects (only with the AllowUnsafeMalformedObjectDeletion gate on).
    unsafe_deleter: UnsafeDeleter | None = None

    @property
    def codec(self) -> Codec:
        return self.storage.codec  # type: ignore[attr-defined]

    def namespace(self, info: RequestInfo) -> str:
        return info.namespace if self.resource.namespaced else ""
