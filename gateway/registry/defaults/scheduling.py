"""scheduling.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/scheduling/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default


@defaulter("k8s.io.api.scheduling.v1.PriorityClass")
def priority_class(obj: Message) -> None:
    default(obj, "preemptionPolicy", "PreemptLowerPriority")
