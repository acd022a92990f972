"""Cells of rbac.authorization.k8s.io/v1 RoleBindings and ClusterRoleBindings."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell


@cell("binding_role")
def binding_role(row: Row) -> str:
    ref = row.obj.roleRef
    return f"{ref.kind}/{ref.name}"


def _subjects(row: Row, kind: str) -> str:
    """upstream's rbac.SubjectsStrings, joined with ", "; service accounts as namespace/name."""
    names = []
    for subject in row.obj.subjects:
        if subject.kind == kind:
            names.append(f"{subject.namespace}/{subject.name}" if kind == "ServiceAccount" else subject.name)
    return ", ".join(names)


@cell("binding_users")
def binding_users(row: Row) -> str:
    return _subjects(row, "User")


@cell("binding_groups")
def binding_groups(row: Row) -> str:
    return _subjects(row, "Group")


@cell("binding_service_accounts")
def binding_service_accounts(row: Row) -> str:
    return _subjects(row, "ServiceAccount")
