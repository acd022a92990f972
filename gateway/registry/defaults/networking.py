"""networking.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/networking/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default

NETWORKING = "k8s.io.api.networking.v1"


@defaulter(f"{NETWORKING}.NetworkPolicyPort")
def network_policy_port(obj: Message) -> None:
    default(obj, "protocol", "TCP")


@defaulter(f"{NETWORKING}.NetworkPolicy")
def network_policy(obj: Message) -> None:
    """A policy without policyTypes is an Ingress policy, and an Egress one too if it has egress rules."""
    spec = obj.spec
    if not spec.policyTypes:
        spec.policyTypes.append("Ingress")
        if spec.egress:
            spec.policyTypes.append("Egress")


@defaulter(f"{NETWORKING}.IngressClass")
def ingress_class(obj: Message) -> None:
    if obj.spec.HasField("parameters"):
        default(obj.spec.parameters, "scope", "Cluster")
