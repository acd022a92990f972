"""The composition root: every part of the API server, built once, and the Quart app that serves it.

From the storage backend and the resource registry it builds, per resource, the storage layers
(object store → watch cache → Cacher), the generic registry store and its subresource storages,
and their routes (each verb's handler bound to the storage typed by its role); then the router, the
filter chain around it, and the controllers. When the registry gains or loses a resource while the
server runs, its storage, watch cache and routes come and go with it. Nothing outside this module
and the CLI builds these parts or imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from quart import Quart

# The validation of the kinds whose rules compile CEL or read APF's bounds lives with the layer that
# owns them (gateway/layers.py); importing it registers it into registry/validation's table.
import protokube.gateway.admission.policy.validation as policy_validation  # noqa: F401
import protokube.gateway.admission.webhook.validation as webhook_validation  # noqa: F401
import protokube.gateway.apiextensions.validation as crd_validation  # noqa: F401
import protokube.gateway.flowcontrol.validation as apf_validation  # noqa: F401
from protokube.gateway.admission import chain
from protokube.gateway.admission.context import PluginContext
from protokube.gateway.admission.options import AdmissionSettings, default_admission
from protokube.gateway.apiextensions.controller import CustomResourceDefinitionController
from protokube.gateway.apiextensions.serving import CustomResourceServing
from protokube.gateway.asgi import mount
from protokube.gateway.auth.authentication import (
    AudienceAgnostic,
    Authenticator,
    BearerToken,
    ClientCertificate,
    InsecurePort,
    TokenAuthenticator,
    TokenFile,
    Tokens,
)
from protokube.gateway.auth.authorization import AlwaysAllow, AlwaysDeny, Authorizer, Privileged, Union
from protokube.gateway.auth.bootstrap import policy as bootstrap_policy
from protokube.gateway.auth.bootstrap.reconcile import reconcile_policy
from protokube.gateway.auth.escalation import RBACEscalation
from protokube.gateway.auth.rbac import RBAC_GROUP, RBACIndex
from protokube.gateway.auth.rbacfeed import RBAC_KINDS, KindFeed
from protokube.gateway.auth.reviews import Review, review_answers
from protokube.gateway.auth.tokens import discovery as issuer_discovery
from protokube.gateway.auth.tokens.authenticator import ServiceAccountTokens
from protokube.gateway.auth.tokens.objects import Objects
from protokube.gateway.auth.tokens.request import Issuer, TokenRequestStore
from protokube.gateway.auth.tokens.review import TokenReviewStore
from protokube.gateway.auth.unsafedelete import UnsafeDeleter
from protokube.gateway.codecs import codec_for, kind_codec
from protokube.gateway.controllers import bootstrap, selection
from protokube.gateway.controllers.admissionpolicystatus import AdmissionPolicyStatus
from protokube.gateway.controllers.clusterroleaggregation import ClusterRoleAggregation
from protokube.gateway.controllers.garbagecollector import GarbageCollector
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.controllers.kubernetesservice import ensure_kubernetes_service
from protokube.gateway.controllers.leaderelection import DEFAULT_TIMING, LeaderElector
from protokube.gateway.controllers.leadertiming import LeaderElection
from protokube.gateway.controllers.namespace import NamespaceController
from protokube.gateway.controllers.resourcequota import ResourceQuotaController
from protokube.gateway.controllers.rootcapublisher import RootCAPublisher
from protokube.gateway.controllers.selection import ControllerSelection
from protokube.gateway.controllers.serviceaccounts import ServiceAccountsController
from protokube.gateway.controllers.storageprotection import storage_protection
from protokube.gateway.controllers.tokens import TokensController
from protokube.gateway.errors import StatusError
from protokube.gateway.filters.chain import build_handler_chain
from protokube.gateway.filters.timeout import MIN_REQUEST_TIMEOUT, REQUEST_TIMEOUT
from protokube.gateway.flowcontrol.system import FlowControl
from protokube.gateway.handlers.installer import Routes, install
from protokube.gateway.health import Check, CheckFailed, HealthEndpoint, StorageProbe, ping
from protokube.gateway.metrics import Metrics, RequestLabels
from protokube.gateway.negotiation.negotiate import DEFAULT_FORMATS, Formats
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.allocators.flags import DEFAULT_NODE_PORTS, DEFAULT_SERVICE_CIDR
from protokube.gateway.registry.allocators.service import ServiceAllocator
from protokube.gateway.registry.componentstatus import ComponentStatuses
from protokube.gateway.registry.kinds import strategy_for
from protokube.gateway.registry.ownership import Ownership
from protokube.gateway.registry.rest import Storage
from protokube.gateway.registry.services import SERVICE, ServiceStore
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import FinalizeStore
from protokube.gateway.registry.substorages import subresource_storage, virtual_storage
from protokube.gateway.routes import NonResourceRoutes
from protokube.gateway.routing import Router, RoutesKey
from protokube.gateway.scope import RequestScope
from protokube.gateway.storage.backend import Backend
from protokube.gateway.storage.objectstore import ObjectStore
from protokube.gateway.watchcache.cache import WatchCache
from protokube.gateway.watchcache.cacher import Cacher
from protokube.gateway.watchcache.entries import Selectable
from protokube.gateway.watchcache.watcher import BOOKMARK_INTERVAL
from protokube.gateway.webhooks.client import Caller
from protokube.gateway.websocket import WebSocketApi
from protokube.schema.registry import ADDED, Registry, Resource

if TYPE_CHECKING:
    from protokube.gateway.storage.encryption.config import Encryption

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
NAMESPACES = ("", "v1", "namespaces")
COMPONENT_STATUSES = ("", "v1", "componentstatuses")
PRIORITY_CLASSES = ("scheduling.k8s.io", "v1", "priorityclasses")
APISERVICES = ("apiregistration.k8s.io", "v1", "apiservices")
SERVICES = ("", "v1", "services")
ENDPOINTS = ("", "v1", "endpoints")
ENDPOINT_SLICES = ("discovery.k8s.io", "v1", "endpointslices")
LEASES = ("coordination.k8s.io", "v1", "leases")
CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
VALIDATING_ADMISSION_POLICIES = ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
TOKEN_REVIEWS = ("authentication.k8s.io", "v1", "tokenreviews")
SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")
CONFIGMAPS = ("", "v1", "configmaps")
CONTROLLERS_LEASE = "protokube-controller-manager"
STORAGE_CHECK_TIMEOUT = 1.0
# The checks /readyz has that /healthz and /livez have not.
log = logging.getLogger("protokube.gateway")
READINESS_ONLY = ("etcd-readiness", "informer-sync", "shutdown")


@dataclass(frozen=True, slots=True)
class Settings:
    watch_cache_window: int = 10_000  # recent events each watch cache keeps
    bookmark_interval: float = BOOKMARK_INTERVAL  # seconds between periodic watch bookmarks
    formats: Formats = DEFAULT_FORMATS  # the wire formats served (CBOR behind its feature gate)
    anonymous_auth: bool = True  # requests without credentials act as system:anonymous
    token_file: TokenFile | None = None  # --token-auth-file
    service_account_tokens: Issuer | None = None  # signs and checks service account tokens (off: None)
    root_ca: bytes = b""  # the cluster CA: legacy token Secrets' ca.crt, every namespace's kube-root-ca.crt
    authorization_modes: tuple[str, ...] = ("RBAC",)  # --authorization-mode, in order
    encryption: Encryption | None = None  # --encryption-provider-config
    request_timeout: float = REQUEST_TIMEOUT  # --request-timeout, seconds (0: none)
    min_request_timeout: float = MIN_REQUEST_TIMEOUT  # --min-request-timeout: watches last [1, 2) times this
    identity: str = "protokube"  # this gateway's name in leader election (unique among gateways)
    leader_election: LeaderElection = DEFAULT_TIMING
    controllers: ControllerSelection = selection.DEFAULT  # --controllers (kube-controller-manager's)
    max_requests_inflight: int = 400  # read-only seats (with the next: APF's server limit)
    max_mutating_requests_inflight: int = 200
    priority_and_fairness: bool = True  # --enable-priority-and-fairness
    unsafe_corrupt_object_deletion: bool = False  # the AllowUnsafeMalformedObjectDeletion feature gate
    service_cluster_ip_range: str = DEFAULT_SERVICE_CIDR  # --service-cluster-ip-range
    service_node_port_range: str = DEFAULT_NODE_PORTS  # --service-node-port-range
    debug_wire: bool = False  # --enable-debug-wire: the wire explorer at /debug/wire
    admission: AdmissionSettings | None = None  # the admission flags (None: the default plugins)
    feature_gates: frozenset[str] = frozenset()  # the --feature-gates that are on (the gated bootstrap RBAC policy)


def health_endpoints(checks: dict[str, Check]) -> dict[str, HealthEndpoint]:
    """/healthz and /livez: every check but the readiness-only ones; /readyz: all of them."""
    live = [c for name, c in checks.items() if name not in READINESS_ONLY]
    return {
        "healthz": HealthEndpoint("healthz", live),
        "livez": HealthEndpoint("livez", live),
        "readyz": HealthEndpoint("readyz", list(checks.values())),
    }


class APIServer:
    def __init__(self, backend: Backend, server_address: str, registry: Registry, settings: Settings) -> None:
        self.backend = backend
        self.server_address = server_address
        self.registry = registry
        self.settings = settings
        self.metrics = Metrics(object_counts=self._object_counts, served=self._served)
        self.rbac = RBACIndex()
        self.authorizer = self._authorizer()
        self.stores: dict[tuple[str, str, str], Store] = {}
        self.objects = Objects(self.stores)
        self.tokens = self._tokens()
        # Resources answered without storage of their own (reviews, component statuses), by key.
        self.computed = self._computed_storages(registry)
        self.cachers = {
            r.key: self._cacher(r) for r in registry.resources.values() if not r.virtual and r.key not in self.computed
        }
        admission = settings.admission or default_admission()
        context = PluginContext(self.cachers, self.stores, self.authorizer, registry, admission.configuration)
        self.admission, self.admission_plugins = chain.build(
            list(admission.plugins), context, first=(RBACEscalation(self.authorizer, self.rbac),)
        )
        self.service_allocator = ServiceAllocator(
            backend, settings.service_cluster_ip_range, settings.service_node_port_range
        )
        self.routes: dict[RoutesKey, Routes] = {}
        for resource in sorted(registry.resources.values(), key=lambda r: r.virtual):  # virtual ones use others
            self._serve(resource)
        self._cache_tasks: dict[tuple[str, str, str], asyncio.Task[None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._started = self._shutting_down = False
        self.bootstrapped = asyncio.Event()  # the post-start hooks' objects are made
        registry.subscribe(self._registry_changed)

        rbac_stores = {kind: self.stores.get((RBAC_GROUP, "v1", plural)) for kind, plural in RBAC_KINDS.items()}
        self.informers = [Informer(store, KindFeed(self.rbac, kind)) for kind, store in rbac_stores.items() if store]
        crds = self.stores.get(CRDS)
        if crds is not None:  # every gateway serves the CRDs' resources
            self.informers.append(Informer(crds, CustomResourceServing(registry)))

        inflight = (settings.max_requests_inflight, settings.max_mutating_requests_inflight)
        self.flow_control = FlowControl(
            settings.priority_and_fairness, inflight, self.stores, self.cachers, self.metrics.registry
        )
        health = health_endpoints(self._health_checks())
        self._health_paths: frozenset[str] = frozenset(  # for _served
            f"/{name}{suffix}"
            for name, endpoint in health.items()
            for suffix in ("", *(f"/{check.name}" for check in endpoint.checks))
        )
        extra = self.flow_control.routes()
        issuer = settings.service_account_tokens
        if issuer is not None:
            jwks_uri = issuer.jwks_uri or f"https://{server_address}/openid/v1/jwks"
            extra.update(issuer_discovery.routes(issuer.issuer, jwks_uri, issuer.keys))
        posts = {}
        if settings.debug_wire:
            from protokube.gateway.wireexplorer import routes as wireexplorer  # with --enable-debug-wire only

            extra.update(wireexplorer.get_routes())
            posts.update(wireexplorer.post_routes(registry))
        non_resource = NonResourceRoutes(
            registry,
            server_address,
            self.metrics,
            settings.formats,
            health,
            stored=lambda r: r.key in self.cachers,
            extra=extra,
            posts=posts,
        )
        router = Router(registry, self.routes, non_resource)
        self.handler = build_handler_chain(
            router,
            formats=settings.formats,
            metrics=self.metrics,
            authenticators=self._authenticators(),
            anonymous=settings.anonymous_auth,
            authorizer=self.authorizer,
            flow_control=self.flow_control.wrap,
            request_timeout=settings.request_timeout,
            min_request_timeout=settings.min_request_timeout,
        )
        namespaces = self.stores[NAMESPACES]
        self.namespace_controller = NamespaceController(namespaces, FinalizeStore(namespaces), self.stores.values)
        self.garbage_collector = GarbageCollector(self.stores.values)
        enabled = settings.controllers.enabled
        controllers = [
            run
            for name, run in (
                (selection.NAMESPACE, self.namespace_controller.run),
                (selection.GARBAGE_COLLECTOR, self.garbage_collector.run),
                (selection.RESOURCE_QUOTA, ResourceQuotaController(lambda: self.stores).run),
            )
            if enabled(name)
        ]
        accounts, configmaps = self.stores.get(SERVICE_ACCOUNTS), self.stores.get(CONFIGMAPS)
        if accounts is not None and enabled(selection.SERVICE_ACCOUNT):
            controllers.append(ServiceAccountsController(namespaces, accounts).run)
        if configmaps is not None and settings.root_ca and enabled(selection.ROOT_CA_PUBLISHER):
            controllers.append(RootCAPublisher(namespaces, configmaps, settings.root_ca).run)
        controllers += storage_protection(self.stores, enabled)
        cluster_roles = self.stores.get((RBAC_GROUP, "v1", "clusterroles"))
        if cluster_roles is not None and enabled(selection.CLUSTER_ROLE_AGGREGATION):
            controllers.append(ClusterRoleAggregation(cluster_roles).run)
        policies = self.stores.get(VALIDATING_ADMISSION_POLICIES)
        if policies is not None:
            controllers.append(AdmissionPolicyStatus(policies, registry).run)
        if crds is not None:
            controllers.append(CustomResourceDefinitionController(crds, registry, lambda: self.stores).run)
        if settings.service_account_tokens is not None and enabled(selection.SERVICE_ACCOUNT_TOKEN):
            controllers.append(TokensController(self.objects, settings.service_account_tokens, settings.root_ca).run)
        # The controllers kube-controller-manager would run: once per cluster, in the elected gateway.
        self.elector = LeaderElector(
            self.stores.get(LEASES), CONTROLLERS_LEASE, settings.identity, controllers, settings.leader_election
        )

    # ---- building --------------------------------------------------------------------------------
    def _cacher(self, resource: Resource) -> Cacher:
        codec = codec_for(resource)
        objects = ObjectStore(self._storage_for(resource), resource, codec, self.metrics.storage(resource))
        strategy = strategy_for(resource, codec)
        selectable = Selectable(resource.selectable_fields[2:], strategy.field_values)
        cache = WatchCache(objects, selectable, window=self.settings.watch_cache_window)
        return Cacher(
            objects,
            cache,
            bookmark_interval=self.settings.bookmark_interval,
            watchers=self.metrics.watches(resource),
        )

    def _storage_for(self, resource: Resource) -> Backend:
        """The backend as the resource's stored objects see it: encrypted if configured so, converted by a
        CRD's conversion webhook."""
        encryption = self.settings.encryption
        stored_group = resource.storage_kind.gvk.group if resource.storage_kind else resource.group
        transformers = encryption and encryption.for_resource(stored_group, resource.plural)
        backend = self.backend
        if transformers:
            from protokube.gateway.storage.encryption.backend import EncryptedBackend  # configured: cryptography, nacl

            backend = EncryptedBackend(self.backend, transformers)
        if resource.extension is not None:  # a CRD's version: converted by its webhook, if it has one
            backend = resource.extension.storage(resource, backend, Caller(self.cachers))
        return backend

    def _serve(self, resource: Resource) -> None:
        """The registry store of a resource, its subresource storages, and their routes."""
        if resource.virtual or resource.key in self.computed:
            storage = self.computed.get(resource.key) or virtual_storage(resource, codec_for(resource), self.stores)
            if storage is not None:
                self._install(resource, "", storage, resource.verbs)
            return
        cacher = self.cachers[resource.key]
        strategy = strategy_for(resource, cacher.codec)
        ownership = Ownership.of(resource, cacher.codec, strategy.status_is_separate)
        if resource.message == SERVICE:
            store: Store = ServiceStore(cacher, strategy, self.admission, ownership, self.service_allocator)
        else:
            store = Store(cacher, strategy, self.admission, ownership)
        self.stores[resource.key] = store
        unsafe_deleter = UnsafeDeleter(store, self.authorizer) if self.settings.unsafe_corrupt_object_deletion else None
        self._install(resource, "", store, resource.verbs, unsafe_deleter)
        for name, sub in resource.subresources.items():
            storage: Storage | None
            if name == "token" and self.settings.service_account_tokens is not None:
                codec = kind_codec(sub.gvk, sub.message)
                storage = TokenRequestStore(codec, self.settings.service_account_tokens, self.objects)
            else:
                storage = subresource_storage(resource, sub, store, self.stores)
            if storage is not None:
                self._install(resource, name, storage, sub.verbs)

    def _install(
        self,
        resource: Resource,
        subresource: str,
        storage: Storage,
        verbs: tuple[str, ...],
        unsafe_deleter: UnsafeDeleter | None = None,
    ) -> None:
        """The routes of a resource or subresource: its scope, and its storage bound to the handlers
        of the verbs it declares by the roles the storage plays."""
        scope = RequestScope(
            resource=resource,
            subresource=subresource,
            codec=storage.codec,
            formats=self.settings.formats.for_codec(storage.codec.protobuf),
            registry=self.registry,
            authorizer=self.authorizer,
            unsafe_deleter=unsafe_deleter,
        )
        self.routes[(*resource.key, subresource)] = install(scope, storage, verbs)

    def _tokens(self) -> Tokens:
        """The bearer token authenticators: the token file, then service account tokens."""
        issuer = self.settings.service_account_tokens
        audiences = issuer.api_audiences if issuer is not None else ()
        found: list[TokenAuthenticator] = []
        token_file = self.settings.token_file
        if token_file is not None:
            found.append(AudienceAgnostic(token_file, audiences) if audiences else token_file)
        if issuer is not None:
            found.append(ServiceAccountTokens(issuer.keys, issuer.issuers, audiences, self.objects))
        return Tokens(found, audiences)

    def _authenticators(self) -> list[Authenticator]:
        return [InsecurePort(), ClientCertificate(), BearerToken(self.tokens)]

    def _computed_storages(self, registry: Registry) -> dict[tuple[str, str, str], Storage]:
        found: dict[tuple[str, str, str], Storage] = {}
        for key, answer in review_answers(self.authorizer).items():
            if key in registry.resources:
                resource = registry.resources[key]
                codec = codec_for(resource)
                found[key] = Review(codec, answer, Ownership.of(resource, codec, status_is_separate=False))
        reviews = registry.resources.get(TOKEN_REVIEWS)
        if reviews is not None:
            found[TOKEN_REVIEWS] = TokenReviewStore(codec_for(reviews), self.tokens)
        statuses = registry.resources.get(COMPONENT_STATUSES)
        if statuses is not None:
            found[COMPONENT_STATUSES] = ComponentStatuses(statuses, codec_for(statuses), self.backend.current_revision)
        return found

    def _authorizer(self) -> Authorizer:
        """system:masters first, then the --authorization-mode list (upstream's order)."""
        modes: dict[str, Authorizer] = {"RBAC": self.rbac, "AlwaysAllow": AlwaysAllow(), "AlwaysDeny": AlwaysDeny()}
        return Privileged(Union([modes[mode] for mode in self.settings.authorization_modes]))

    def _served(self, labels: RequestLabels) -> bool:
        """Whether a request's metric labels name what this server serves (see Metrics)."""
        if labels.resource:
            resource = self.registry.resource(labels.group, labels.version, labels.resource)
            return resource is not None and (not labels.subresource or labels.subresource in resource.subresources)
        return not labels.subresource or labels.subresource in self._health_paths

    def _object_counts(self) -> dict[str, int]:
        """apiserver_storage_objects: what each ready watch cache holds."""
        return {c.resource.group_resource: len(c.cache.store) for c in self.cachers.values() if c.cache.ready.is_set()}

    def _health_checks(self) -> dict[str, Check]:

        async def informers_synced() -> None:
            waiting = sorted(c.resource.group_resource for c in self.cachers.values() if not c.cache.ready.is_set())
            if waiting:
                raise CheckFailed(f"{len(waiting)} informers not started yet: {waiting}")

        async def started() -> None:
            if not self._started:
                raise CheckFailed("not finished")

        async def bootstrapped() -> None:
            if not self.bootstrapped.is_set():
                raise CheckFailed("not finished")

        async def running() -> None:
            if self._shutting_down:
                raise CheckFailed("process is shutting down")

        flow_control_early, flow_control_late = self.flow_control.health_checks()
        checks = [
            Check("ping", ping),
            Check("log", ping),
            Check("etcd", StorageProbe(self.backend.current_revision, STORAGE_CHECK_TIMEOUT)),
            Check("etcd-readiness", StorageProbe(self.backend.current_revision, STORAGE_CHECK_TIMEOUT)),
            Check("informer-sync", informers_synced),
            Check("poststarthook/generic-apiserver-start-informers", started),
            *flow_control_early,
            Check("poststarthook/start-system-namespaces-controller", started),
            Check("poststarthook/scheduling/bootstrap-system-priority-classes", bootstrapped),
            Check("poststarthook/rbac/bootstrap-roles", bootstrapped),
            *flow_control_late,
            Check("autoregister-completion", bootstrapped),
            Check("shutdown", running),
        ]
        return {check.name: check for check in checks}

    def _registry_changed(self, change: str, resource: Resource) -> None:
        """A resource added or removed while the server runs: storage, cache, routes and the garbage
        collector's informers follow."""
        self.garbage_collector.resources_changed()
        if change == ADDED:
            cacher = self.cachers[resource.key] = self._cacher(resource)
            self._serve(resource)
            if self._started:
                self._cache_tasks[resource.key] = asyncio.create_task(cacher.run())
            return
        for key in [k for k in self.routes if k[:3] == resource.key]:
            del self.routes[key]
        self.stores.pop(resource.key, None)
        cacher = self.cachers.pop(resource.key, None)
        task = self._cache_tasks.pop(resource.key, None)
        if task is not None:
            task.cancel()
        if cacher is not None:
            cacher.close_watchers()

    # ---- running ---------------------------------------------------------------------------------
    async def start(self) -> None:
        # At once: storage commits them together, one round trip on the way to readyz instead of four.
        await asyncio.gather(*(self._system_namespace(name) for name in SYSTEM_NAMESPACES))
        self._started = True
        for key, cacher in self.cachers.items():
            self._cache_tasks[key] = asyncio.create_task(cacher.run())
        self._tasks.append(asyncio.create_task(self.elector.run()))
        self._tasks.append(asyncio.create_task(self._bootstrap()))
        self._tasks += [asyncio.create_task(informer.run()) for informer in self.informers]
        self._tasks += [asyncio.create_task(task) for task in self.flow_control.tasks()]

    async def _system_namespace(self, name: str) -> None:
        namespaces = self.stores[NAMESPACES]
        obj = namespaces.codec.new()
        obj.metadata.name = name
        with contextlib.suppress(StatusError):  # 409: it exists already
            await namespaces.create("", obj, WriteOptions())

    async def _bootstrap(self) -> None:
        """The post-start hooks' objects, once the watch caches serve (retried while storage is away).
        The hooks run at once, as upstream's do (each on its own goroutine)."""
        while True:
            results = await asyncio.gather(
                self._kubernetes_service(), self._priority_classes(), self._apiservices(), self._bootstrap_roles(),
                return_exceptions=True,
            )  # fmt: skip
            for result in results:
                if isinstance(result, BaseException) and not isinstance(result, StatusError):
                    raise result
            failed = [result for result in results if isinstance(result, StatusError)]
            if failed:
                log.warning("bootstrap objects not made yet: %s", failed[0].status.message)
                await asyncio.sleep(1)
                continue
            self.bootstrapped.set()
            return

    async def _kubernetes_service(self) -> None:
        services = self.stores.get(SERVICES)
        if isinstance(services, ServiceStore):
            await services.repair()
            await ensure_kubernetes_service(
                services,
                self.stores.get(ENDPOINTS),
                self.stores.get(ENDPOINT_SLICES),
                self.service_allocator.ips.address(0),
                self.server_address,
            )

    async def _priority_classes(self) -> None:
        priority_classes = self.stores.get(PRIORITY_CLASSES)
        if priority_classes is not None:
            await bootstrap.ensure_system_priority_classes(priority_classes)

    async def _apiservices(self) -> None:
        apiservices = self.stores.get(APISERVICES)
        if apiservices is not None:
            await bootstrap.ensure_local_apiservices(apiservices, self.registry)

    async def _bootstrap_roles(self) -> None:
        rbac = {plural: self.stores.get((RBAC_GROUP, "v1", plural)) for plural in RBAC_KINDS.values()}
        await reconcile_policy(bootstrap_policy(self.settings.feature_gates), rbac)

    def close_watches(self) -> None:
        """On shutdown: /readyz fails from now on, and every watch stream ends (their clients
        re-establish them elsewhere or later)."""
        self._shutting_down = True
        for cacher in self.cachers.values():
            cacher.close_watchers()

    async def stop(self) -> None:
        await self.elector.release()
        tasks = [*self._tasks, *self._cache_tasks.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.backend.close()


def create_app(server: APIServer) -> Quart:
    """The Quart app that hosts the server (its lifespan, the scopes that are not the API's), with the
    API mounted at the ASGI level in front of it."""
    app = Quart(__name__)
    mount(app, server.handler, WebSocketApi(server.handler))
    return app
