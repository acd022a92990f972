"""policy/v1 PodDisruptionBudgets (k8s.io/kubernetes pkg/apis/policy/validation): minAvailable xor
maxUnavailable, each a non-negative int or a percent up to 100%; the selector; the eviction policy."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    enum,
    int_or_percent_errors,
    label_selector_errors,
    not_more_than_100,
)


@validator("k8s.io.api.policy.v1.PodDisruptionBudget")
def validate_pod_disruption_budget(budget: Message, old: Message | None) -> list[FieldError]:
    spec = budget.spec
    found: list[FieldError] = []
    if spec.HasField("minAvailable") and spec.HasField("maxUnavailable"):
        shown = GoText("policy.PodDisruptionBudgetSpec{...}")
        found.append(FieldError.invalid("spec", shown, "minAvailable and maxUnavailable cannot be both set"))
    for name in ("minAvailable", "maxUnavailable"):
        if spec.HasField(name):
            found += int_or_percent_errors(f"spec.{name}", getattr(spec, name))
            found += not_more_than_100(getattr(spec, name), f"spec.{name}")
    if spec.HasField("selector"):
        found += label_selector_errors(spec.selector, "spec.selector")
    if spec.HasField("unhealthyPodEvictionPolicy"):
        policies = ("AlwaysAllow", "IfHealthyBudget")
        found += enum("spec.unhealthyPodEvictionPolicy", spec.unhealthyPodEvictionPolicy, policies, required=True)
    return found
