"""The read-path decision, cell by cell of the tables of Kubernetes API Concepts ("Semantics for
get and list", "Resource versions"; kubernetes.io/docs/reference/using-api/api-concepts/): where
each get and list is served from, how fresh.

The invalid cells of the list table are refused before a plan is made; they are checked here
through the same validation the handlers use.
"""

from __future__ import annotations

import pytest

from protokube.gateway.errors import StatusError
from protokube.gateway.params import EXACT, NOT_OLDER_THAN, list_options, validate_list_options
from protokube.gateway.storage.readpath import (
    ANY,
    AT_REVISION,
    CACHE,
    CONSISTENT,
    STORAGE,
    CacheState,
    ReadPlan,
    plan_get,
    plan_list,
)
from protokube.gateway.storage.readpath import NOT_OLDER_THAN as AT_LEAST

# A cache synced to revision 100 whose resource last changed at 90.
CACHE_STATE = CacheState(ready=True, revision=100, last_change=90)


def test_get() -> None:
    assert plan_get(None) == ReadPlan(CACHE, CONSISTENT)  # unset: Most Recent
    assert plan_get(0) == ReadPlan(CACHE, ANY)  # "0": Any
    assert plan_get(42) == ReadPlan(CACHE, AT_LEAST, 42)  # N: Not older than


# (resourceVersionMatch, limit, resourceVersion) → the plan; rv None = unset; storage reads at an old revision
# that the cache cannot vouch for (50 < last change 90).
LIST_TABLE = [
    # match unset, limit unset
    ("", 0, None, ReadPlan(CACHE, CONSISTENT)),  # Most Recent
    ("", 0, 0, ReadPlan(CACHE, ANY)),  # Any
    ("", 0, 50, ReadPlan(CACHE, AT_LEAST, 50)),  # Not older than
    # match unset, limit=n
    ("", 5, None, ReadPlan(CACHE, CONSISTENT, limit=5)),  # Most Recent, paged from the cache
    ("", 5, 0, ReadPlan(CACHE, ANY)),  # Any: the cache ignores limit
    ("", 5, 50, ReadPlan(STORAGE, ANY, 50, 5)),  # Exact
    # match Exact (limit unset / n)
    (EXACT, 0, 50, ReadPlan(STORAGE, ANY, 50, 0)),
    (EXACT, 5, 50, ReadPlan(STORAGE, ANY, 50, 5)),
    # match NotOlderThan (limit unset / n)
    (NOT_OLDER_THAN, 0, 0, ReadPlan(CACHE, ANY)),
    (NOT_OLDER_THAN, 0, 50, ReadPlan(CACHE, AT_LEAST, 50)),
    (NOT_OLDER_THAN, 5, 0, ReadPlan(CACHE, ANY)),
    (NOT_OLDER_THAN, 5, 50, ReadPlan(CACHE, AT_LEAST, 50, 5)),
]


@pytest.mark.parametrize(("match", "limit", "rv", "plan"), LIST_TABLE)
def test_list_table(match: str, limit: int, rv: int | None, plan: ReadPlan) -> None:
    assert plan_list(rv, match, limit, None, CACHE_STATE) == plan


def test_continue_tokens_read_exactly_at_their_revision() -> None:
    assert plan_list(None, "", 5, (50, "ns/b\x00"), CACHE_STATE) == ReadPlan(STORAGE, ANY, 50, 5, "ns/b\x00", True)
    # a token for "the latest" (a negative revision, as in a 410's fresh token)
    assert plan_list(None, "", 5, (-1, "ns/b\x00"), CACHE_STATE) == ReadPlan(STORAGE, ANY, 0, 5, "ns/b\x00", True)


def test_exact_reads_come_from_the_cache_when_nothing_changed_since() -> None:
    """The cache's state is the state at 95 (last change 90, synced to 100): no storage read needed."""
    assert plan_list(95, EXACT, 5, None, CACHE_STATE) == ReadPlan(CACHE, AT_REVISION, 95, 5)
    assert plan_list(None, "", 5, (95, "b\x00"), CACHE_STATE) == ReadPlan(CACHE, AT_REVISION, 95, 5, "b\x00", True)
    # not ready, or changed since, or beyond what it has seen: storage
    not_ready = CacheState(ready=False, revision=100, last_change=90)
    assert plan_list(95, EXACT, 5, None, not_ready).source == STORAGE
    assert plan_list(89, EXACT, 5, None, CACHE_STATE).source == STORAGE
    assert plan_list(101, EXACT, 5, None, CACHE_STATE).source == STORAGE


# The invalid cells: (query, status code, message fragment).
INVALID = [
    ({"resourceVersionMatch": "Exact"}, 422, "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ({"resourceVersionMatch": "Exact", "limit": "5"}, 422, "forbidden unless resourceVersion is provided"),
    ({"resourceVersionMatch": "Exact", "resourceVersion": "0"}, 422, 'resourceVersionMatch "exact" is forbidden'),
    ({"resourceVersionMatch": "NotOlderThan"}, 422, "forbidden unless resourceVersion is provided"),
    ({"resourceVersionMatch": "NotOlderThan", "limit": "5"}, 422, "forbidden unless resourceVersion is provided"),
    ({"limit": "5", "continue": "x", "resourceVersion": "7"}, 400, "specifying resource version is not allowed"),
]


@pytest.mark.parametrize(("query", "code", "fragment"), INVALID)
def test_invalid_cells_are_refused(query: dict[str, str], code: int, fragment: str) -> None:
    with pytest.raises(StatusError) as raised:
        validate_list_options(list_options(query))
    assert raised.value.code == code and fragment in raised.value.status.message


def test_continue_with_resource_version_0_is_the_continue_token_alone() -> None:
    """Kubernetes API Concepts: "Invalid, treated as Continue Token, Exact"."""
    options = validate_list_options(list_options({"limit": "5", "continue": "x", "resourceVersion": "0"}))
    assert options.continue_token == "x"
