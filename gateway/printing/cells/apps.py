"""Cells of apps/v1 workloads (and the pod-template columns other workloads share)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell, format_label_selector


@cell("deployment_ready")
def deployment_ready(row: Row) -> str:
    spec = row.obj.spec
    desired = spec.replicas if spec.HasField("replicas") else 1
    return f"{row.obj.status.readyReplicas}/{desired}"


@cell("deployment_updated")
def deployment_updated(row: Row) -> int:
    """An int in a column upstream types "string" (printers.go's deployment columns)."""
    return row.obj.status.updatedReplicas


@cell("deployment_available")
def deployment_available(row: Row) -> int:
    return row.obj.status.availableReplicas


@cell("template_containers")
def template_containers(row: Row) -> str:
    return ",".join(c.name for c in row.obj.spec.template.spec.containers)


@cell("template_images")
def template_images(row: Row) -> str:
    return ",".join(c.image for c in row.obj.spec.template.spec.containers)


@cell("label_selector")
def label_selector(row: Row) -> str:
    spec = row.obj.spec
    return format_label_selector(spec.selector if spec.HasField("selector") else None)
