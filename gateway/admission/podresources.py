"""A pod's requests and limits as a whole (component-helpers' PodRequests and PodLimits) and its
QoS class, for LimitRanger's Pod limits and ResourceQuota's pod usage.

The containers' resources add up; init containers run one at a time, so each counts on its own
(with the sidecars started before it) and the pod needs the larger of that and the containers'
sum; sidecars (restartPolicy Always) run along and add to the sum. The pod's overhead is added
when asked (quota charges it, LimitRanger does not count it).
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.admission.resourcelist import ResourceList, add_into, from_message, max_into

QOS_RESOURCES = ("cpu", "memory")
BEST_EFFORT = "BestEffort"


def _sidecar(container: Message) -> bool:
    return container.HasField("restartPolicy") and container.restartPolicy == "Always"


def _total(pod: Message, field: str) -> ResourceList:
    """Requests or limits of the pod's containers and init containers, without overhead."""
    total: ResourceList = {}
    for container in pod.spec.containers:
        add_into(total, from_message(getattr(container.resources, field)))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in pod.spec.initContainers:
        own = from_message(getattr(container.resources, field))
        if _sidecar(container):
            add_into(total, own)
            add_into(sidecars, own)
            running = dict(sidecars)
        else:
            running = dict(own)
            add_into(running, sidecars)
        max_into(init_peak, running)
    max_into(total, init_peak)
    return total


def pod_requests(pod: Message, *, overhead: bool) -> ResourceList:
    requests = _total(pod, "requests")
    if overhead:
        add_into(requests, from_message(pod.spec.overhead))
    return requests


def pod_limits(pod: Message, *, overhead: bool) -> ResourceList:
    """Overhead is added only to the limits the containers set."""
    limits = _total(pod, "limits")
    if overhead:
        for name, value in from_message(pod.spec.overhead).items():
            if name in limits:
                limits[name] = limits[name] + value
    return limits


def is_best_effort(pod: Message) -> bool:
    """No container asks for or is limited in cpu or memory (the status' qosClass when set)."""
    if pod.status.qosClass:
        return pod.status.qosClass == BEST_EFFORT
    for container in (*pod.spec.containers, *pod.spec.initContainers):
        for resources in (container.resources.requests, container.resources.limits):
            for name in QOS_RESOURCES:
                if name in resources and from_message({name: resources[name]})[name].value > 0:
                    return False
    return True
