"""Every request measured by what it addressed and how it ended (upstream's MonitorRequest):
apiserver_request_total, apiserver_request_duration_seconds, apiserver_response_sizes, requests in
flight, and long-running watches until their stream ends."""

from __future__ import annotations

import time

from protokube.gateway.metrics import Metrics, request_labels
from protokube.gateway.request import ApiRequest, Handler, Response


class Instrumentation:
    def __init__(self, next_handler: Handler, metrics: Metrics) -> None:
        self.next = next_handler
        self.metrics = metrics

    async def __call__(self, request: ApiRequest) -> Response:
        started = time.monotonic()
        in_flight = self.metrics.in_flight(request)
        in_flight.inc()
        try:
            response = await self.next(request)
        finally:
            in_flight.dec()
        labels = request_labels(request)  # what the request addressed is known now
        size = response.content_length  # None for a streamed body
        if labels.verb == "WATCH" and size is None:  # the watch goes on after this returns
            request.on_stream_end.append(self.metrics.watch_started(labels))
        self.metrics.request_finished(request, labels, response.status_code, time.monotonic() - started, size)
        return response
