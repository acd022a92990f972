"""Cells of the apps/v1 workloads served after apps.py's Deployment: daemon sets, stateful sets,
controller revisions (replica sets use apps.py's and core_kinds.py's cells)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import NONE, Row, cell, format_labels


@cell("template_node_selector")
def template_node_selector(row: Row) -> str:
    return format_labels(dict(row.obj.spec.template.spec.nodeSelector))


@cell("statefulset_ready")
def statefulset_ready(row: Row) -> str:
    spec = row.obj.spec
    desired = spec.replicas if spec.HasField("replicas") else 1  # upstream's default
    return f"{row.obj.status.readyReplicas}/{desired}"


@cell("controllerrevision_controller")
def controllerrevision_controller(row: Row) -> str:
    """The controlling owner as group kind/name, lower-cased (upstream's formatResourceName)."""
    owner = next((o for o in row.obj.metadata.ownerReferences if o.HasField("controller") and o.controller), None)
    if owner is None:
        return NONE
    group = owner.apiVersion.rpartition("/")[0]
    group_kind = f"{owner.kind}.{group}" if group else owner.kind
    return f"{group_kind.lower()}/{owner.name}" if group_kind else owner.name


@cell("controllerrevision_revision")
def controllerrevision_revision(row: Row) -> int:
    return row.obj.revision
