"""What every cell module shares: the ``Row`` a cell reads, the ``cell`` registry, common formats.

A cell function takes a ``Row`` (the object, the time, and a memo for values several cells share)
and returns the cell value, computed as kubectl users know it from upstream's printers
(kubernetes/pkg/printers/internalversion/printers.go).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from protokube.gateway.printing.humanize import since
from protokube.gateway.selectors import label_selector_text
from protokube.schema import jsonencode

NONE = "<none>"


@dataclass
class Row:
    obj: Message
    now: float = field(default_factory=time.time)
    memo: dict[str, Any] = field(default_factory=dict)


CellFunc = Callable[[Row], Any]
CELLS: dict[str, CellFunc] = {}
# Row conditions by message full name (e.g. Completed for finished pods): kubectl hides such rows unless asked.
ROW_CONDITIONS: dict[str, Callable[[Message], list[dict[str, str]]]] = {}


def cell(name: str) -> Callable[[CellFunc], CellFunc]:
    def register(func: CellFunc) -> CellFunc:
        CELLS[name] = func
        return func

    return register


def time_seconds(value: Message) -> int | None:
    return value.seconds if value.HasField("seconds") else None


@cell("age")
def age(row: Row) -> str:
    return since(time_seconds(row.obj.metadata.creationTimestamp), row.now)


def format_labels(labels: dict[str, str]) -> str:
    """upstream's labels.FormatLabels: sorted key=value pairs, or <none>."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels)) or NONE


def format_label_selector(selector: Message | None) -> str:
    """upstream's metav1.FormatLabelSelector: the selector string, or <none>."""
    if selector is None:
        return NONE
    return label_selector_text(jsonencode.to_dict(selector)) or NONE
