"""Where each get and list is served from, and at which revision (seed: "Resource versions").

get:  unset → Most Recent (the cache, once it has caught up with storage), "0" → Any (the cache
      as it is), N → Not older than N (the cache, once it has seen N; 504 if it does not soon).
list: the seed's table — Exact (resourceVersionMatch=Exact, or limit with a resourceVersion and
      no match) and continue tokens read storage at that revision; everything else is served
      from the cache: "0" ignores limit, unset is a consistent read, N is not-older-than.
Pages from storage or cache carry continue tokens at the first page's revision, so every page of
a list is one snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

from gateway import errors
from gateway.context import RequestContext
from gateway.objects import ObjectView
from gateway.params import EXACT, ListOptions, list_options, parse_resource_version, validate_list_options
from gateway.selectors import Filter, field_selector, label_selector
from gateway.storage import continuetoken, keys
from gateway.storage.continuetoken import ContinueTokenError
from gateway.storage.etcd import Compacted, FutureRevision, prefix_end
from gateway.watchcache.cache import TooLargeResourceVersion, WatchCache
from gateway.watchcache.entries import entry_fields, make_entry

LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)
# Storage pages read while filtering by selectors (upstream grows them as needed; a fixed size is enough).
SELECTOR_PAGE = 500


@dataclass
class Listed:
    items: list[ObjectView]
    list_meta: meta.ListMeta


def set_continue(list_meta: meta.ListMeta, token: str) -> None:
    setattr(list_meta, "continue", token)


def too_large(requested: int, current: int, retry_after: int) -> errors.StatusError:
    """504 Timeout: Too large resource version (upstream's storage.NewTooLargeResourceVersionError)."""
    error = errors.timeout(f"Too large resource version: {requested}, current: {current}", retry_after)
    error.status.details.causes.add(reason="ResourceVersionTooLarge", message="Too large resource version")
    return error


def request_filter(ctx: RequestContext, options: ListOptions) -> Filter:
    return Filter(
        ctx.namespace,
        label_selector(options.label_selector),
        field_selector(options.field_selector, ctx.resource.selectable_fields),
    )


async def _catch_up(ctx: RequestContext, cache: WatchCache, revision: int | None) -> bool:
    """Bring the cache to what the resourceVersion asks for: unset → storage's current revision,
    N → at least N, 0 → as it is. False when a consistent read cannot be served from the cache in
    time (the caller reads storage instead); 504 Too large resource version for a given N."""
    try:
        if revision is None:
            await ctx.gateway.wait_fresh(cache)
        elif revision > 0:
            await cache.wait_for(revision)
        else:
            await cache.wait_ready()
    except TooLargeResourceVersion as err:
        if revision is None:
            return False
        raise too_large(err.requested, err.current, 1) from None
    return True


async def read_object(ctx: RequestContext) -> ObjectView:
    revision = parse_resource_version(ctx.request.args.get("resourceVersion"))
    cache = ctx.gateway.cache(ctx.resource)
    if not await _catch_up(ctx, cache, revision):
        return await ctx.store.get(ctx.namespace, ctx.info.name)
    entry = cache.get(ctx.namespace, ctx.info.name)
    if entry is None:
        raise errors.not_found(ctx.resource, ctx.info.name)
    return entry.view


async def list_objects(ctx: RequestContext, all_items: bool = False) -> Listed:
    options = validate_list_options(list_options(ctx.query()))
    flt = request_filter(ctx, options)
    limit = 0 if all_items else options.limit
    if options.continue_token:
        return await _continue_list(ctx, flt, options.continue_token, limit)
    revision = parse_resource_version(options.resource_version)
    exact = options.resource_version_match == EXACT or (not options.resource_version_match and limit and revision)
    if exact and revision:
        return await storage_list(ctx, flt, revision, limit)
    cache = ctx.gateway.cache(ctx.resource)
    if not await _catch_up(ctx, cache, revision):
        return await storage_list(ctx, flt, 0, limit)
    if revision == 0:
        limit = 0  # resourceVersion=0 is served whole from the cache
    return cache_list(cache, flt, limit)


def cache_list(cache: WatchCache, flt: Filter, limit: int, start: str = "", revision: int = 0) -> Listed:
    """A list from the cache's current state (which is the state at ``revision``, when given)."""
    revision = revision or cache.revision
    items, last_key, more = [], "", False
    for entry in cache.select(flt, start):
        if limit and len(items) == limit:
            more = True
            break
        items.append(entry.view)
        last_key = entry.key
    list_meta = meta.ListMeta(resourceVersion=str(revision))
    if more:
        set_continue(list_meta, continuetoken.encode(revision, last_key + "\x00"))
        if not flt.has_selectors:
            list_meta.remainingItemCount = sum(1 for _ in cache.entries(flt.namespace, last_key + "\x00"))
    return Listed(items, list_meta)


async def _continue_list(ctx: RequestContext, flt: Filter, token: str, limit: int) -> Listed:
    try:
        revision, start = continuetoken.decode(token)
    except ContinueTokenError as err:
        raise errors.bad_request(f"invalid continue token: {err}") from None
    namespace_prefix = f"{flt.namespace}/" if flt.namespace and ctx.resource.namespaced else ""
    if not start.startswith(namespace_prefix):
        raise errors.bad_request(f"invalid continue token: {continuetoken.INVALID}: {start}")
    try:
        return await storage_list(ctx, flt, max(revision, 0), limit, start)
    except errors.StatusError as err:
        if err.code == 410 and revision > 0:
            error = errors.expired(CONTINUE_TOO_OLD)
            set_continue(error.status.metadata, continuetoken.encode(-1, start))
            raise error from None
        raise


async def storage_list(ctx: RequestContext, flt: Filter, revision: int, limit: int, start: str = "") -> Listed:
    """A list as it was at ``revision`` (0: the latest), from the key ``start`` on.

    When nothing of this resource changed since ``revision``, the cache's state is that state and
    serves it; otherwise storage does, reusing the cache's encodings of objects that did not change.
    """
    cache = ctx.gateway.cache(ctx.resource)
    if revision and cache.unchanged_since(revision):
        return cache_list(cache, flt, limit, start, revision)
    resource, etcd = ctx.resource, ctx.gateway.etcd
    root = keys.collection_prefix(resource)
    prefix = keys.collection_prefix(resource, flt.namespace)
    end = prefix_end(prefix)
    cursor = root + start.encode() if start else prefix
    hooks = ctx.store.hooks
    items: list[ObjectView] = []
    last_key, more, remaining = b"", False, None
    page_limit = (max(limit, SELECTOR_PAGE) if flt.has_selectors else limit) if limit else 0
    try:
        while True:
            page = await etcd.list(cursor, end, revision=revision, limit=page_limit)
            revision = revision or page.revision
            for index, kv in enumerate(page.kvs):
                key = kv.key[len(root) :].decode()
                cached = cache.get_key(key)  # unchanged since the cache saw it: reuse its encodings
                if cached is not None and cached.resource_version == kv.mod_revision:
                    entry, view = cached, cached.view
                else:
                    entry, view = None, ctx.store.view(kv)
                if flt.has_selectors:
                    entry = entry or make_entry(key, view, hooks)
                    if not flt.matches(entry.namespace, entry.labels, lambda e=entry: entry_fields(e)):
                        last_key = kv.key
                        continue
                items.append(view)
                last_key = kv.key
                if limit and len(items) == limit:
                    more = page.more or index < len(page.kvs) - 1
                    if not flt.has_selectors:
                        remaining = page.count - (index + 1)
                    break
            else:
                if page.more and (not limit or len(items) < limit):
                    cursor = page.kvs[-1].key + b"\x00"
                    continue
            break
    except Compacted:
        raise errors.expired(LIST_TOO_OLD) from None
    except FutureRevision:
        raise too_large(revision, await etcd.current_revision(), 0) from None
    list_meta = meta.ListMeta(resourceVersion=str(revision))
    if more:
        set_continue(list_meta, continuetoken.encode(revision, last_key[len(root) :].decode() + "\x00"))
        if remaining:
            list_meta.remainingItemCount = remaining
    return Listed(items, list_meta)
