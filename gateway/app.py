"""The gateway: the Quart application, its routing, and the state every request shares.

Every request goes through ``dispatch``: request info from the URL, then either a non-resource
endpoint (discovery, health, metrics) or a resource verb handler. Errors of any kind end in one
place and leave as a metav1.Status; an unexpected exception is logged with the request id and
answered with a 500 that carries no trace.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable

from k8s.io.api.core.v1 import types_pb2 as core
from quart import Quart, Response, request

from gateway import errors
from gateway.context import RequestContext
from gateway.controllers.namespace import NamespaceController
from gateway.errors import StatusError
from gateway.handlers import discovery
from gateway.handlers.create import create
from gateway.handlers.delete import delete, delete_collection
from gateway.handlers.get import get
from gateway.handlers.list import list_
from gateway.handlers.update import update
from gateway.handlers.watch import watch
from gateway.metrics import Metrics
from gateway.negotiation import negotiate
from gateway.negotiation.encoders import JSONEncoder
from gateway.objects import ObjectView
from gateway.params import WriteOptions
from gateway.registry.store import Store
from gateway.requestinfo import RequestInfo, request_info
from gateway.responses import respond, status_response
from gateway.storage.etcd import Etcd, StorageError
from gateway.watchcache.cache import WatchCache
from gateway.watchcache.watcher import BOOKMARK_INTERVAL
from protokube.schema import jsonencode
from protokube.schema.registry import Registry, Resource, registry

log = logging.getLogger("protokube.gateway")

Handler = Callable[[RequestContext], Awaitable[Response]]
VERB_HANDLERS: dict[str, Handler] = {
    "get": get,
    "list": list_,
    "watch": watch,
    "create": create,
    "update": update,
    "delete": delete,
    "deletecollection": delete_collection,
}
# Verbs a namespaced resource serves at cluster scope (/api/v1/pods): list and watch only.
CLUSTER_WIDE_VERBS = frozenset({"list", "watch"})
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


class Gateway:
    """State shared by all requests: the storage connection, a store per resource, metrics."""

    def __init__(
        self,
        etcd: Etcd,
        server_address: str,
        reg: Registry | None = None,
        *,
        watch_cache_window: int = 10_000,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        formats: negotiate.Formats = negotiate.DEFAULT_FORMATS,
    ) -> None:
        self.etcd = etcd
        self.registry = reg or registry()
        self.server_address = server_address
        self.formats = formats
        self.metrics = Metrics()
        self.stores = {
            key: Store(etcd, resource, self.check_namespace) for key, resource in self.registry.resources.items()
        }
        self.caches = {
            key: WatchCache(etcd, resource, self.stores[key].hooks, window=watch_cache_window)
            for key, resource in self.registry.resources.items()
        }
        for key, store in self.stores.items():
            store.cache_lookup = self._cache_lookup(self.caches[key])
        self.bookmark_interval = bookmark_interval
        self.namespaces = self.stores[("", "v1", "namespaces")]
        self.namespace_controller = NamespaceController(self)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        for name in SYSTEM_NAMESPACES:
            try:
                await self.namespaces.create("", core.Namespace(metadata={"name": name}), WriteOptions())
            except StatusError as err:
                if err.code != 409:
                    raise
        self._tasks.append(asyncio.create_task(self.namespace_controller.run()))
        self._tasks += [asyncio.create_task(cache.run()) for cache in self.caches.values()]

    def close_watches(self) -> None:
        """End every watch stream (on shutdown: clients re-establish them elsewhere or later)."""
        for cache in self.caches.values():
            cache.close_watchers()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.etcd.close()

    async def check_namespace(self, namespace: str) -> None:
        """Objects may be created only in an existing namespace that is not being deleted.

        Like upstream's NamespaceLifecycle admission: the watch cache answers first; storage is
        asked only when the cache has not seen the namespace (it may have been created just now).
        """
        cache = self.cache(self.namespaces.resource)
        entry = cache.get("", namespace) if cache.ready.is_set() else None
        view = entry.view if entry is not None else await self.namespaces.get("", namespace)
        if view.message.metadata.HasField("deletionTimestamp"):
            raise errors.new(
                403,
                "Forbidden",
                f"{namespace} is forbidden: unable to create new content in namespace {namespace} "
                "because it is being terminated",
            )

    @staticmethod
    def _cache_lookup(cache: WatchCache) -> Callable[[str, str], ObjectView | None]:
        def lookup(namespace: str, name: str) -> ObjectView | None:
            entry = cache.get(namespace, name) if cache.ready.is_set() else None
            return entry.view if entry is not None else None

        return lookup

    def cache(self, resource: Resource) -> WatchCache:
        return self.caches[(resource.group, resource.version, resource.plural)]

    async def wait_fresh(self, cache: WatchCache) -> int:
        """A consistent read from the cache: wait until it holds storage's current revision."""
        await cache.sync()
        return cache.revision


def _error_encoder() -> negotiate.Encoder:
    """The encoder for an error: the negotiated one when negotiation itself succeeds, else JSON."""
    try:
        return negotiate.response_encoder(request.headers.get("Accept"), False)
    except StatusError:
        return JSONEncoder()


def _resource_context(gateway: Gateway, info: RequestInfo, request_id: str) -> RequestContext:
    resource = gateway.registry.resource(info.group, info.version, info.resource)
    if resource is None:
        raise errors.path_not_found()
    if resource.namespaced and not info.namespace:
        if info.name:
            raise errors.path_not_found()
        if info.verb not in CLUSTER_WIDE_VERBS:
            raise errors.method_not_allowed()
    if not resource.namespaced and info.namespace and not (info.resource == "namespaces" and info.name):
        raise errors.path_not_found()
    if info.subresource:
        # Subresources are routed but not served yet.
        raise errors.path_not_found()
    if info.verb not in resource.verbs:
        raise errors.method_not_supported(resource, info.verb)
    store = gateway.stores[(resource.group, resource.version, resource.plural)]
    return RequestContext(gateway, request, info, resource, store, request_id)


async def _non_resource(gateway: Gateway, info: RequestInfo) -> Response:
    parts = info.parts
    if request.method not in ("GET", "HEAD"):
        raise errors.method_not_allowed()
    if parts in (("healthz",), ("livez",), ("readyz",)):
        return Response(b"ok", status=200, content_type="text/plain; charset=utf-8")
    if parts == ("version",):
        encoder = JSONEncoder(pretty=True)
        return respond(encoder.finish(jsonencode.dumps(discovery.version_info())), 200, encoder)
    if parts == ("metrics",):
        return Response(gateway.metrics.exposition(), 200, content_type="text/plain; version=0.0.4")
    encoder = negotiate.response_encoder(request.headers.get("Accept"), False, gateway.formats)
    if parts == ("api",):
        body = discovery.encode(encoder, discovery.api_versions(gateway.server_address), "APIVersions", False)
    elif parts == ("apis",):
        body = discovery.encode(encoder, discovery.api_group_list(gateway.registry), "APIGroupList")
    elif info.api_prefix == "api" and info.version and not info.group:
        if info.version != "v1":
            raise errors.path_not_found()
        body = discovery.encode(
            encoder, discovery.api_resource_list(gateway.registry, "", "v1"), "APIResourceList", False
        )
    elif info.api_prefix == "apis" and info.group and info.version:
        resource_list = discovery.api_resource_list(gateway.registry, info.group, info.version)
        body = discovery.encode(encoder, resource_list, "APIResourceList")
    elif info.api_prefix == "apis" and info.group:
        body = discovery.encode(encoder, discovery.api_group(gateway.registry, info.group), "APIGroup")
    else:
        raise errors.path_not_found()
    return respond(body, 200, encoder)


def create_app(gateway: Gateway) -> Quart:
    app = Quart(__name__)
    app.config.update(RESPONSE_TIMEOUT=None, BODY_TIMEOUT=60, MAX_CONTENT_LENGTH=None, PROVIDE_AUTOMATIC_OPTIONS=False)

    @app.route("/", defaults={"path": ""}, methods=METHODS)
    @app.route("/<path:path>", methods=METHODS)
    async def dispatch(path: str) -> Response:
        request_id = str(uuid.uuid4())
        try:
            info = request_info(request.method, request.path, request.args.get("watch"))
            if not info.is_resource_request:
                response = await _non_resource(gateway, info)
            else:
                ctx = _resource_context(gateway, info, request_id)
                handler = VERB_HANDLERS.get(info.verb)
                if handler is None:
                    raise errors.method_not_allowed()
                response = await handler(ctx)
        except StatusError as err:
            response = status_response(err, _error_encoder())
        except StorageError as err:
            log.warning("request %s: storage error: %s", request_id, err)
            response = status_response(errors.internal(str(err)), _error_encoder())
        except Exception:
            log.exception("request %s failed", request_id)
            error = errors.internal(
                f"an error on the server (request id {request_id}) has prevented the request from succeeding"
            )
            response = status_response(error, _error_encoder())
        response.headers["Audit-Id"] = request_id
        return response

    return app
