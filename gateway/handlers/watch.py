"""GET ?watch=true: a stream of watch events from the watch cache, until the timeout or the client leaves.

Seed: "Efficient detection of changes", "Watch bookmarks", "Streaming lists".
- resourceVersion unset / "0": the state as synthetic ADDED events (consistent / any), then changes;
  with allowWatchBookmarks, a BOOKMARK annotated k8s.io/initial-events-end marks where the state ends.
- resourceVersion N: changes after N only; N older than the cache's window: an ERROR event with a
  410 Expired Status (the HTTP status stays 200).
- BOOKMARK events (allowWatchBookmarks=true) about once a minute and just before the timeout.
Frames are encoded once per event and format and shared by every watcher.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from quart import Response

from gateway.filters.timeout import watch_timeout
from gateway.handlers.common import info_of
from gateway.negotiation import negotiate
from gateway.params import list_options, validate_list_options
from gateway.registry.rest import Watcher
from gateway.representation import WatchFrames
from gateway.request import ApiRequest
from gateway.scope import RequestScope


async def watch(request: ApiRequest, scope: RequestScope) -> Response:
    target = negotiate.watch_target(request.header("Accept"), request.pretty, scope.formats)
    storage: Watcher = scope.storage  # type: ignore[assignment]
    options = validate_list_options(list_options(request.query()))
    frames = WatchFrames(request, scope, target)
    deadline = time.monotonic() + watch_timeout(options.timeout_seconds, request.min_request_timeout)
    stream = await storage.watch(scope.namespace(info_of(request)), options, deadline)

    async def body() -> AsyncIterator[bytes]:
        try:
            if stream.error is not None:
                yield frames.error(stream.error)
                return
            initial = [frames.object("ADDED", view) for view in stream.initial]
            if stream.initial_end is not None:
                initial.append(frames.initial_events_end(stream.initial_end))
            if initial:
                frame = b"".join(initial)
                stream.sent(len(initial), len(frame))
                yield frame
            request.watch_initialized()
            async for batch in stream.batches():
                frame = frames.items(batch)
                stream.sent(len(batch), len(frame))
                yield frame
        finally:
            stream.close()
            request.stream_ended()

    response = Response(body(), status=200, content_type=target.encoder.watch_content_type)
    response.headers["Cache-Control"] = "no-cache, private"
    response.timeout = None
    return response
