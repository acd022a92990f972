"""Where each built-in group version sorts in discovery, and the priorities of its local APIService
(kube-apiserver 1.32: pkg/controlplane/apiserver/aggregator.go DefaultGenericAPIServicePriorities,
merged with cmd/kube-apiserver/app/aggregator.go): (groupPriorityMinimum, versionPriority). Higher
sorts first. A group version missing here gets no local APIService, as upstream."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from protokube.schema.registry import version_order

PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("certificates.k8s.io", "v1alpha1"): (17300, 1),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
}
# The aggregator's own group is first in discovery and has no local APIService.
APIREGISTRATION_GROUP = "apiregistration.k8s.io"
APIREGISTRATION_GROUP_PRIORITY = 20001
# Any other group version (custom resources): what apiextensions-apiserver gives them.
OTHER_PRIORITY = (1000, 100)


def priority(group: str, version: str) -> tuple[int, int]:
    """(groupPriorityMinimum, versionPriority) of a served group version."""
    if group == APIREGISTRATION_GROUP:
        return (APIREGISTRATION_GROUP_PRIORITY, OTHER_PRIORITY[1])
    return PRIORITIES.get((group, version), OTHER_PRIORITY)


def discovery_order(group_versions: Mapping[str, Iterable[str]]) -> list[tuple[str, list[str]]]:
    """Groups and their versions in the aggregator's order: groups by their highest
    groupPriorityMinimum, then by name; versions by versionPriority, then Kubernetes' version order."""
    ordered = []
    for group, versions in group_versions.items():
        in_order = sorted(versions, key=lambda v: (-priority(group, v)[1], version_order(v)))
        ordered.append((group, in_order))
    return sorted(ordered, key=lambda gv: (-max(priority(gv[0], v)[0] for v in gv[1]), gv[0]))
