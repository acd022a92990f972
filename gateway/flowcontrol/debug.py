"""/debug/api_priority_and_fairness/dump_priority_levels, dump_queues and dump_requests
(?includeRequestDetails=1): the comma-terminated columns of the APF documentation's examples, aligned as Go's tabwriter
(minimum width 8, padding 1) aligns them."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence

from protokube.gateway.flowcontrol.controller import Controller
from protokube.gateway.flowcontrol.queueset import NS, Request
from protokube.gateway.request import ApiRequest, Response

NONE = "<none>"
MIN_WIDTH, PADDING = 8, 1
LEVEL_HEADER = ("PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests")
QUEUE_HEADER = ("PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "VirtualStart")
REQUEST_HEADER = (
    "PriorityLevelName",
    "FlowSchemaName",
    "QueueIndex",
    "RequestIndexInQueue",
    "FlowDistingsher",
    "ArriveTime",
)
DETAILS_HEADER = ("UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource")


def table(rows: Sequence[Sequence[object]]) -> str:
    """Each cell ends with a comma; every column but the last is padded to its widest cell."""
    cells = [[f"{cell}," for cell in row] for row in rows]
    columns = max(len(row) for row in cells)
    widths = [max(MIN_WIDTH, max(len(row[i]) for row in cells if len(row) > i) + PADDING) for i in range(columns)]
    lines = []
    for row in cells:
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("".join(padded) + row[-1])
    return "\n".join(lines) + "\n"


def rfc3339_nano(unix: float) -> str:
    moment = datetime.datetime.fromtimestamp(unix, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".") + "Z"


def _bool(value: bool) -> str:
    return str(value).lower()


class DebugDumps:
    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def _levels(self) -> list:
        return sorted(self.controller.levels.values(), key=lambda level: level.name)

    def priority_levels(self) -> str:
        rows: list[Sequence[object]] = [LEVEL_HEADER]
        for level in self._levels():
            if level.config.exempt:
                rows.append((level.name, NONE, NONE, NONE, NONE, NONE))
                continue
            qs = level.queues
            active = sum(1 for q in qs.queues if not q.empty)
            rows.append(
                (level.name, active, _bool(qs.idle), _bool(level.quiescing), qs.requests_waiting, qs.requests_executing)
            )
        return table(rows)

    def queues(self) -> str:
        rows: list[Sequence[object]] = [QUEUE_HEADER]
        for level in self._levels():
            for queue in level.queues.queues:
                rows.append(
                    (level.name, queue.index, len(queue.waiting), queue.executing, f"{queue.next_dispatch_r / NS:.4f}")
                )
        return table(rows)

    def requests(self, details: bool) -> str:
        header = REQUEST_HEADER + DETAILS_HEADER if details else REQUEST_HEADER
        rows: list[Sequence[object]] = [header]
        for level in self._levels():
            if level.config.exempt:
                rows.append((level.name, *[NONE] * (len(REQUEST_HEADER) - 1)))
                continue
            for queue in level.queues.queues:
                for position, request in enumerate(queue.waiting):
                    rows.append(
                        (level.name, request.flow_schema, queue.index, position, *_request_cells(request, details))
                    )
        return table(rows)

    # ---- routes --------------------------------------------------------------------------------
    def routes(self) -> dict[tuple[str, ...], object]:
        prefix = ("debug", "api_priority_and_fairness")

        async def levels(request: ApiRequest) -> Response:
            return _text(self.priority_levels())

        async def queues(request: ApiRequest) -> Response:
            return _text(self.queues())

        async def requests(request: ApiRequest) -> Response:
            return _text(self.requests(request.args.get("includeRequestDetails") == "1"))

        return {
            (*prefix, "dump_priority_levels"): levels,
            (*prefix, "dump_queues"): queues,
            (*prefix, "dump_requests"): requests,
        }


def _request_cells(request: Request, details: bool) -> Iterable[object]:
    yield request.distinguisher
    yield rfc3339_nano(request.arrive_time)
    if details:
        verb, path, namespace, name, version, resource, subresource = request.details
        yield from (request.user, verb, path, namespace, name, version, resource, subresource)


def _text(body: str) -> Response:
    return Response(body, 200, content_type="text/plain; charset=utf-8")
