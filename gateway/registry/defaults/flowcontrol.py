"""flowcontrol.apiserver.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/flowcontrol/v1/defaults.go
(1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default

FLOWCONTROL = "k8s.io.api.flowcontrol.v1"


@defaulter(f"{FLOWCONTROL}.FlowSchemaSpec")
def flow_schema_spec(obj: Message) -> None:
    if obj.matchingPrecedence == 0:
        obj.matchingPrecedence = 1000


@defaulter(f"{FLOWCONTROL}.ExemptPriorityLevelConfiguration")
def exempt_priority_level_configuration(obj: Message) -> None:
    default(obj, "nominalConcurrencyShares", 0)
    default(obj, "lendablePercent", 0)


@defaulter(f"{FLOWCONTROL}.LimitedPriorityLevelConfiguration")
def limited_priority_level_configuration(obj: Message) -> None:
    default(obj, "nominalConcurrencyShares", 30)
    default(obj, "lendablePercent", 0)


@defaulter(f"{FLOWCONTROL}.QueuingConfiguration")
def queuing_configuration(obj: Message) -> None:
    for name, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
        if getattr(obj, name) == 0:
            setattr(obj, name, value)
