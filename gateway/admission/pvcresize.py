"""PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): a claim's
storage request may grow only when it is bound and its StorageClass allows volume expansion."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.admission.resourcelist import ZERO, Quantity
from protokube.gateway.admission.storageclass import claim_class, claims_only, is_claim
from protokube.gateway.registry.admission import UPDATE, Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher

STORAGE = "storage"
NOT_BOUND = "Only bound persistent volume claims can be expanded"
NOT_EXPANDABLE = (
    "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
)


def _storage(claim: Message) -> Quantity:
    requests = claim.spec.resources.requests
    return Quantity.parse(requests[STORAGE].string) if STORAGE in requests else ZERO


class PersistentVolumeClaimResize:
    def __init__(self, storage_classes: Cacher) -> None:
        self.storage_classes = storage_classes

    handles = staticmethod(claims_only)

    async def validate(self, attributes: Attributes) -> None:
        claim, old = attributes.obj, attributes.old
        if attributes.operation != UPDATE or not is_claim(attributes) or old is None:
            return
        assert claim is not None
        if _storage(claim).value <= _storage(old).value:
            return
        if old.status.phase != "Bound":
            raise forbidden(attributes, NOT_BOUND)
        if not await self._allows_expansion(claim_class(claim), claim_class(old)):
            raise forbidden(attributes, NOT_EXPANDABLE)

    async def _allows_expansion(self, name: str, old_name: str) -> bool:
        """Whether the claim's class (the same before and after) says allowVolumeExpansion: true."""
        if not name or name != old_name:
            return False
        classes = self.storage_classes
        view = classes.cached("", name) or await classes.get_latest("", name)
        return view is not None and view.obj.allowVolumeExpansion
