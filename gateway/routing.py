"""Routing: the innermost handler of the chain — a resource verb, or a non-resource endpoint.

A resource request is served by its verb's handler among the routes installed for its (resource,
subresource) (handlers/installer.py). Upstream's answers where there is none: 404 for an unknown
resource or subresource or a path the resource's scope does not allow, 405 for a verb the resource
does not serve.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from protokube.gateway import errors
from protokube.gateway.handlers.installer import Routes
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.negotiate import Formats
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.responses import add_warnings
from protokube.schema.registry import Registry

# Verbs a namespaced resource serves at cluster scope (/api/v1/pods): list and watch only.
CLUSTER_WIDE_VERBS: Final = frozenset({"list", "watch"})
# Verbs of one named object: their methods (PUT, PATCH) have no route on a collection's path.
NAMED_VERBS: Final = frozenset({"update", "patch"})
# (group, version, plural, subresource) → the routes serving it.
RoutesKey = tuple[str, str, str, str]


class Router:
    def __init__(self, registry: Registry, routes: Mapping[RoutesKey, Routes], non_resource: Handler) -> None:
        self.registry = registry
        self.routes = routes  # owned by the API server, which installs and removes routes as resources come and go
        self.non_resource = non_resource

    async def __call__(self, request: ApiRequest) -> Response:
        info = request.info
        assert info is not None
        if not info.is_resource_request:
            return await self.non_resource(request)
        routes = self.routes_of(info)
        handler = routes.handlers.get(info.verb)
        if handler is None or not _has_route(info):
            raise errors.method_not_allowed()
        # a subresource's routes may produce more (pods/log's text); custom resources are served by
        # apiextensions-apiserver's handler, not go-restful's routes
        if not info.subresource and routes.scope.resource.extension is None:
            _check_route_accepts(request.header("Accept"), routes.scope.formats, info)
        response = await handler(request)
        warning = getattr(routes.scope.resource.extension, "warning", "")
        if warning:  # a deprecated version of a custom resource
            add_warnings(response, [warning])
        return response

    def routes_of(self, info: RequestInfo) -> Routes:
        resource = self.registry.resource(info.group, info.version, info.resource)
        if resource is None:
            raise not_found(self.registry, info)
        if resource.namespaced and not info.namespace:
            if info.name:
                raise errors.path_not_found()
            if info.verb not in CLUSTER_WIDE_VERBS:
                raise errors.method_not_allowed()
        if not resource.namespaced and info.namespace and not (info.resource == "namespaces" and info.name):
            raise errors.path_not_found()
        routes = self.routes.get((resource.group, resource.version, resource.plural, info.subresource))
        if routes is None or (info.subpath and not routes.takes_path):
            raise errors.path_not_found()
        verbs = resource.subresources[info.subresource].verbs if info.subresource else resource.verbs
        if info.verb not in verbs:
            raise errors.method_not_supported(resource, info.verb)
        return routes


def not_found(registry: Registry, info: RequestInfo) -> errors.StatusError:
    """A path that names nothing served. Upstream, go-restful's web services of the compiled APIs
    (/api, /apis/GROUP of a built-in group) answer theirs with a Status; any other path (an unknown
    group, a custom resource's group, whose handlers hand it on) reaches the end of the delegation
    chain, Go's text 404."""
    if info.api_prefix == "api" or (
        info.api_prefix == "apis"
        and any(r.extension is None and r.group == info.group for r in registry.resources.values())
    ):
        return errors.path_not_found()
    return errors.page_not_found()


def _check_route_accepts(accept: str | None, formats: Formats, info: RequestInfo) -> None:
    """go-restful's route match on Accept (RouterJSR311, before any handler negotiates): some media
    type of the header, its parameters cut off, must be */* or one the route produces as written
    (the list route: the formats and their watch streams; the others: the formats); else its 406."""
    produces = formats.media_types
    if not info.name and info.verb in CLUSTER_WIDE_VERBS:
        streams = [f"{t};stream=watch" for t in produces if t in (mediatypes.JSON, mediatypes.PROTOBUF)]
        produces = (*produces, *streams, *([mediatypes.CBOR_SEQ] if mediatypes.CBOR in produces else []))
    for clause in (accept or "*/*").split(","):
        media_type = clause.split(";", 1)[0].strip(" ")
        if media_type == "*/*" or media_type in produces:
            return
    message = "406: Not Acceptable\n\nAvailable representations: " + ", ".join(produces)
    raise errors.generic_server_response(406, message)


def _has_route(info: RequestInfo) -> bool:
    """Whether upstream's installer has a route for the method at this path: POST only on a
    collection (or a subresource), PUT and PATCH only on an object; elsewhere go-restful's 405."""
    if info.verb == "create":
        return not info.name or bool(info.subresource)
    return bool(info.name) or info.verb not in NAMED_VERBS
