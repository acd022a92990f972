"""The mandatory and suggested configuration objects of API Priority and Fairness, as upstream
bootstraps them (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go), as JSON-shaped specs.

Mandatory: the ``exempt`` level (system:masters, and the ``probes`` schema) and ``catch-all``
(Reject). Suggested: system, node-high, leader-election, workload-high, workload-low and
global-default with their FlowSchemas. maintenance.py keeps them in storage.
"""

from __future__ import annotations

from typing import Any

AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"
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
