"""Routing: the innermost handler of the chain — a resource verb, or a non-resource endpoint.

A resource request is served by the handler of its verb with the RequestScope of its (resource,
subresource). Upstream's answers where there is none: 404 for an unknown resource or subresource
or a path the resource's scope does not allow, 405 for a verb the resource does not serve.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from quart import Response

from gateway import errors
from gateway.filters import Handler
from gateway.handlers.connect import connect
from gateway.handlers.create import create
from gateway.handlers.delete import delete, delete_collection
from gateway.handlers.get import get
from gateway.handlers.list import list_
from gateway.handlers.patch import patch
from gateway.handlers.update import update
from gateway.handlers.watch import watch
from gateway.registry.rest import Connecter, plays
from gateway.request import ApiRequest
from gateway.requestinfo import RequestInfo
from gateway.responses import add_warnings
from gateway.scope import RequestScope
from protokube.schema.registry import Registry

VerbHandler = Callable[[ApiRequest, RequestScope], Awaitable[Response]]
VERB_HANDLERS: dict[str, VerbHandler] = {
    "get": get,
    "list": list_,
    "watch": watch,
    "create": create,
    "update": update,
    "patch": patch,
    "delete": delete,
    "deletecollection": delete_collection,
}
# Verbs a namespaced resource serves at cluster scope (/api/v1/pods): list and watch only.
CLUSTER_WIDE_VERBS = frozenset({"list", "watch"})
# (group, version, plural, subresource) → the scope serving it.
ScopeKey = tuple[str, str, str, str]


class Router:
    def __init__(self, registry: Registry, scopes: Mapping[ScopeKey, RequestScope], non_resource: Handler) -> None:
        self.registry = registry
        self.scopes = scopes  # owned by the API server, which adds and removes scopes as resources come and go
        self.non_resource = non_resource

    async def __call__(self, request: ApiRequest) -> Response:
        info = request.info
        assert info is not None
        if not info.is_resource_request:
            return await self.non_resource(request)
        scope = self.scope(info)
        handler = connect if plays(scope.storage, Connecter) else VERB_HANDLERS.get(info.verb)
        if handler is None or info.verb not in scope.verbs:
            raise errors.method_not_allowed()
        response = await handler(request, scope)
        warning = getattr(scope.resource.extension, "warning", "")
        if warning:  # a deprecated version of a custom resource
            add_warnings(response, [warning])
        return response

    def scope(self, info: RequestInfo) -> RequestScope:
        resource = self.registry.resource(info.group, info.version, info.resource)
        if resource is None:
            raise errors.path_not_found()
        if resource.namespaced and not info.namespace:
            if info.name:
                raise errors.path_not_found()
            if info.verb not in CLUSTER_WIDE_VERBS:
                raise errors.method_not_allowed()
        if not resource.namespaced and info.namespace and not (info.resource == "namespaces" and info.name):
            raise errors.path_not_found()
        scope = self.scopes.get((resource.group, resource.version, resource.plural, info.subresource))
        if scope is None or (info.subpath and not getattr(scope.storage, "takes_path", False)):
            raise errors.path_not_found()
        verbs = resource.subresources[info.subresource].verbs if info.subresource else resource.verbs
        if info.verb not in verbs:
            raise errors.method_not_supported(resource, info.verb)
        return scope
