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

import random
import time
from collections.abc import AsyncIterator

from quart import Response

from gateway import errors
from gateway.context import RequestContext
from gateway.negotiation import negotiate
from gateway.params import list_options, parse_resource_version, validate_list_options
from gateway.reads import request_filter, too_large
from gateway.representation import WatchFrames
from gateway.watchcache.cache import TooLargeResourceVersion
from gateway.watchcache.watcher import CacheWatcher

# upstream: --min-request-timeout; a watch without timeoutSeconds lasts [1, 2) times this.
MIN_REQUEST_TIMEOUT = 1800
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
LIST_BLUEPRINT = "kubernetes.io/initial-events-list-blueprint"


def watch_timeout(requested: int | None) -> float:
    if requested:
        return float(requested)
    return MIN_REQUEST_TIMEOUT * (1 + random.random())


async def watch(ctx: RequestContext) -> Response:
    target = negotiate.watch_target(ctx.request.headers.get("Accept"), ctx.pretty, ctx.gateway.formats)
    encoder = target.encoder
    options = validate_list_options(list_options(ctx.query()))
    flt = request_filter(ctx, options)
    cache = ctx.gateway.cache(ctx.resource)
    frames = WatchFrames(ctx, target)
    deadline = time.monotonic() + watch_timeout(options.timeout_seconds)
    revision = parse_resource_version(options.resource_version)
    bookmarks = options.allow_watch_bookmarks
    initial: list[bytes] = []
    error: errors.StatusError | None = None
    try:
        if options.send_initial_events:
            if revision is None:
                await ctx.gateway.wait_fresh(cache)
            else:
                await cache.wait_for(revision, max(deadline - time.monotonic(), 0))
        else:
            await cache.wait_ready()
    except TooLargeResourceVersion as err:
        raise too_large(err.requested, err.current, 1) from None

    # From here to add_watcher nothing awaits: the snapshot and the watcher see the same revision.
    if options.send_initial_events:
        start = cache.revision
        initial = [frames.object("ADDED", entry.view) for entry in cache.select(flt)]
        if bookmarks:
            annotations = {INITIAL_EVENTS_END: "true"}
            annotations[LIST_BLUEPRINT] = frames.list_blueprint()
            initial.append(frames.bookmark(start, annotations))
    else:
        start = revision or 0
        if start < cache.window_start:
            error = errors.expired(f"too old resource version: {start} ({cache.window_start})")
    watcher = CacheWatcher(
        flt,
        frames.event,
        frames.bookmark if bookmarks else None,
        deadline,
        start,
        bookmark_interval=ctx.gateway.bookmark_interval,
    )
    if error is None:
        if not options.send_initial_events:
            for event in cache.events_after(start):
                watcher.offer(event)
        cache.add_watcher(watcher)

    async def body() -> AsyncIterator[bytes]:
        ctx.gateway.metrics.watchers_opened(ctx.resource)
        try:
            if error is not None:
                yield frames.error(error)
                return
            if initial:
                yield b"".join(initial)
            async for chunk in watcher.frames():
                yield chunk
        finally:
            cache.remove_watcher(watcher)
            ctx.gateway.metrics.watchers_closed(ctx.resource)

    response = Response(body(), status=200, content_type=encoder.watch_content_type)
    response.headers["Cache-Control"] = "no-cache, private"
    response.timeout = None
    return response
