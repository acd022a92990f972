"""DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass): an Ingress created
without a class, and without the deprecated class annotation, gets the cluster's default
IngressClass, when there is one."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.admission.defaultclass import newest_default
from protokube.gateway.registry.admission import CREATE, Attributes
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

INGRESSES = ("networking.k8s.io", "ingresses")
IS_DEFAULT = "ingressclass.kubernetes.io/is-default-class"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"  # deprecated, still honoured


def _is_default(ingress_class: Message) -> bool:
    return ingress_class.metadata.annotations.get(IS_DEFAULT) == "true"


class DefaultIngressClass:
    def __init__(self, ingress_classes: Cacher) -> None:
        self.ingress_classes = ingress_classes

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Ingresses only."""
        return (resource.group, resource.plural) == INGRESSES

    async def admit(self, attributes: Attributes) -> None:
        resource, ingress = attributes.resource, attributes.obj
        if attributes.operation != CREATE or (resource.group, resource.plural) != INGRESSES:
            return
        if attributes.subresource or ingress is None:
            return
        if ingress.spec.HasField("ingressClassName") or CLASS_ANNOTATION in ingress.metadata.annotations:
            return
        default = await newest_default(self.ingress_classes, _is_default)
        if default is not None:
            ingress.spec.ingressClassName = default.metadata.name
