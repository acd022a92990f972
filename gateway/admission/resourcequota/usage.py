"""A quota's usage counted from the objects of its namespace (quota.CalculateUsage), as the
resourcequota controller writes it to status.used.

Each evaluator that measures one of the quota's hard resources adds up what the namespace's
objects that match the quota's scopes cost; the resources it measures start at zero. A resource
no evaluator measures (``count/<resource>.<group>`` of a resource not served) gets no usage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from google.protobuf.message import Message

from protokube.gateway.admission.resourcelist import ZERO, ResourceList, add, mask
from protokube.gateway.admission.resourcequota.evaluators import CORE, IGNORED, Evaluator, evaluator_for, scopes_of

COUNT_PREFIX = "count/"
# The objects of a group-resource in the quota's namespace; None when it is not served.
Objects = Callable[[str, str], Iterable[object] | None]


def counted_resource(name: str) -> tuple[str, str] | None:
    """The group-resource of an object count name (``count/deployments.apps`` -> apps, deployments)."""
    if not name.startswith(COUNT_PREFIX):
        return None
    plural, _, group = name.removeprefix(COUNT_PREFIX).partition(".")
    return group, plural


def evaluators(hard: Iterable[str]) -> list[Evaluator]:
    """The evaluators that measure some of ``hard``: the core ones, and the object counters."""
    names = list(hard)
    found = [evaluator for evaluator in CORE.values() if evaluator.matching_resources(names)]
    for name in names:
        group_resource = counted_resource(name)
        if group_resource is not None and group_resource not in CORE and group_resource not in IGNORED:
            found.append(evaluator_for(*group_resource))
    return found


def calculate_usage(quota: Message, objects: Objects) -> ResourceList:
    hard = list(quota.spec.hard)
    scopes = scopes_of(quota)
    used: ResourceList = {}
    measured: set[str] = set()
    for evaluator in evaluators(hard):
        names = evaluator.matching_resources(hard)
        items = objects(*evaluator.group_resource)
        if items is None:
            continue
        stats: ResourceList = dict.fromkeys(names, ZERO)
        for obj in items:
            if all(evaluator.matches_scope(scope, obj) for scope in scopes):
                stats = add(stats, evaluator.usage(obj))
        used = add(used, stats)
        measured.update(names)
    return mask(used, measured)
