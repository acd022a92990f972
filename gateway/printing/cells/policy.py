"""Cells of policy/v1 PodDisruptionBudgets (upstream's printPodDisruptionBudget)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import Row, cell


def int_or_string(value: Message) -> str:
    """intstr.IntOrString.String()."""
    return value.strVal if value.type == 1 else str(value.intVal)


@cell("pdb_min_available")
def pdb_min_available(row: Row) -> str:
    spec = row.obj.spec
    return int_or_string(spec.minAvailable) if spec.HasField("minAvailable") else "N/A"


@cell("pdb_max_unavailable")
def pdb_max_unavailable(row: Row) -> str:
    spec = row.obj.spec
    return int_or_string(spec.maxUnavailable) if spec.HasField("maxUnavailable") else "N/A"
