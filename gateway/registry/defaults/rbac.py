"""rbac.authorization.k8s.io/v1 defaults: k8s.io/kubernetes pkg/apis/rbac/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter

RBAC = "k8s.io.api.rbac.v1"
GROUP = "rbac.authorization.k8s.io"


def _role_ref(obj: Message) -> None:
    if not obj.roleRef.apiGroup:
        obj.roleRef.apiGroup = GROUP


defaulter(f"{RBAC}.RoleBinding")(_role_ref)
defaulter(f"{RBAC}.ClusterRoleBinding")(_role_ref)


@defaulter(f"{RBAC}.Subject")
def subject(obj: Message) -> None:
    """Users and groups are of the RBAC group; service accounts of the core group ("")."""
    if not obj.apiGroup and obj.kind in ("User", "Group"):
        obj.apiGroup = GROUP
