"""Where a get or a list is served from, and how fresh it must be: one pure decision per request.

"Semantics for get and list" of Kubernetes API Concepts
(kubernetes.io/docs/reference/using-api/api-concepts/; upstream's Cacher and its shouldDelegateList):

get   resourceVersion unset → Most Recent: the cache, once it holds storage's current revision
      "0"                   → Any: the cache as it is
      N                     → Not older than N: the cache, once it has seen N

list  resourceVersionMatch  limit       unset          "0"     N
      unset                 unset       Most Recent    Any     Not older than
      unset                 n           Most Recent    Any     Exact
      Exact                 unset / n   (invalid)      (inv.)  Exact
      NotOlderThan          unset / n   (invalid)      Any     Not older than
      continue=TOKEN: Exact at the token's revision, from the token's key on.

Most Recent and Not-older-than lists honour limit from the cache (ConsistentListFromCache); Any
ignores it, as upstream's cache does. Exact reads go to storage at that revision — unless nothing
of the resource changed since it, when the cache's state *is* that state. The invalid cells are
refused before a plan is made (params.validate_list_options).
"""

from __future__ import annotations

from dataclasses import dataclass

from protokube.gateway.params import EXACT

CACHE, STORAGE = "cache", "storage"
# How fresh the cache must be before it answers.
CONSISTENT = "consistent"  # storage's current revision (a progress request confirms the cache has it)
NOT_OLDER_THAN = "not-older-than"  # at least ``revision``
ANY = "any"  # as it is
AT_REVISION = "at-revision"  # nothing changed since ``revision``: the cache's state is the state at it


@dataclass(frozen=True, slots=True)
class CacheState:
    ready: bool
    revision: int  # the revision the cache is known to be synced to
    last_change: int  # the revision of the last change to this resource it has seen

    def unchanged_since(self, revision: int) -> bool:
        return self.ready and self.last_change <= revision <= self.revision


@dataclass(frozen=True, slots=True)
class ReadPlan:
    source: str  # CACHE or STORAGE
    freshness: str = ANY  # for the cache
    revision: int = 0  # storage: read at this revision (0: the latest); cache: the revision freshness names
    limit: int = 0  # 0: everything
    start: str = ""  # continue: the key (below the resource's prefix) to resume from
    continuing: bool = False  # the request carried a continue token


# The plans of a most-recent read and of one at any revision (a plan is immutable: one for every request).
MOST_RECENT = ReadPlan(CACHE, CONSISTENT)
ANY_REVISION = ReadPlan(CACHE, ANY)


def plan_get(resource_version: int | None) -> ReadPlan:
    if resource_version is None:
        return MOST_RECENT
    if resource_version == 0:
        return ANY_REVISION
    return ReadPlan(CACHE, NOT_OLDER_THAN, resource_version)


def plan_list(
    resource_version: int | None,
    match: str,
    limit: int,
    continue_at: tuple[int, str] | None,
    cache: CacheState,
) -> ReadPlan:
    """The plan for a validated list request; ``continue_at`` is a decoded continue token."""
    if continue_at is not None:
        revision, start = continue_at
        return _exact(max(revision, 0), limit, start, cache, continuing=True)  # a negative revision: the latest
    if resource_version and (match == EXACT or (not match and limit)):
        return _exact(resource_version, limit, "", cache, continuing=False)
    if resource_version is None:
        return ReadPlan(CACHE, CONSISTENT, limit=limit)
    if resource_version == 0:
        return ANY_REVISION  # limit is ignored: the whole list, as upstream's cache answers it
    return ReadPlan(CACHE, NOT_OLDER_THAN, resource_version, limit)


def _exact(revision: int, limit: int, start: str, cache: CacheState, *, continuing: bool) -> ReadPlan:
    if revision and cache.unchanged_since(revision):
        return ReadPlan(CACHE, AT_REVISION, revision, limit, start, continuing)
    return ReadPlan(STORAGE, ANY, revision, limit, start, continuing)
