"""What objects cost a quota (pkg/quota/v1/evaluator/core and the generic object counter).

Every namespaced resource counts as ``count/<resource>[.<group>]``; configmaps, secrets,
replicationcontrollers and resourcequotas also under their classic names. Pods cost their
``pods`` slot and compute resources (requests, limits, huge pages, extended resources) while they
are not terminal, Services their node ports and load balancers, claims their storage (also per
storage class, ``<class>.storageclass.storage.k8s.io/<resource>``). Only pods have scopes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway.admission.podresources import is_best_effort, pod_limits, pod_requests
from protokube.gateway.admission.resourcelist import Quantity, ResourceList, add, from_message
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes

REQUESTS_PREFIX = "requests."
HUGE_PAGES_PREFIX = "hugepages-"
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ONE = Quantity.of(1)

# Resources quota never counts (pkg/quota/v1/install): virtual ones, and events.
IGNORED = frozenset(
    {
        ("", "bindings"),
        ("", "componentstatuses"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("", "events"),
        ("events.k8s.io", "events"),
    }
)


def count_name(group: str, plural: str) -> str:
    """The object count resource of a group-resource (``count/pods``, ``count/deployments.apps``)."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


@dataclass(frozen=True, slots=True)
class Scope:
    """One scope requirement of a quota: a ``spec.scopes`` entry (Exists) or a scopeSelector one."""

    name: str
    operator: str = "Exists"
    values: tuple[str, ...] = ()

    def matches_value(self, value: str | None) -> bool:
        """The requirement as a label selector over ``{name: value}`` (no label when None)."""
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        if self.operator == "In":
            return value is not None and value in self.values
        return value is None or value not in self.values  # NotIn


def scopes_of(quota: Message) -> list[Scope]:
    scopes = [Scope(name) for name in quota.spec.scopes]
    if quota.spec.HasField("scopeSelector"):
        scopes += [Scope(r.scopeName, r.operator, tuple(r.values)) for r in quota.spec.scopeSelector.matchExpressions]
    return scopes


class Evaluator:
    """An object counter (generic.NewObjectCountEvaluator): creates cost one of the resource's
    count names; no scope matches."""

    updates_matter = False  # whether an update can change what an object costs (replenish_key)

    def __init__(self, group: str, plural: str, alias: str = "") -> None:
        self.group_resource = (group, plural)
        self.names = (count_name(group, plural), *((alias,) if alias else ()))

    def handles(self, attributes: Attributes) -> bool:
        return attributes.operation == CREATE

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return [name for name in names if name in self.names]

    def matches_scope(self, scope: Scope, obj: object) -> bool:
        return False

    def constraints(self, required: list[str], obj: object) -> str | None:
        """Why the object may not be counted against a quota limiting ``required`` (None: it may)."""
        return None

    def usage(self, obj: object) -> ResourceList:
        return dict.fromkeys(self.names, ONE)

    def replenish_key(self, obj: object) -> Hashable:
        """What an update must change for the quota controller to recount (only deletions else)."""
        return None

    def matches(self, quota: Message, obj: object) -> bool:
        """generic.Matches: the quota limits a resource of this evaluator and all its scopes match."""
        if not self.matching_resources(quota.status.hard):
            return False
        return all(self.matches_scope(scope, obj) for scope in scopes_of(quota))


# ---- pods --------------------------------------------------------------------------------------
POD_RESOURCES = (
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
)
# Quota on these requires every container to state them (upstream keeps this old mistake).
REQUIRED_BY_QUOTA = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
TERMINAL_PHASES = ("Failed", "Succeeded")


def is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_terminating(pod: Message) -> bool:
    return pod.spec.HasField("activeDeadlineSeconds") and pod.spec.activeDeadlineSeconds >= 0


def counts_against_quota(pod: Message, now: float | None = None) -> bool:
    """QuotaV1Pod: not terminal, and not stuck deleting past its grace period."""
    if pod.status.phase in TERMINAL_PHASES:
        return False
    meta = pod.metadata
    if meta.HasField("deletionTimestamp") and meta.HasField("deletionGracePeriodSeconds"):
        deadline = meta.deletionTimestamp.seconds + meta.deletionTimestamp.nanos / 1e9 + meta.deletionGracePeriodSeconds
        if (time.time() if now is None else now) > deadline:
            return False
    return True


def _cross_namespace_affinity(pod: Message) -> bool:
    affinity = pod.spec.affinity
    for kind in ("podAffinity", "podAntiAffinity"):
        rules = getattr(affinity, kind)
        terms = [*rules.requiredDuringSchedulingIgnoredDuringExecution]
        terms += [weighted.podAffinityTerm for weighted in rules.preferredDuringSchedulingIgnoredDuringExecution]
        if any(term.namespaces or term.HasField("namespaceSelector") for term in terms):
            return True
    return False


def compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """podComputeUsageHelper: a pod's slot and what its requests and limits cost."""
    result: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = result[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            result["limits." + name] = limits[name]
    for name, value in requests.items():
        if name.startswith(HUGE_PAGES_PREFIX):
            result[name] = result[REQUESTS_PREFIX + name] = value
        elif not is_native(name) and not name.startswith(REQUESTS_PREFIX):  # an extended resource
            result[REQUESTS_PREFIX + name] = value
    return result


class PodEvaluator(Evaluator):
    updates_matter = True

    def __init__(self) -> None:
        super().__init__("", "pods")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return [
            name
            for name in names
            if name in POD_RESOURCES
            or name.startswith((HUGE_PAGES_PREFIX, REQUESTS_PREFIX + HUGE_PAGES_PREFIX))
            or (not is_native(name) and name.startswith(REQUESTS_PREFIX))
        ]

    def matches_scope(self, scope: Scope, obj: object) -> bool:
        pod: Message = obj  # type: ignore[assignment]
        match scope.name:
            case "Terminating":
                return is_terminating(pod)
            case "NotTerminating":
                return not is_terminating(pod)
            case "BestEffort":
                return is_best_effort(pod)
            case "NotBestEffort":
                return not is_best_effort(pod)
            case "PriorityClass":
                return scope.matches_value(pod.spec.priorityClassName or None)
            case "CrossNamespacePodAffinity":
                return _cross_namespace_affinity(pod)
        return False

    def constraints(self, required: list[str], obj: object) -> str | None:
        pod: Message = obj  # type: ignore[assignment]
        wanted = REQUIRED_BY_QUOTA.intersection(required)
        missing: dict[str, set[str]] = {}
        for container in (*pod.spec.containers, *pod.spec.initContainers):
            resources = container.resources
            stated = compute_usage(from_message(resources.requests), from_message(resources.limits))
            for name in wanted - stated.keys():
                missing.setdefault(name, set()).add(container.name)
        if not missing:
            return None
        parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
        return "must specify " + "; ".join(parts)

    def usage(self, obj: object) -> ResourceList:
        pod: Message = obj  # type: ignore[assignment]
        result: ResourceList = {"count/pods": ONE}
        if not counts_against_quota(pod):
            return result
        return add(result, compute_usage(pod_requests(pod, overhead=True), pod_limits(pod, overhead=True)))

    def replenish_key(self, obj: object) -> Hashable:
        return counts_against_quota(obj)  # type: ignore[arg-type]


# ---- services ----------------------------------------------------------------------------------
class ServiceEvaluator(Evaluator):
    updates_matter = True

    def __init__(self) -> None:
        super().__init__("", "services")
        self.names = ("count/services", "services", "services.nodeports", "services.loadbalancers")

    def handles(self, attributes: Attributes) -> bool:
        return attributes.operation in (CREATE, UPDATE)  # a service's type can change

    def usage(self, obj: object) -> ResourceList:
        service: Message = obj  # type: ignore[assignment]
        spec = service.spec
        ports, balancers = 0, 0
        if spec.type == "NodePort":
            ports = len(spec.ports)
        elif spec.type == "LoadBalancer":
            balancers = 1
            explicit_only = spec.HasField("allocateLoadBalancerNodePorts") and not spec.allocateLoadBalancerNodePorts
            ports = sum(1 for port in spec.ports if port.nodePort) if explicit_only else len(spec.ports)
        return {
            "count/services": ONE,
            "services": ONE,
            "services.nodeports": Quantity.of(ports),
            "services.loadbalancers": Quantity.of(balancers),
        }

    def replenish_key(self, obj: object) -> Hashable:
        return obj.spec.type  # type: ignore[attr-defined]


# ---- persistent volume claims ------------------------------------------------------------------
CLAIM_RESOURCES = ("persistentvolumeclaims", "requests.storage")


def storage_class(claim: Message) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    annotations = claim.metadata.annotations
    if BETA_STORAGE_CLASS in annotations:
        return annotations[BETA_STORAGE_CLASS]
    return claim.spec.storageClassName


def storage_request(claim: Message) -> Quantity | None:
    """The claim's storage request in whole bytes; the allocated size when larger."""
    requests = claim.spec.resources.requests
    if "storage" not in requests:
        return None
    result = Quantity.parse(requests["storage"].string).rounded_up()
    allocated = claim.status.allocatedResources
    if "storage" in allocated:
        allocated_storage = Quantity.parse(allocated["storage"].string)
        if allocated_storage.value > result.value:
            result = allocated_storage.rounded_up()
    return result


class ClaimEvaluator(Evaluator):
    updates_matter = True

    def __init__(self) -> None:
        super().__init__("", "persistentvolumeclaims")

    def handles(self, attributes: Attributes) -> bool:
        return attributes.operation in (CREATE, UPDATE)

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        suffixes = tuple(STORAGE_CLASS_SUFFIX + name for name in CLAIM_RESOURCES)
        return [name for name in names if name in self.names or name in CLAIM_RESOURCES or name.endswith(suffixes)]

    def usage(self, obj: object) -> ResourceList:
        claim: Message = obj  # type: ignore[assignment]
        result: ResourceList = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
        klass = storage_class(claim)
        if klass:
            result[klass + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = ONE
        requested = storage_request(claim)
        if requested is not None:
            result["requests.storage"] = requested
            if klass:
                result[klass + STORAGE_CLASS_SUFFIX + "requests.storage"] = requested
        return result

    def replenish_key(self, obj: object) -> Hashable:
        return str(storage_request(obj))  # type: ignore[arg-type]


CORE = {
    ("", "pods"): PodEvaluator(),
    ("", "services"): ServiceEvaluator(),
    ("", "persistentvolumeclaims"): ClaimEvaluator(),
    # counted under their classic names too
    **{
        ("", plural): Evaluator("", plural, plural)
        for plural in ("configmaps", "secrets", "resourcequotas", "replicationcontrollers")
    },
}


@functools.lru_cache(maxsize=1024)
def evaluator_for(group: str, plural: str) -> Evaluator:
    """The evaluator of a group-resource: one of the core ones, or an object counter."""
    return CORE.get((group, plural)) or Evaluator(group, plural)
