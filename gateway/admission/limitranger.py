"""LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a namespace applied to its
pods and claims.

Mutating: a new pod's containers and init containers get the ``default`` (limits) and
``defaultRequest`` (requests) of every Container item for the resources they leave out, and the
pod is annotated with what was set (``kubernetes.io/limit-ranger``). Validating: every Container
item's min, max and maxLimitRequestRatio hold for each container, every Pod item's for the pod's
totals, every PersistentVolumeClaim item's min and max for a claim's storage request; the
failures of one LimitRange are reported together in a 403. Pods are checked on create only
(their resources cannot change), claims on create and update; objects being deleted are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from google.protobuf.message import Message

from protokube.gateway.admission.lookup import NamespaceLookup
from protokube.gateway.admission.podresources import pod_limits, pod_requests
from protokube.gateway.admission.resourcelist import MAX_MILLI_VALUE, Quantity, ResourceList, from_message
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

POD = "k8s.io.api.core.v1.Pod"
CLAIM = "k8s.io.api.core.v1.PersistentVolumeClaim"
ANNOTATION = "kubernetes.io/limit-ranger"
CONTAINER, POD_LIMIT, CLAIM_LIMIT = "Container", "Pod", "PersistentVolumeClaim"


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate's text: one message as it is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# ---- the constraints ---------------------------------------------------------------------------
def _comparable(*quantities: Quantity | None) -> list[int]:
    """Milli-values when none is too large for them, whole values otherwise (upstream's
    requestLimitEnforcedValues); an absent quantity counts as zero."""
    values = [q if q is not None else Quantity.of(0) for q in quantities]
    if all(q.integer() <= MAX_MILLI_VALUE for q in values):
        return [q.milli() for q in values]
    return [q.integer() for q in values]


def minimum(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, wanted = _comparable(request, limit, enforced)
    if request is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_request < wanted:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {request}"
    if limit is not None and observed_limit < wanted:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
    return None


def maximum(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, wanted = _comparable(request, limit, enforced)
    if limit is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if observed_limit > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
    if request is not None and observed_request > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def maximum_request(kind: str, name: str, enforced: Quantity, requests: ResourceList) -> str | None:
    """The max of a kind whose limits are not user input (claims): checked against the request."""
    request = requests.get(name)
    observed_request, _, wanted = _comparable(request, None, enforced)
    if request is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_request > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def ratio(kind: str, name: str, enforced: Quantity, requests: ResourceList, limits: ResourceList) -> str | None:
    request, limit = requests.get(name), limits.get(name)
    observed_request, observed_limit, _ = _comparable(request, limit, enforced)
    prefix = f"{name} max limit to request ratio per {kind} is {enforced}"
    if request is None or observed_request == 0:
        return f"{prefix}, but no request is specified or request is 0"
    if limit is None or observed_limit == 0:
        return f"{prefix}, but no limit is specified or limit is 0"
    observed = observed_limit / observed_request
    allowed, compared = float(enforced.integer()), observed
    if enforced.integer() <= MAX_MILLI_VALUE:
        allowed, compared = float(enforced.milli()), observed * 1000
    if compared > allowed:
        return f"{prefix}, but provided ratio is {observed:f}"
    return None


Check = Callable[[str, str, Quantity, ResourceList, ResourceList], str | None]


def _check_item(item: Message, requests: ResourceList, limits: ResourceList) -> list[str]:
    """An item's min, max and ratio over one set of requests and limits."""
    found = []
    checks: tuple[tuple[str, Check], ...] = (("min", minimum), ("max", maximum), ("maxLimitRequestRatio", ratio))
    for field, check in checks:
        for name, value in sorted(from_message(getattr(item, field)).items()):
            problem = check(item.type, name, value, requests, limits)
            if problem is not None:
                found.append(problem)
    return found


# ---- pods and claims ---------------------------------------------------------------------------
def _default_container(
    container: Message, kind: str, limits: Mapping[str, Message], requests: Mapping[str, Message]
) -> list[str]:
    """Set the defaults a container leaves out; the annotation's parts for it (requests first)."""
    parts = []
    for field, defaults, what in (("requests", requests, "request"), ("limits", limits, "limit")):
        present = getattr(container.resources, field)
        added = sorted(name for name in defaults if name not in present)
        for name in added:
            present[name].string = defaults[name].string
        if added:
            parts.append(f"{', '.join(added)} {what} for {kind} {container.name}")
    return parts


def set_pod_defaults(limit_range: Message, pod: Message) -> None:
    """The defaults of the LimitRange's Container items (later items win), and the annotation."""
    limits: dict[str, Message] = {}
    requests: dict[str, Message] = {}
    for item in limit_range.spec.limits:
        if item.type == CONTAINER:
            requests.update(item.defaultRequest)
            limits.update(item.default)
    annotations = []
    for containers, kind in ((pod.spec.containers, "container"), (pod.spec.initContainers, "init container")):
        for container in containers:
            annotations += _default_container(container, kind, limits, requests)
    if annotations:
        pod.metadata.annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(annotations)


def pod_problems(limit_range: Message, pod: Message) -> list[str]:
    found = []
    for item in limit_range.spec.limits:
        if item.type == CONTAINER:
            for container in (*pod.spec.containers, *pod.spec.initContainers):
                resources = container.resources
                found += _check_item(item, from_message(resources.requests), from_message(resources.limits))
        elif item.type == POD_LIMIT:
            found += _check_item(item, pod_requests(pod, overhead=False), pod_limits(pod, overhead=False))
    return found


def claim_problems(limit_range: Message, claim: Message) -> list[str]:
    found = []
    requests = from_message(claim.spec.resources.requests)
    for item in limit_range.spec.limits:
        if item.type != CLAIM_LIMIT:
            continue
        for name, value in sorted(from_message(item.min).items()):
            found.append(minimum(item.type, name, value, requests, {}))
        for name, value in sorted(from_message(item.max).items()):
            found.append(maximum_request(item.type, name, value, requests))
    return [problem for problem in found if problem is not None]


class LimitRanger:
    """``limit_ranges``: the LimitRanges' watch cache."""

    def __init__(self, limit_ranges: Cacher) -> None:
        self.lookup = NamespaceLookup(limit_ranges)

    @staticmethod
    def _handles(attributes: Attributes) -> bool:
        if attributes.subresource or attributes.obj is None or attributes.operation not in (CREATE, UPDATE):
            return False
        if attributes.old is not None and attributes.old.metadata.HasField("deletionTimestamp"):
            return False
        message = attributes.resource.message
        return (message == POD and attributes.operation == CREATE) or message == CLAIM

    async def _items(self, namespace: str) -> list[Message]:
        return [view.obj for view in await self.lookup.views(namespace)]

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Pods and persistent volume claims only."""
        return resource.message in (POD, CLAIM)

    async def admit(self, attributes: Attributes) -> None:
        if self._handles(attributes) and attributes.resource.message == POD:
            for limit_range in await self._items(attributes.namespace):
                set_pod_defaults(limit_range, attributes.obj)

    async def validate(self, attributes: Attributes) -> None:
        if not self._handles(attributes):
            return
        problems = pod_problems if attributes.resource.message == POD else claim_problems
        for limit_range in await self._items(attributes.namespace):
            found = problems(limit_range, attributes.obj)
            if found:
                raise forbidden(attributes, aggregate(found))
