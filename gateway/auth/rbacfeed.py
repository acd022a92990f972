"""The RBAC index kept in step with storage: one informer per RBAC kind feeds it."""

from __future__ import annotations

from collections.abc import Iterable

from protokube.gateway.auth.rbac import RBACIndex
from protokube.gateway.objects.view import ObjectView

# The RBAC kinds and their resources.
RBAC_KINDS = {
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}


class KindFeed:
    """An informer's sink that puts one kind's objects into the index, as JSON values."""

    def __init__(self, index: RBACIndex, kind: str) -> None:
        self.index = index
        self.kind = kind

    def replace(self, views: Iterable[ObjectView]) -> None:
        self.index.clear(self.kind)
        for view in views:
            self.changed("ADDED", view)

    def changed(self, event_type: str, view: ObjectView) -> None:
        obj = view.obj
        value = None if event_type == "DELETED" else view.codec.to_dict(obj)
        self.index.put(self.kind, value, obj.metadata.namespace, obj.metadata.name)
