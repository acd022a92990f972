"""Cells of apiregistration.k8s.io/v1 APIServices (kube-aggregator's REST.ConvertToTable)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell


@cell("apiservice_service")
def apiservice_service(row: Row) -> str:
    spec = row.obj.spec
    return f"{spec.service.namespace}/{spec.service.name}" if spec.HasField("service") else "Local"


@cell("apiservice_available")
def apiservice_available(row: Row) -> str:
    """The Available condition: "True", "<status> (<reason>)", or "Unknown" without one."""
    condition = next((c for c in row.obj.status.conditions if c.type == "Available"), None)
    if condition is None:
        return "Unknown"
    if condition.status != "True" and condition.reason:
        return f"{condition.status} ({condition.reason})"
    return condition.status
