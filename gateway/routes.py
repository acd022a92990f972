"""The endpoints that are not resources: /version, health, /metrics, discovery and OpenAPI.

Exact paths map to their handler; below /openapi, the OpenAPI documents; below /api and /apis, a
path that names no resource is a discovery document (/api/v1, /apis/GROUP, /apis/GROUP/VERSION).
Everything else is a 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from protokube.gateway import debugflags, errors
from protokube.gateway.handlers import aggregated, discovery
from protokube.gateway.handlers.aggregated import AggregatedDiscovery
from protokube.gateway.health import HealthEndpoint
from protokube.gateway.metrics import Metrics
from protokube.gateway.negotiation import negotiate
from protokube.gateway.negotiation.encoders import JSONEncoder
from protokube.gateway.negotiation.negotiate import Encoder, Formats
from protokube.gateway.openapi.handler import OpenAPIRoutes
from protokube.gateway.openapi.service import OpenAPIService
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import respond
from protokube.gateway.routing import not_found
from protokube.schema import jsonencode
from protokube.schema.registry import Registry

Route = Callable[[ApiRequest], Awaitable[Response]]
READ_METHODS = ("GET", "HEAD")


async def version(request: ApiRequest) -> Response:
    encoder = JSONEncoder(pretty=True)
    return respond(request, encoder.finish(jsonencode.dumps(discovery.version_info())), 200, encoder)


class NonResourceRoutes:
    def __init__(
        self,
        registry: Registry,
        server_address: str,
        metrics: Metrics,
        formats: Formats,
        health: dict[str, HealthEndpoint],
        stored: discovery.Stored,
        extra: Mapping[tuple[str, ...], Route] | None = None,
        posts: Mapping[tuple[str, ...], Route] | None = None,
    ) -> None:
        self.registry = registry
        self.stored = stored
        self.aggregated = AggregatedDiscovery(registry)
        self.server_address = server_address
        self.metrics = metrics
        self.formats = formats
        self.openapi = OpenAPIRoutes(OpenAPIService(registry))
        self.exact: dict[tuple[str, ...], Route] = {
            ("version",): version,
            ("metrics",): self.metrics_text,
            ("api",): self.api_versions,
            ("apis",): self.api_group_list,
        }
        for name, endpoint in health.items():
            self.exact[(name,)] = endpoint
            for check in endpoint.checks:
                self.exact[(name, *check.name.split("/"))] = endpoint.single(check)
        self.exact.update(extra or {})  # e.g. /debug/api_priority_and_fairness/...
        self.exact[()] = self.exact[("index.html",)] = self.root_paths
        self.posts = dict(posts or {})  # the few endpoints that take a body (/debug/wire/decode)
        self.any_method = debugflags.routes()  # endpoints that answer every method themselves

    async def __call__(self, request: ApiRequest) -> Response:
        assert request.info is not None
        parts = request.info.parts
        post = self.posts.get(parts)
        if post is not None and request.method == "POST":
            return await post(request)
        any_method = self.any_method.get(parts)
        if any_method is not None:
            return await any_method(request)
        if request.method not in READ_METHODS:
            raise errors.method_not_allowed()
        route = self.exact.get(request.info.parts)
        if route is not None:
            return await route(request)
        if request.info.parts[:1] == ("openapi",):
            return await self.openapi(request)
        return await self.discovery(request)

    async def root_paths(self, request: ApiRequest) -> Response:
        """``/`` and ``/index.html``: the paths served, as upstream's index lists them (the debug
        endpoints, which upstream leaves out, excepted)."""
        paths = {"/" + "/".join(parts) for parts in self.exact if parts and parts[0] not in ("debug", "index.html")}
        paths.update(("/api/v1", "/apis/", "/openapi/v2", "/openapi/v3", "/openapi/v3/"))
        for group, version, _ in self.registry.resources:
            if group:
                paths.update((f"/apis/{group}", f"/apis/{group}/{version}"))
        encoder = JSONEncoder(pretty=True)
        return respond(request, encoder.finish(jsonencode.dumps({"paths": sorted(paths)})), 200, encoder)

    def _encoder(self, request: ApiRequest) -> Encoder:
        return negotiate.response_encoder(request.header("Accept"), False, self.formats)

    async def metrics_text(self, request: ApiRequest) -> Response:
        return Response(self.metrics.exposition(), 200, content_type="text/plain; version=0.0.4")

    async def api_versions(self, request: ApiRequest) -> Response:
        want = aggregated.wanted(request.header("Accept"), self.formats)
        if want is not None:
            return self._aggregated(request, aggregated.CORE, want)
        encoder = self._encoder(request)
        body = discovery.encode(encoder, discovery.api_versions(self.server_address), "APIVersions", False)
        return respond(request, body, 200, encoder)

    async def api_group_list(self, request: ApiRequest) -> Response:
        want = aggregated.wanted(request.header("Accept"), self.formats)
        if want is not None:
            return self._aggregated(request, aggregated.GROUPS, want)
        encoder = self._encoder(request)
        return respond(
            request, discovery.encode(encoder, discovery.api_group_list(self.registry), "APIGroupList"), 200, encoder
        )

    def _aggregated(self, request: ApiRequest, document: str, want: aggregated.Wanted) -> Response:
        encoder = self.formats.encoder(want.media_type, request.pretty)
        return self.aggregated.respond(request, document, want, encoder)

    async def discovery(self, request: ApiRequest) -> Response:
        """/api/v1, /apis/GROUP and /apis/GROUP/VERSION."""
        info = request.info
        assert info is not None
        encoder = self._encoder(request)
        try:
            if info.api_prefix == "api" and info.version and not info.group:
                if info.version != "v1":
                    raise errors.path_not_found()
                resource_list = discovery.api_resource_list(self.registry, "", "v1", self.stored)
                body = discovery.encode(encoder, resource_list, "APIResourceList", False)
            elif info.api_prefix == "apis" and info.group and info.version:
                resource_list = discovery.api_resource_list(self.registry, info.group, info.version, self.stored)
                body = discovery.encode(encoder, resource_list, "APIResourceList")
            elif info.api_prefix == "apis" and info.group:
                body = discovery.encode(encoder, discovery.api_group(self.registry, info.group), "APIGroup")
            else:
                raise errors.path_not_found()
        except errors.StatusError as err:
            if err.code == 404:
                raise not_found(self.registry, info) from None
            raise
        return respond(request, body, 200, encoder)
