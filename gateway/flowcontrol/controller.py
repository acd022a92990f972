"""The configuration in force: priority levels and FlowSchemas as stored, kept current by two
informers (upstream's APF config controller, k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go).

Every change rebuilds the matching order and the levels' limits at once; a level keeps its queues
across changes, and one that disappears keeps serving what it holds until idle. Missing mandatory
objects are stood in for by their bootstrap versions. FlowSchemas whose level does not exist are
left out of matching and get the condition ``Dangling=True`` (``False`` once it exists).
Borrowing between levels is recomputed every 10 s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from protokube.gateway.errors import StatusError
from protokube.gateway.flowcontrol import bootstrap
from protokube.gateway.flowcontrol.concurrency import (
    BORROWING_ADJUSTMENT_PERIOD,
    Borrower,
    Limits,
    SeatDemand,
    nominal_limits,
    rebalance,
)
from protokube.gateway.flowcontrol.matching import Schema, compile_schema, flow_hash, in_matching_order
from protokube.gateway.flowcontrol.metrics import (
    EXECUTING,
    FlowControlMetrics,
    FlowMetrics,
    LevelObserver,
    RatioedGauge,
    request_kind,
)
from protokube.gateway.flowcontrol.queueset import EXEMPT_QUEUES, QueueSet
from protokube.gateway.flowcontrol.seats import WorkEstimate, fixed_estimate, level_max_seats
from protokube.gateway.objects.codec import Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import now_seconds
from protokube.gateway.registry.subresources import StatusStore
from protokube.gateway.request import prepared_header
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.storage.backend import StorageError
from protokube.gateway.user import UserInfo

log = logging.getLogger("protokube.flowcontrol")
STATUS_FIELD_MANAGER: Final = "api-priority-and-fairness-config-consumer-v1"
DEFAULT_SHARES: Final = 30
DEFAULT_QUEUES: Final = 64
DEFAULT_HAND_SIZE: Final = 8
DEFAULT_QUEUE_LENGTH_LIMIT: Final = 50
SAMPLE_PERIOD: Final = 0.1
WATERMARK_PERIOD: Final = 1.0
CLASSIFIED_CACHE: Final = 4096
FLOW_SCHEMA_UID: Final = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_UID: Final = "X-Kubernetes-PF-PriorityLevel-UID"


@dataclass(frozen=True, slots=True)
class LevelConfig:
    """A PriorityLevelConfiguration's spec as the controller uses it (upstream's defaults applied)."""

    name: str
    uid: str
    exempt: bool
    shares: int
    lendable: int | None
    borrowing: int | None
    queues: int  # 0: Reject; -1: exempt
    hand_size: int = 1
    queue_length_limit: int = 0


def level_config(obj: Obj) -> LevelConfig | None:
    """None for a level this server cannot run (type and name disagree about being exempt)."""
    spec, meta = obj.spec, obj.metadata
    if (spec.type == "Exempt") != (meta.name == bootstrap.EXEMPT):
        return None
    if spec.type == "Exempt":
        exempt = spec.exempt
        lendable = exempt.lendablePercent if exempt.HasField("lendablePercent") else None
        return LevelConfig(meta.name, meta.uid, True, exempt.nominalConcurrencyShares, lendable, None, EXEMPT_QUEUES)
    limited = spec.limited
    shares = limited.nominalConcurrencyShares if limited.HasField("nominalConcurrencyShares") else DEFAULT_SHARES
    lendable = limited.lendablePercent if limited.HasField("lendablePercent") else None
    borrowing = limited.borrowingLimitPercent if limited.HasField("borrowingLimitPercent") else None
    response = limited.limitResponse
    if response.type != "Queue":
        return LevelConfig(meta.name, meta.uid, False, shares, lendable, borrowing, 0)
    queuing = response.queuing
    return LevelConfig(
        meta.name,
        meta.uid,
        False,
        shares,
        lendable,
        borrowing,
        queuing.queues or DEFAULT_QUEUES,
        queuing.handSize or DEFAULT_HAND_SIZE,
        queuing.queueLengthLimit or DEFAULT_QUEUE_LENGTH_LIMIT,
    )


class Level:
    """A priority level in force: its configuration, queues, seats and metrics."""

    def __init__(self, config: LevelConfig, observer: LevelObserver, demand: SeatDemand) -> None:
        self.config = config
        self.demand = demand
        self.observer = observer
        self.queues = QueueSet(config.name, observer)
        observer.watch_virtual_time(lambda: self.queues.virtual_time)
        self.limits = Limits()
        self.max_seats = 0  # 0: the estimator's own maximum
        self.quiescing = False

    @property
    def name(self) -> str:
        return self.config.name

    def apply(self, config: LevelConfig, limits: Limits) -> None:
        self.config = config
        self.limits = limits
        if config.queues > 0:
            self.max_seats = level_max_seats(limits.nominal, config.hand_size)
        self.queues.configure(config.queues, config.hand_size, config.queue_length_limit)
        self.queues.set_limit(limits.current)
        self.observer.configured(limits, max(config.queues, 0) * config.queue_length_limit)


class Route:
    """A classification as the filter uses it, made once per remembered classification (the
    configuration in force then): the schema, its level, its flow's metrics, the response headers
    naming both, the verb's kind with its gauge of executing requests and its execution histogram,
    the flow's distinguisher, hash (shuffle sharding's) and key (the queue set's), and the work
    estimate when the verb and kind of target decide it. The key of a classification holds all
    these depend on (the user's name, the namespace...)."""

    __slots__ = (
        "distinguisher",
        "estimate",
        "executing",
        "execution",
        "exempt",
        "flow",
        "flow_key",
        "hash_value",
        "headers",
        "kind",
        "level",
        "response_headers",
        "schema",
        "watch",
    )

    def __init__(
        self, schema: Schema, level: Level, user: UserInfo, info: RequestInfo, metrics: FlowControlMetrics
    ) -> None:
        verb = info.verb
        self.schema = schema
        self.level = level
        self.flow: FlowMetrics = level.observer.flow(schema.name)
        self.headers = ((FLOW_SCHEMA_UID, schema.uid), (PRIORITY_LEVEL_UID, level.config.uid))
        self.response_headers = tuple(prepared_header(name, value) for name, value in self.headers)
        self.kind = request_kind(verb)
        self.executing: RatioedGauge = metrics.read_write[(EXECUTING, self.kind)]
        self.distinguisher, self.hash_value = "", 0
        if level.config.queues > 1:  # with one queue (or none) there is nothing to shard
            self.distinguisher = schema.flow_distinguisher(user, info)
            self.hash_value = flow_hash(schema.name, self.distinguisher)
        self.flow_key = (schema.name, self.distinguisher)  # the queue set's name of the flow
        self.exempt = level.config.exempt
        self.watch = verb == "watch"
        self.estimate: WorkEstimate | None = fixed_estimate(verb, info.is_resource_request)
        self.execution = self.flow.execution["watch" if self.watch else "regular"]


class StoredObjects:
    """An informer's sink: one kind's objects by name; every change calls ``changed``."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self.objects: dict[str, Obj] = {}
        self.changed_callback = changed

    def replace(self, views: Iterable[ObjectView]) -> None:
        self.objects = {view.obj.metadata.name: view.obj for view in views}
        self.changed_callback()

    def changed(self, event_type: str, view: ObjectView) -> None:
        name = view.obj.metadata.name
        if event_type == "DELETED":
            self.objects.pop(name, None)
        else:
            self.objects[name] = view.obj
        self.changed_callback()


class Controller:
    def __init__(self, server_limit: int, metrics: FlowControlMetrics, codecs: tuple[Any, Any]) -> None:
        self.server_limit = server_limit
        self.metrics = metrics
        level_codec, schema_codec = codecs
        self.stored_levels = StoredObjects(self.reconfigure)
        self.stored_schemas = StoredObjects(self.reconfigure)
        self.levels: dict[str, Level] = {}
        self.schemas: list[Schema] = []
        self.classified: dict[tuple[object, ...], Route] = {}
        self.nominal_sum = 0
        self.status_wanted: dict[str, tuple[str, str, str]] = {}  # FlowSchema → (status, reason, message)
        self._status_changed = asyncio.Event()
        # Stand-ins for missing mandatory objects.
        self.mandatory_levels = {
            name: level_codec.from_dict({"metadata": {"name": name}, "spec": spec}).obj
            for name, spec in bootstrap.MANDATORY_LEVELS.items()
        }
        self.mandatory_schemas = {
            name: compile_schema(schema_codec.from_dict({"metadata": {"name": name}, "spec": spec}).obj)
            for name, spec in bootstrap.MANDATORY_SCHEMAS.items()
        }
        self.reconfigure()

    # ---- configuration -------------------------------------------------------------------------
    def reconfigure(self) -> None:
        objects = {**self.mandatory_levels, **self.stored_levels.objects}
        configs = {c.name: c for c in (level_config(obj) for obj in objects.values()) if c is not None}
        levels: dict[str, Level] = {}
        for name, config in configs.items():
            level = self.levels.get(name)
            if level is None:
                demand = SeatDemand()
                level = Level(config, self.metrics.level(name, demand), demand)
            level.quiescing = False
            levels[name] = level
        for name, level in self.levels.items():  # gone, but still holding requests
            if name not in levels and not level.queues.idle:
                level.quiescing = True
                levels[name] = level
        share_sum = sum(level.config.shares for level in levels.values()) or 1
        for name, level in levels.items():
            config = configs.get(name, level.config)
            limits = nominal_limits(self.server_limit, config.shares, share_sum, config.lendable, config.borrowing)
            if name in self.levels:  # borrowing keeps its current limit until the next adjustment
                limits.current = min(max(level.limits.current, limits.lower), limits.upper)
            level.apply(config, limits)
        self.levels = levels
        self.nominal_sum = sum(level.limits.nominal for level in levels.values())
        self._set_schemas()

    def _set_schemas(self) -> None:
        schemas = [compile_schema(obj) for obj in self.stored_schemas.objects.values()]
        wanted: dict[str, tuple[str, str, str]] = {}
        usable = []
        for schema in schemas:
            found = schema.level in self.levels and not self.levels[schema.level].quiescing
            how = "and it exists" if found else "but there is no such object"
            message = f'This FlowSchema references the PriorityLevelConfiguration object named "{schema.level}" {how}'
            wanted[schema.name] = ("False", "Found", message) if found else ("True", "NotFound", message)
            if found:
                usable.append(schema)
        names = {s.name for s in usable}
        usable += [s for name, s in self.mandatory_schemas.items() if name not in names]
        self.schemas = in_matching_order(usable)
        self.classified.clear()
        self.status_wanted = wanted
        self._status_changed.set()

    # ---- requests ------------------------------------------------------------------------------
    def classify(self, user: UserInfo, info: RequestInfo) -> Route:
        """The matching FlowSchema and its level, as a Route; the answers for recent requests of the same user
        and target are remembered until the configuration changes."""
        target = info.path if not info.is_resource_request else ""
        key = (user.name, user.groups, info.verb, info.group, info.resource, info.subresource, info.namespace, target)
        found = self.classified.get(key)
        if found is None:
            for schema in self.schemas:
                if schema.matches(user, info):
                    break
            else:  # no schema matched: the catch-all one (upstream's fallback)
                schema = next(s for s in self.schemas if s.name == bootstrap.CATCH_ALL)
            if len(self.classified) >= CLASSIFIED_CACHE:
                self.classified.clear()
            found = self.classified[key] = Route(schema, self.levels[schema.level], user, info, self.metrics)
        return found

    def level_finished(self, level: Level) -> None:
        """A request of ``level`` ended: drop the level if it was waiting for that."""
        if level.quiescing and level.queues.idle and self.levels.get(level.name) is level:
            self.reconfigure()

    # ---- periodic work -------------------------------------------------------------------------
    def rebalance(self) -> None:
        borrowers = {
            name: Borrower(level.limits, level.demand, level.config.exempt) for name, level in self.levels.items()
        }
        rebalance(self.nominal_sum, list(borrowers.values()))
        for level in self.levels.values():
            level.queues.set_limit(level.limits.current)
            level.observer.configured(level.limits, max(level.config.queues, 0) * level.config.queue_length_limit)
            level.observer.rebalanced(max(level.demand.smoothed, level.limits.lower))

    async def run_borrowing(self) -> None:
        while True:
            await asyncio.sleep(BORROWING_ADJUSTMENT_PERIOD)
            self.rebalance()

    async def run_sampling(self) -> None:
        ticks = round(WATERMARK_PERIOD / SAMPLE_PERIOD)
        tick = 0
        while True:
            await asyncio.sleep(SAMPLE_PERIOD)
            self.metrics.sample()
            tick += 1
            if tick % ticks == 0:
                self.metrics.watermark_period()

    def statuses_current(self) -> bool:
        """Every stored FlowSchema has the Dangling condition this server wants."""
        objects = self.stored_schemas.objects
        return all(_dangling(objects[n]) == wanted for n, wanted in self.status_wanted.items() if n in objects)

    async def run_status(self, statuses: StatusStore) -> None:
        """Writes the Dangling condition of every FlowSchema whose stored condition differs, all at once:
        storage commits them together (one after another, the bootstrap's 15 took ~0.1 s of the start)."""
        while True:
            await self._status_changed.wait()
            self._status_changed.clear()
            stored = self.stored_schemas.objects
            stale = [(n, w) for n, w in self.status_wanted.items() if n in stored and _dangling(stored[n]) != w]
            written = await asyncio.gather(*(self._write_status(statuses, n, w) for n, w in stale))
            if not all(written):
                self._status_changed.set()
                await asyncio.sleep(1)

    async def _write_status(self, statuses: StatusStore, name: str, wanted: tuple[str, str, str]) -> bool:
        """Whether the FlowSchema's Dangling condition was written (a failure is logged)."""
        try:
            await statuses.update(
                "", name, _with_dangling(statuses, wanted), WriteOptions(field_manager=STATUS_FIELD_MANAGER)
            )
        except (StatusError, StorageError) as err:
            log.warning("status of FlowSchema %s not written: %s", name, err)
            return False
        return True


def _dangling(obj: Obj) -> tuple[str, str, str] | None:
    for condition in obj.status.conditions:
        if condition.type == "Dangling":
            return condition.status, condition.reason, condition.message
    return None


def _with_dangling(statuses: StatusStore, wanted: tuple[str, str, str]) -> Callable[[Obj | None], Obj]:
    def updated(current: Obj | None) -> Obj:
        assert current is not None
        new = statuses.codec.copy(current)
        condition = next((c for c in new.status.conditions if c.type == "Dangling"), None)
        if condition is None:
            condition = new.status.conditions.add(type="Dangling")
        status, reason, message = wanted
        if condition.status != status:
            condition.lastTransitionTime.seconds = now_seconds()
        condition.status, condition.reason, condition.message = status, reason, message
        return new

    return updated
