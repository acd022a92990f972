"""Cells of scheduling.k8s.io/v1 PriorityClasses (upstream's printPriorityClass)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell


@cell("priorityclass_global_default")
def priorityclass_global_default(row: Row) -> bool:
    return row.obj.globalDefault


@cell("priorityclass_preemption_policy")
def priorityclass_preemption_policy(row: Row) -> str:
    """preemptionPolicy, which upstream's defaulting sets to PreemptLowerPriority."""
    return row.obj.preemptionPolicy if row.obj.HasField("preemptionPolicy") else "PreemptLowerPriority"
