"""certificatesigningrequests/approval: approve or deny a request (upstream's ApprovalREST).

A write here changes only status.conditions (Approved, Denied, ...); spec, the issued certificate
and the protected metadata stay as stored. Conditions get their timestamps when the writer left
them unset, as upstream's populateConditionTimestamps does.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.rest import UpdatedObject
from protokube.gateway.registry.store import Store, now_seconds
from protokube.gateway.registry.strategy import STATUS_PROTECTED_METADATA


def _keep_all_but_conditions(new: Message, old: Message) -> None:
    conditions = list(new.status.conditions)
    metadata = type(new.metadata)()
    metadata.CopyFrom(new.metadata)
    new.CopyFrom(old)
    new.metadata.CopyFrom(metadata)
    for name in STATUS_PROTECTED_METADATA:
        new.metadata.ClearField(name)
        getattr(new.metadata, name).MergeFrom(getattr(old.metadata, name))
    del new.status.conditions[:]
    new.status.conditions.extend(conditions)
    _stamp(new.status.conditions, old.status.conditions)


def _stamp(conditions: Any, before: Any) -> None:
    """Unset lastUpdateTime becomes now; unset lastTransitionTime is kept from the same condition
    before if its status did not change, else now."""
    now = now_seconds()
    previous = {(c.type, c.status): c for c in before}
    for condition in conditions:
        if not condition.lastUpdateTime.seconds:
            condition.lastUpdateTime.seconds = now
        if not condition.lastTransitionTime.seconds:
            same = previous.get((condition.type, condition.status))
            if same is not None and same.lastTransitionTime.seconds:
                condition.lastTransitionTime.CopyFrom(same.lastTransitionTime)
            else:
                condition.lastTransitionTime.seconds = now


class ApprovalStore:
    """get, update and patch of certificatesigningrequests/approval."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.codec = store.codec

    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        return await self.store.get(namespace, name, resource_version)

    async def update(
        self, namespace: str, name: str, updated: UpdatedObject, options: WriteOptions
    ) -> tuple[ObjectView, bool]:
        return await self.store.guaranteed_update(
            namespace, name, updated, options, _keep_all_but_conditions, subresource="approval"
        )
