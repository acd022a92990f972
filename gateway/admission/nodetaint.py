"""TaintNodesByCondition (plugin/pkg/admission/nodetaint): a Node is created with the not-ready
NoSchedule taint, so that nothing is scheduled to it before its kubelet reports it ready (the node
lifecycle controller then takes the taint away)."""

from __future__ import annotations

from protokube.gateway.registry.admission import CREATE, Attributes
from protokube.schema.registry import Resource

NODES = ("", "nodes")
NOT_READY = "node.kubernetes.io/not-ready"
NO_SCHEDULE = "NoSchedule"


class TaintNodesByCondition:
    @staticmethod
    def handles(resource: Resource) -> bool:
        """Nodes only."""
        return (resource.group, resource.plural) == NODES

    async def admit(self, attributes: Attributes) -> None:
        resource, node = attributes.resource, attributes.obj
        if attributes.operation != CREATE or (resource.group, resource.plural) != NODES:
            return
        if attributes.subresource or node is None:
            return
        if not any(t.key == NOT_READY and t.effect == NO_SCHEDULE for t in node.spec.taints):
            node.spec.taints.add(key=NOT_READY, effect=NO_SCHEDULE)
