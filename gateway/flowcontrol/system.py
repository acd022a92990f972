"""API Priority and Fairness put together for the server: the controller fed by informers, the
maintenance of the bootstrap configuration, the filter, the metrics and the debug routes.

Without the flowcontrol API (--runtime-config), the mandatory configuration alone is in force.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any

from prometheus_client import CollectorRegistry

from protokube.gateway.codecs import kind_codec
from protokube.gateway.controllers.informer import Informer
from protokube.gateway.flowcontrol.bootstrap import MANDATORY_SCHEMAS, SUGGESTED_SCHEMAS
from protokube.gateway.flowcontrol.controller import Controller
from protokube.gateway.flowcontrol.debug import DebugDumps
from protokube.gateway.flowcontrol.filter import MaxInFlight, PriorityAndFairness
from protokube.gateway.flowcontrol.maintenance import Maintenance
from protokube.gateway.flowcontrol.metrics import FlowControlMetrics
from protokube.gateway.flowcontrol.seats import WorkEstimator
from protokube.gateway.health import Check, CheckFailed, ping
from protokube.gateway.lanes import LaneCounts
from protokube.gateway.registry.store import Store
from protokube.gateway.registry.subresources import StatusStore
from protokube.gateway.request import Handler
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.routes import Route
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import GroupVersionKind

GROUP = "flowcontrol.apiserver.k8s.io"
LEVELS = (GROUP, "v1", "prioritylevelconfigurations")
SCHEMAS = (GROUP, "v1", "flowschemas")
PROTO_PACKAGE = "k8s.io.api.flowcontrol.v1"
LEVEL_KIND = (
    GroupVersionKind(GROUP, "v1", "PriorityLevelConfiguration"),
    f"{PROTO_PACKAGE}.PriorityLevelConfiguration",
)
SCHEMA_KIND = (GroupVersionKind(GROUP, "v1", "FlowSchema"), f"{PROTO_PACKAGE}.FlowSchema")


class FlowControl:
    """With ``enabled`` false (--enable-priority-and-fairness=false) only the plain max-in-flight
    limits apply, but the bootstrap configuration is still kept in storage, as upstream does."""

    def __init__(
        self,
        enabled: bool,
        server_limit: tuple[int, int],
        stores: Mapping[tuple[str, str, str], Store],
        cachers: Mapping[tuple[str, str, str], Cacher],
        metrics_registry: CollectorRegistry,
    ) -> None:
        self.enabled = enabled
        self.server_limit = server_limit
        self.cachers = cachers
        self.levels_store, self.schemas_store = stores.get(LEVELS), stores.get(SCHEMAS)
        self.maintenance: Maintenance | None = None
        if self.levels_store is not None and self.schemas_store is not None:
            self.maintenance = Maintenance(self.levels_store, self.schemas_store)
        self.metrics = FlowControlMetrics(metrics_registry) if enabled else None
        if enabled:
            metrics_registry.register(LaneCounts())
        read_only, mutating = server_limit
        codecs = (kind_codec(*LEVEL_KIND), kind_codec(*SCHEMA_KIND))
        self.controller = Controller(read_only + mutating, self.metrics, codecs) if self.metrics else None
        self.estimator = WorkEstimator(self.object_count, self.watch_count)
        self.informers: list[Informer] = []
        if self.controller is not None and self.maintenance is not None:
            self.metrics.set_read_write_limits(read_only, mutating)
            self.informers = [
                Informer(self.maintenance.kinds[0].store, self.controller.stored_levels),
                Informer(self.maintenance.kinds[1].store, self.controller.stored_schemas),
            ]
        self._consuming = False  # the consumer's post-start hook has passed (it then stays passed)

    def wrap(self, handler: Handler) -> Handler:
        if self.controller is None or self.metrics is None:
            return MaxInFlight(handler, *self.server_limit)
        return PriorityAndFairness(handler, self.controller, self.estimator, self.metrics)

    def routes(self) -> dict[tuple[str, ...], Route]:
        return DebugDumps(self.controller).routes() if self.controller is not None else {}

    def object_count(self, group_resource: str) -> int | None:
        for cacher in self.cachers.values():
            if cacher.resource.group_resource == group_resource and cacher.cache.ready.is_set():
                return len(cacher.cache.store)
        return None

    def watch_count(self, info: RequestInfo) -> int:
        cacher = self.cachers.get((info.group, info.version, info.resource))
        return cacher.cache.interested_watchers(info.namespace, info.name) if cacher is not None else 0

    def tasks(self) -> list[Coroutine[Any, Any, None]]:
        """What runs while the server does."""
        found = [self.maintenance.run()] if self.maintenance is not None else []
        if self.controller is not None:
            found += [self.controller.run_borrowing(), self.controller.run_sampling()]
            found += [informer.run() for informer in self.informers]
            if self.schemas_store is not None:
                found.append(self.controller.run_status(StatusStore(self.schemas_store)))
        return found

    def health_checks(self) -> tuple[list[Check], list[Check]]:
        """upstream's post-start hooks: the bootstrap configuration is stored (producer), and this
        server has seen it and written the FlowSchemas' conditions (consumer), so that /readyz
        passes once the server has no more of its own writes to make."""

        async def producer() -> None:
            if self.maintenance is not None and not self.maintenance.done.is_set():
                raise CheckFailed("not finished")

        async def consumer() -> None:
            controller = self.controller
            if self._consuming or self.maintenance is None or controller is None:
                return
            seen = controller.stored_schemas.objects
            bootstrap_seen = (MANDATORY_SCHEMAS.keys() | SUGGESTED_SCHEMAS.keys()) <= seen.keys()
            synced = all(informer.synced.is_set() for informer in self.informers)
            if not (
                self.maintenance.done.is_set() and synced and bootstrap_seen and self.controller.statuses_current()
            ):
                raise CheckFailed("not finished")
            self._consuming = True

        # Where upstream lists them: after the informers start, and after the priority classes.
        early = [
            Check("poststarthook/priority-and-fairness-config-consumer", consumer),
            Check("poststarthook/priority-and-fairness-filter", ping),
        ]
        return early if self.controller else [], [
            Check("poststarthook/priority-and-fairness-config-producer", producer)
        ]
