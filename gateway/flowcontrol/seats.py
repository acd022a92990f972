"""How many seats a request occupies, and for how long (k8s.io/apiserver pkg/util/flowcontrol/request).

- A named GET, and anything not listed below: 1 seat.
- LIST (and WATCH with sendInitialEvents=true, WatchList being on in 1.32): the objects it will
  process, from the watch cache's count: all of them when served from the cache, count + limit
  from storage with a selector, 2 × limit without; one seat per 100 objects.
- create/update/patch/delete: 1 seat while executing, then, if 10 or more watchers will get the
  event, ceil(watchers / 10) seats for 5 ms per uncapped seat spread over the capped ones.
All between 1 and the level's maximum (at most 10).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Final

from protokube.gateway.errors import StatusError
from protokube.gateway.requestinfo import RequestInfo, parse_bool

MINIMUM_SEATS: Final = 1
MAXIMUM_SEATS_LIMIT: Final = 10
OBJECTS_PER_SEAT: Final = 100.0
WATCHES_PER_SEAT: Final = 10.0
EVENT_ADDITIONAL_DURATION: Final = 0.005  # seconds per watcher-seat
MAX_SEATS_FRACTION: Final = 0.15  # of a level's nominal limit
MUTATING_VERBS: Final = frozenset({"create", "update", "patch", "delete"})
ESTIMATED_SERVICE_DURATION: Final = 3_000_000  # G: nanoseconds a seat is guessed to be held (fair queuing's)
NS: Final = 1_000_000_000


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class WorkEstimate:
    def __init__(
        self, initial_seats: int, final_seats: int = 0, additional_latency: float = 0.0, watchers: int | None = None
    ) -> None:
        self.initial_seats = initial_seats
        self.final_seats = final_seats
        self.additional_latency = additional_latency  # seconds the final seats are held after the request ends
        self.watchers = watchers  # a write's: the watches its event may reach (None: not a write)
        self.max_seats = max(initial_seats, final_seats)  # the most seats it occupies
        # Seat-nanoseconds, as fair queuing reckons it: the initial seats' guessed service time + the final seats' hold.
        work = initial_seats * ESTIMATED_SERVICE_DURATION
        if final_seats:
            work += round(final_seats * additional_latency * NS)
        self.work = work


ONE_SEAT: Final = WorkEstimate(MINIMUM_SEATS)


def fixed_estimate(verb: str, is_resource_request: bool) -> WorkEstimate | None:
    """The estimate of every request of this verb and kind of target when it needs nothing more
    (a named GET, a non-resource request...: one seat); None when it depends on the request."""
    if is_resource_request and (verb == "list" or verb == "watch" or verb in MUTATING_VERBS):
        return None
    return ONE_SEAT


def level_max_seats(nominal_limit: int, hand_size: int) -> int:
    """A queuing level's largest request: max(1, min(ceil(15% of its nominal limit), limit / handSize))."""
    return int(max(1, min(math.ceil(nominal_limit * MAX_SEATS_FRACTION), nominal_limit // hand_size)))


def list_from_storage(query: Mapping[str, str]) -> bool:
    """upstream's shouldListFromStorage with consistent reads served by the cache (1.32)."""
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    limit = _int(query.get("limit"))
    legacy_exact = limit > 0 and not match and rv not in ("", "0")
    unsupported = (match not in ("", "NotOlderThan")) or legacy_exact
    return bool(query.get("continue")) or unsupported


def _int(value: str | None) -> int:
    try:
        return int(value) if value else 0
    except ValueError:
        return 0


class WorkEstimator:
    """``object_count(group_resource)`` is the cached object count (None: not cached);
    ``watch_count(info)`` the watchers of what a write changes."""

    def __init__(
        self,
        object_count: Callable[[str], int | None],
        watch_count: Callable[[RequestInfo], int],
    ) -> None:
        self.object_count = object_count
        self.watch_count = watch_count

    def estimate(self, info: RequestInfo, query: Mapping[str, str], max_seats: int) -> WorkEstimate:
        fixed = fixed_estimate(info.verb, info.is_resource_request)
        if fixed is not None:
            return fixed
        max_seats = min(max_seats, MAXIMUM_SEATS_LIMIT) if max_seats > 0 else MAXIMUM_SEATS_LIMIT
        if info.verb == "list" or info.verb == "watch":
            return self._list(info, query, max_seats)
        return self._mutating(info, max_seats)

    def _list(self, info: RequestInfo, query: Mapping[str, str], max_seats: int) -> WorkEstimate:
        if info.name:
            return ONE_SEAT
        if info.verb == "watch":
            try:
                initial_events = parse_bool("sendInitialEvents", query.get("sendInitialEvents", "false"))
            except StatusError:  # a bad value is refused by the handler; estimate the worst meanwhile
                return WorkEstimate(max_seats)
            if not initial_events:
                return ONE_SEAT
        resource = f"{info.resource}.{info.group}" if info.group else info.resource
        stored = self.object_count(resource)
        if stored is None:
            return ONE_SEAT
        limit = _int(query.get("limit"))
        limit = limit if 0 < limit < stored else stored
        if info.verb == "watch" or not list_from_storage(query):
            objects = stored
        elif query.get("fieldSelector") or query.get("labelSelector"):
            objects = stored + limit
        else:
            objects = 2 * limit
        seats = math.ceil(objects / OBJECTS_PER_SEAT)
        return WorkEstimate(min(max(seats, MINIMUM_SEATS), max_seats))

    def _mutating(self, info: RequestInfo, max_seats: int) -> WorkEstimate:
        if info.resource == "serviceaccounts" and info.subresource == "token":
            return ONE_SEAT
        watchers = self.watch_count(info)
        if watchers < WATCHES_PER_SEAT:
            return WorkEstimate(1, watchers=watchers)
        seats = math.ceil(watchers / WATCHES_PER_SEAT)
        work = seats * EVENT_ADDITIONAL_DURATION  # seat-seconds
        final = min(seats, max_seats)
        return WorkEstimate(1, final, work / final, watchers)
