"""GET ?watch=true: a stream of watch events from the watch cache, until the timeout or the client leaves.

The API concepts' "Efficient detection of changes", "Watch bookmarks", "Streaming lists".
- resourceVersion unset / "0": the state as synthetic ADDED events (consistent / any), then changes;
  with allowWatchBookmarks, a BOOKMARK annotated k8s.io/initial-events-end marks where the state ends.
- resourceVersion N: changes after N only; N older than the cache's window: an ERROR event with a
  410 Expired Status (the HTTP status stays 200).
- BOOKMARK events (allowWatchBookmarks=true) about once a minute and just before the timeout.
Frames are encoded once per event and format and shared by every watcher.
Over a WebSocket (gateway/websocket.py) each frame goes out as one message. Over an HTTP server that
offers ``write_now`` (gateway/asgi.py: the native HTTP/1.1 server's), the fan-out's rounds write live
changes straight to the connection while it takes them, without waking the response's task.
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from protokube.gateway.handlers.common import info_of
from protokube.gateway.negotiation import negotiate
from protokube.gateway.params import list_options, validate_list_options
from protokube.gateway.registry.rest import Watcher
from protokube.gateway.representation import WatchFrames
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.scope import RequestScope
from protokube.gateway.watchcache.cacher import WatchStream
from protokube.gateway.watchcache.watcher import Item

# Writes a streamed response's next chunk, made by the callable, if the connection takes it now;
# whether it did (the ASGI server's extension: gateway/serving/http1.py).
WriteNow = Callable[[Callable[[], bytes]], bool]

T = TypeVar("T")
MAX_WRITE_BYTES = 1 << 20  # the initial events' frames per write: a slow reader holds about one write


def watch_timeout(requested: int | None, min_request_timeout: float) -> float:
    """How long a watch lasts: its timeoutSeconds, else min-request-timeout × [1, 2)."""
    if requested:
        return float(requested)
    return min_request_timeout * (1 + random.random())


async def watch(storage: Watcher, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiate.watch_target(request.header("Accept"), request.pretty, scope.formats)
    options = validate_list_options(list_options(request.query()))
    frames = WatchFrames(request, scope, target)
    deadline = time.monotonic() + watch_timeout(options.timeout_seconds, request.min_request_timeout)
    stream = await storage.watch(scope.namespace(info_of(request)), options, deadline)
    return WatchResponse(WatchEvents(request, stream, frames))


class WatchEvents:
    """One watch's events, encoded, as its transport writes them: ``chunks()`` for an HTTP body (the
    frames ready together in one write), ``batches()`` for a WebSocket (one message a frame:
    gateway/websocket.py). Whichever is read ends the watch when it ends; ``close()`` ends it unread."""

    def __init__(self, request: ApiRequest, stream: WatchStream, frames: WatchFrames) -> None:
        self.request = request
        self.stream = stream
        self.frames = frames
        self.write_now: WriteNow | None = None  # set by the HTTP transport that offers it
        self._closed = False

    def chunks(self) -> AsyncIterator[bytes]:
        return self._writes(b"".join, body=True)

    def batches(self) -> AsyncIterator[list[bytes]]:
        return self._writes(list, body=False)

    async def _writes(self, write: Callable[[list[bytes]], T], body: bool) -> AsyncIterator[T]:
        """The writes; in an HTTP ``body`` whose server offers ``write_now``, live changes are
        written by the fan-out's rounds themselves while the connection takes them (``_push``)."""
        stream, frames = self.stream, self.frames
        try:
            if stream.error is not None:
                yield write([frames.error(stream.error)])
                return
            pending: list[bytes] = []
            size = 0
            for view in stream.initial:  # written a MAX_WRITE_BYTES at a time, each once the last is taken
                frame = frames.object("ADDED", view)
                pending.append(frame)
                size += len(frame)
                if size >= MAX_WRITE_BYTES:
                    yield self._sent(pending, write)
                    pending, size = [], 0
            if stream.initial_end is not None:
                pending.append(frames.initial_events_end(stream.initial_end))
            if pending:
                yield self._sent(pending, write)
            self.request.watch_initialized()
            if body and self.write_now is not None and stream.watcher is not None:
                stream.watcher.push = self._push
            async for batch in stream.batches():
                yield self._sent(frames.items(batch), write)
        finally:
            self.close()

    def _push(self, take: Callable[[], list[Item]]) -> bool:
        """The watcher's batch written at once, if the connection takes it now (``write_now``)."""
        assert self.write_now is not None
        return self.write_now(lambda: self._sent(self.frames.items(take()), b"".join))

    def _sent(self, written: list[bytes], write: Callable[[list[bytes]], T]) -> T:
        self.stream.sent(len(written), sum(map(len, written)))
        return write(written)

    def close(self) -> None:
        """End the watch (its watcher released, its seats given back); once, however often called."""
        if not self._closed:
            self._closed = True
            self.stream.close()
            self.request.stream_ended()


class WatchResponse(Response):
    """A watch's 200: its events as a streamed body, or one by one from ``events``."""

    def __init__(self, events: WatchEvents) -> None:
        super().__init__(events.chunks(), status=200, content_type=events.frames.encoder.watch_content_type)
        self.headers["Cache-Control"] = "no-cache, private"
        self.events = events
