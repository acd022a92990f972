"""The mandatory and suggested configuration (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap) and
its maintenance (k8s.io/kubernetes pkg/registry/flowcontrol/ensurer), run at start and every minute.

- Mandatory objects (``exempt``, ``catch-all``) are recreated when deleted and their spec is put
  back whatever the operator did.
- Suggested objects are created when missing; an existing one gets the bootstrap spec back only
  while it lets the server update it: annotation ``apf.kubernetes.io/autoupdate-spec: "true"``,
  or, without a boolean annotation, ``metadata.generation == 1`` (nobody edited it). The
  annotation is then set to what was decided.
- Objects with the annotation that are no longer part of the bootstrap set are deleted when it
  says "true".
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gateway.errors import StatusError
from gateway.params import DeleteOptions, ListOptions, WriteOptions
from gateway.registry.store import Store
from gateway.storage.backend import StorageError

log = logging.getLogger("protokube.flowcontrol")
AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"
FIELD_MANAGER = "api-priority-and-fairness-config-producer-v1"
MAINTENANCE_PERIOD = 60.0
EXEMPT, CATCH_ALL = "exempt", "catch-all"
Spec = dict[str, Any]

# ---- priority levels -------------------------------------------------------------------------


def _queuing(shares: int, lendable: int, queues: int, hand_size: int) -> Spec:
    return {
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": shares,
            "lendablePercent": lendable,
            "limitResponse": {
                "type": "Queue",
                "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": 50},
            },
        },
    }


MANDATORY_LEVELS: dict[str, Spec] = {
    CATCH_ALL: {
        "type": "Limited",
        "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0, "limitResponse": {"type": "Reject"}},
    },
    EXEMPT: {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
}
SUGGESTED_LEVELS: dict[str, Spec] = {
    "system": _queuing(30, 33, 64, 6),
    "node-high": _queuing(40, 25, 64, 6),
    "leader-election": _queuing(10, 0, 16, 4),
    "workload-high": _queuing(40, 50, 128, 6),
    "workload-low": _queuing(100, 90, 128, 6),
    "global-default": _queuing(20, 50, 128, 6),
}

# ---- flow schemas ------------------------------------------------------------------------------

ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"], "clusterScope": True}
ALL_NON_RESOURCES = {"verbs": ["*"], "nonResourceURLs": ["*"]}
EVERYTHING = {"resourceRules": [ALL_RESOURCES], "nonResourceRules": [ALL_NON_RESOURCES]}
KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER = "system:kube-controller-manager", "system:kube-scheduler"
GET_CREATE_UPDATE = ["get", "create", "update"]


def groups(*names: str) -> list[Spec]:
    return [{"kind": "Group", "group": {"name": name}} for name in names]


def users(*names: str) -> list[Spec]:
    return [{"kind": "User", "user": {"name": name}} for name in names]


def kube_system_service_accounts(*names: str) -> list[Spec]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": n}} for n in names]


def namespaced(group: str, *resources: str, verbs: list[str] = GET_CREATE_UPDATE) -> Spec:
    return {"verbs": verbs, "apiGroups": [group], "resources": list(resources), "namespaces": ["*"]}


def flow_schema(level: str, precedence: int, distinguisher: str, subjects: list[Spec], **rules: Any) -> Spec:
    spec: Spec = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if distinguisher:
        spec["distinguisherMethod"] = {"type": distinguisher}
    spec["rules"] = [{"subjects": subjects, **rules}]
    return spec


ANYONE = groups("system:unauthenticated", "system:authenticated")
MANDATORY_SCHEMAS: dict[str, Spec] = {
    EXEMPT: flow_schema(EXEMPT, 1, "", groups("system:masters"), **EVERYTHING),
    CATCH_ALL: flow_schema(CATCH_ALL, 10000, "ByUser", ANYONE, **EVERYTHING),
}
SUGGESTED_SCHEMAS: dict[str, Spec] = {
    "system-nodes": flow_schema("system", 500, "ByUser", groups("system:nodes"), **EVERYTHING),
    "system-node-high": flow_schema(
        "node-high",
        400,
        "ByUser",
        groups("system:nodes"),
        resourceRules=[
            {**namespaced("", "nodes", "nodes/status", verbs=["*"]), "clusterScope": True},
            namespaced("coordination.k8s.io", "leases", verbs=["*"]),
        ],
    ),
    "probes": flow_schema(
        EXEMPT,
        2,
        "",
        ANYONE,
        nonResourceRules=[{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}],
    ),
    "system-leader-election": flow_schema(
        "leader-election",
        100,
        "ByUser",
        users(KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER) + kube_system_service_accounts("*"),
        resourceRules=[namespaced("coordination.k8s.io", "leases")],
    ),
    "workload-leader-election": flow_schema(
        "leader-election",
        200,
        "ByUser",
        kube_system_service_accounts("*"),
        resourceRules=[namespaced("", "endpoints", "configmaps"), namespaced("coordination.k8s.io", "leases")],
    ),
    "endpoint-controller": flow_schema(
        "workload-high",
        150,
        "ByUser",
        users(KUBE_CONTROLLER_MANAGER)
        + kube_system_service_accounts("endpoint-controller", "endpointslicemirroring-controller"),
        resourceRules=[namespaced("", "endpoints")],
    ),
    "kube-controller-manager": flow_schema(
        "workload-high", 800, "ByNamespace", users(KUBE_CONTROLLER_MANAGER), **EVERYTHING
    ),
    "kube-scheduler": flow_schema("workload-high", 800, "ByNamespace", users(KUBE_SCHEDULER), **EVERYTHING),
    "kube-system-service-accounts": flow_schema(
        "workload-high", 900, "ByNamespace", kube_system_service_accounts("*"), **EVERYTHING
    ),
    "service-accounts": flow_schema("workload-low", 9000, "ByUser", groups("system:serviceaccounts"), **EVERYTHING),
    "global-default": flow_schema("global-default", 9900, "ByUser", ANYONE, **EVERYTHING),
}


# ---- maintenance -------------------------------------------------------------------------------


def parse_bool(value: str | None) -> bool | None:
    """Go's strconv.ParseBool, None for anything else."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def auto_update_spec(obj: Any) -> bool:
    """Whether the server may put a suggested object's spec back (upstream's shouldUpdateSpec)."""
    decided = parse_bool(obj.metadata.annotations.get(AUTO_UPDATE))
    if decided is not None:
        return decided
    return obj.metadata.generation == 1


class Kind:
    """One of the two kinds: its store and its mandatory and suggested objects by name."""

    def __init__(self, store: Store, mandatory: dict[str, Spec], suggested: dict[str, Spec]) -> None:
        self.store = store
        self.mandatory = mandatory
        self.suggested = suggested

    def desired(self, name: str, spec: Spec) -> Any:
        """The bootstrap object, defaulted as a stored one is (to compare specs)."""
        data = {"metadata": {"name": name, "annotations": {AUTO_UPDATE: "true"}}, "spec": spec}
        obj = self.store.codec.from_dict(data).obj
        self.store.strategy.default(obj)
        return obj

    async def ensure(self, name: str, spec: Spec, always: bool) -> None:
        store = self.store
        options = WriteOptions(field_manager=FIELD_MANAGER)
        desired = self.desired(name, spec)
        try:
            current = (await store.get("", name, None)).obj
        except StatusError as err:
            if err.status.code != 404:
                raise
            try:
                await store.create("", desired, options)
                log.info("created %s %s", store.resource.kind, name)
            except StatusError as create_err:
                if create_err.status.code != 409:  # another gateway was quicker
                    raise
            return
        update_spec = always or auto_update_spec(current)
        annotation = "true" if update_spec else "false"
        spec_differs = update_spec and current.spec != desired.spec
        if current.metadata.annotations.get(AUTO_UPDATE) == annotation and not spec_differs:
            return

        def updated(stored: Any) -> Any:
            new = store.codec.copy(stored)
            new.metadata.annotations[AUTO_UPDATE] = annotation
            if spec_differs:
                new.spec.CopyFrom(desired.spec)
            return new

        await store.update("", name, updated, options)
        log.info("updated %s %s", store.resource.kind, name)

    async def remove_stale(self) -> None:
        """Delete auto-updated objects that are no longer part of the bootstrap configuration."""
        known = self.mandatory.keys() | self.suggested.keys()
        for view in (await self.store.list("", ListOptions())).items:
            meta = view.obj.metadata
            if meta.name in known or AUTO_UPDATE not in meta.annotations:
                continue
            if parse_bool(meta.annotations[AUTO_UPDATE]):
                try:
                    await self.store.delete("", meta.name, DeleteOptions())
                except StatusError as err:
                    if err.status.code != 404:
                        raise

    async def maintain(self) -> None:
        for name, spec in self.mandatory.items():
            await self.ensure(name, spec, always=True)
        for name, spec in self.suggested.items():
            await self.ensure(name, spec, always=False)
        await self.remove_stale()


class Maintenance:
    """Keeps the bootstrap configuration in storage: at start, then every ``period`` seconds."""

    def __init__(self, levels: Store, schemas: Store, period: float = MAINTENANCE_PERIOD) -> None:
        # Levels first: a FlowSchema made before its level would be Dangling for a moment.
        self.kinds = [
            Kind(levels, MANDATORY_LEVELS, SUGGESTED_LEVELS),
            Kind(schemas, MANDATORY_SCHEMAS, SUGGESTED_SCHEMAS),
        ]
        self.period = period
        self.done = asyncio.Event()  # the first round completed

    async def run_once(self) -> None:
        for kind in self.kinds:
            await kind.maintain()

    async def run(self) -> None:
        while True:
            try:
                await self.run_once()
                self.done.set()
                await asyncio.sleep(self.period)
            except (StatusError, StorageError) as err:
                log.warning("APF configuration not maintained yet: %s", err)
                await asyncio.sleep(1)
