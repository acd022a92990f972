"""autoscaling defaults: k8s.io/kubernetes pkg/apis/autoscaling/{v1,v2}/defaults.go (1.32).

v2's behavior, when given, has every unset rule filled from upstream's defaults: scale up by at
most 4 pods or 100% per 15 seconds, whichever is more, without stabilization; scale down by at
most 100% per 15 seconds (its stabilization window is the controller's flag, left unset).
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default

V1 = "k8s.io.api.autoscaling.v1"
V2 = "k8s.io.api.autoscaling.v2"
DEFAULT_CPU_UTILIZATION = 80
SCALE_UP_POLICIES = (("Pods", 4, 15), ("Percent", 100, 15))
SCALE_DOWN_POLICIES = (("Percent", 100, 15),)


@defaulter(f"{V1}.HorizontalPodAutoscaler")
def horizontal_pod_autoscaler_v1(obj: Message) -> None:
    default(obj.spec, "minReplicas", 1)


@defaulter(f"{V2}.HorizontalPodAutoscaler")
def horizontal_pod_autoscaler_v2(obj: Message) -> None:
    spec = obj.spec
    default(spec, "minReplicas", 1)
    if not spec.metrics:
        metric = spec.metrics.add(type="Resource")
        metric.resource.name = "cpu"
        metric.resource.target.type = "Utilization"
        metric.resource.target.averageUtilization = DEFAULT_CPU_UTILIZATION
    if spec.HasField("behavior"):
        _scaling_rules(spec.behavior.scaleUp, SCALE_UP_POLICIES, stabilization=0)
        _scaling_rules(spec.behavior.scaleDown, SCALE_DOWN_POLICIES, stabilization=None)


def _scaling_rules(rules: Message, policies: tuple[tuple[str, int, int], ...], stabilization: int | None) -> None:
    """Fill a rule set's unset fields (upstream's GenerateHPAScale{Up,Down}Rules)."""
    rules.SetInParent()
    default(rules, "selectPolicy", "Max")
    if stabilization is not None:
        default(rules, "stabilizationWindowSeconds", stabilization)
    if not rules.policies:
        for kind, value, period in policies:
            rules.policies.add(type=kind, value=value, periodSeconds=period)
