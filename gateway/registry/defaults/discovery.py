"""discovery.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/discovery/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default


@defaulter("k8s.io.api.discovery.v1.EndpointPort")
def endpoint_port(obj: Message) -> None:
    default(obj, "name", "")
    default(obj, "protocol", "TCP")
