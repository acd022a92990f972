"""Cells of flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations.

Their printers read fields upstream's defaulting always sets (a FlowSchema's matchingPrecedence
1000; a limited level's nominalConcurrencyShares 30 and queuing 64 queues, hand size 8, queue
length limit 50); the cells apply the same defaults.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import NONE, Row, cell

DEFAULT_MATCHING_PRECEDENCE = 1000
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
DEFAULT_QUEUES, DEFAULT_HAND_SIZE, DEFAULT_QUEUE_LENGTH_LIMIT = 64, 8, 50


@cell("flowschema_matching_precedence")
def flowschema_matching_precedence(row: Row) -> int:
    return row.obj.spec.matchingPrecedence or DEFAULT_MATCHING_PRECEDENCE


@cell("flowschema_distinguisher_method")
def flowschema_distinguisher_method(row: Row) -> str:
    spec = row.obj.spec
    return spec.distinguisherMethod.type if spec.HasField("distinguisherMethod") else NONE


@cell("flowschema_missing_pl")
def flowschema_missing_pl(row: Row) -> str:
    """The status of the Dangling condition, "?" without one."""
    return next((c.status for c in row.obj.status.conditions if c.type == "Dangling"), "?")


def _queuing(row: Row) -> Message | None:
    spec = row.obj.spec
    if spec.HasField("limited") and spec.limited.limitResponse.HasField("queuing"):
        return spec.limited.limitResponse.queuing
    return None


@cell("plc_nominal_concurrency_shares")
def plc_nominal_concurrency_shares(row: Row) -> int | str:
    spec = row.obj.spec
    if not spec.HasField("limited"):
        return NONE
    limited = spec.limited
    return (
        limited.nominalConcurrencyShares
        if limited.HasField("nominalConcurrencyShares")
        else (DEFAULT_NOMINAL_CONCURRENCY_SHARES)
    )


@cell("plc_queues")
def plc_queues(row: Row) -> int | str:
    queuing = _queuing(row)
    return NONE if queuing is None else queuing.queues or DEFAULT_QUEUES


@cell("plc_hand_size")
def plc_hand_size(row: Row) -> int | str:
    queuing = _queuing(row)
    return NONE if queuing is None else queuing.handSize or DEFAULT_HAND_SIZE


@cell("plc_queue_length_limit")
def plc_queue_length_limit(row: Row) -> int | str:
    queuing = _queuing(row)
    return NONE if queuing is None else queuing.queueLengthLimit or DEFAULT_QUEUE_LENGTH_LIMIT
