"""apiserver_request_total: every request counted by what it addressed and how it ended."""

from __future__ import annotations

from quart import Response

from gateway.filters import Handler
from gateway.metrics import Metrics
from gateway.request import ApiRequest


class Instrumentation:
    def __init__(self, next_handler: Handler, metrics: Metrics) -> None:
        self.next = next_handler
        self.metrics = metrics

    async def __call__(self, request: ApiRequest) -> Response:
        response = await self.next(request)
        self.metrics.request_done(request, response.status_code)
        return response
