"""DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault): a claim created
without a class gets the cluster's default StorageClass, when there is one."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.admission.defaultclass import newest_default
from protokube.gateway.registry.admission import CREATE, Attributes
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

CLAIMS = ("", "persistentvolumeclaims")
IS_DEFAULT = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT = "storageclass.beta.kubernetes.io/is-default-class"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"  # a claim's class before storageClassName


def is_default_class(storage_class: Message) -> bool:
    annotations = storage_class.metadata.annotations
    return annotations.get(IS_DEFAULT) == "true" or annotations.get(BETA_IS_DEFAULT) == "true"


def claim_class(claim: Message) -> str:
    """The class a claim names: the beta annotation first, then storageClassName ("" for none)."""
    if BETA_CLASS in claim.metadata.annotations:
        return claim.metadata.annotations[BETA_CLASS]
    return claim.spec.storageClassName


def claims_only(resource: Resource) -> bool:
    """What the claims' plugins act on: persistent volume claims only."""
    return (resource.group, resource.plural) == CLAIMS


def is_claim(attributes: Attributes) -> bool:
    resource = attributes.resource
    return (resource.group, resource.plural) == CLAIMS and not attributes.subresource and attributes.obj is not None


class DefaultStorageClass:
    def __init__(self, storage_classes: Cacher) -> None:
        self.storage_classes = storage_classes

    handles = staticmethod(claims_only)

    async def admit(self, attributes: Attributes) -> None:
        if attributes.operation != CREATE or not is_claim(attributes):
            return
        claim = attributes.obj
        assert claim is not None
        if claim.spec.HasField("storageClassName") or BETA_CLASS in claim.metadata.annotations:
            return  # the user asked for a class (perhaps "": none)
        default = await newest_default(self.storage_classes, is_default_class)
        if default is not None:
            claim.spec.storageClassName = default.metadata.name
