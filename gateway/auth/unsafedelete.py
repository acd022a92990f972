"""The unsafe deletion of a corrupt object (upstream's corruptObjectDeleter), behind the feature gate
AllowUnsafeMalformedObjectDeletion.

A DELETE with ``ignoreStoreReadErrorWithClusterBreakingPotential=true`` removes an object whose
stored bytes cannot be decoded, skipping finalizers, preconditions and garbage collection: whatever
depends on the object is left as it is, which may break the cluster. It needs the verb
``unsafe-delete-ignore-read-errors`` on the resource besides ``delete``, and it refuses an object
that can be read (a normal delete is the way for those).
"""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.auth.rbac import Attributes
from protokube.gateway.errors import FieldError
from protokube.gateway.params import IGNORE_READ_ERROR, DeleteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.corrupt import CorruptObject
from protokube.gateway.user import UserInfo

VERB = "unsafe-delete-ignore-read-errors"
ONLY_CORRUPT = "is exclusively used to delete corrupt object(s), try again by removing this option"


class UnsafeDeleter:
    def __init__(self, store: Store, authorizer: Authorizer) -> None:
        self.store = store
        self.authorizer = authorizer

    def authorize(self, user: UserInfo, namespace: str, name: str) -> None:
        """403 unless ``user`` may do unsafe-delete-ignore-read-errors on this object."""
        resource = self.store.resource
        attributes = Attributes(user, VERB, True, resource.group, resource.plural, "", namespace, name)
        decision = self.authorizer.authorize(attributes)
        if not decision.allowed:
            reason = f'not permitted to do "{VERB}", reason: {decision.reason}'
            raise errors.forbidden(resource.group, resource.plural, name, reason)

    async def delete(self, namespace: str, name: str, options: DeleteOptions) -> bool:
        """Remove the corrupt object; 422 when the object can be read (or is not there). Returns
        whether this request removed it (False: someone else did meanwhile)."""
        resource = self.store.resource
        try:
            await self.store.storage.get_latest(namespace, name)
        except CorruptObject:
            pass
        else:
            problem = FieldError.invalid(IGNORE_READ_ERROR, True, ONLY_CORRUPT)
            raise errors.invalid(resource.group, resource.plural, name, [problem])
        await self.store.admit_delete(namespace, name, None, options)
        return await self.store.storage.remove_unreadable(namespace, name)
