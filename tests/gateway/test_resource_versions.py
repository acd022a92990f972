"""resourceVersion semantics, cell by cell (Kubernetes API Concepts: "Resource versions", both tables).

Every cell of the list table (resourceVersionMatch × paging × resourceVersion), get and watch
semantics, 410 for what storage no longer holds and 504 for what it does not hold yet.
"""

from __future__ import annotations

import base64

import grpc
import httpx
import pytest

from protokube.gen.etcdserverpb import rpc_pb2, rpc_pb2_grpc

from .helpers import GatewayProcess, until_cached, watch_lines

ON_ETCD_TOO = True  # the tests using the shared server run against a real etcd as well

INVALID = 'ListOptions.meta.k8s.io "" is invalid: '


def compact(server: GatewayProcess, revision: int) -> None:
    """Compact storage history up to ``revision`` (what the periodic compactor does every 5 minutes)."""
    with grpc.insecure_channel(server.storage) as channel:
        rpc_pb2_grpc.KVStub(channel).Compact(rpc_pb2.CompactionRequest(revision=revision, physical=True), timeout=10)


@pytest.fixture
def history(client: httpx.Client, namespace: str) -> dict:
    """Three configmaps written one after another, and seen by the watch cache; the revision after
    the first and the last."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    first = client.post(path, json={"metadata": {"name": "a"}}).json()["metadata"]["resourceVersion"]
    client.post(path, json={"metadata": {"name": "b"}})
    last = client.post(path, json={"metadata": {"name": "c"}}).json()["metadata"]["resourceVersion"]
    until_cached(client, path, last)
    return {"path": path, "first": first, "last": last}


def names(body: dict) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


# ---- the list table --------------------------------------------------------------------------
def test_list_unset_is_most_recent(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"]).json()
    assert names(body) == ["a", "b", "c"]
    assert int(body["metadata"]["resourceVersion"]) >= int(history["last"])


def test_list_zero_is_any_and_ignores_limit(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"resourceVersion": "0", "limit": "1"}).json()
    assert names(body) == ["a", "b", "c"] and "continue" not in body["metadata"]


def test_list_value_without_limit_is_not_older_than(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"resourceVersion": history["first"]}).json()
    assert int(body["metadata"]["resourceVersion"]) >= int(history["first"])
    # At least the state at "first"; anything newer is allowed too.
    assert names(body) in (["a"], ["a", "b"], ["a", "b", "c"])


def test_list_unset_with_limit_is_most_recent_paged(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"limit": "2"}).json()
    assert names(body) == ["a", "b"] and body["metadata"]["continue"]
    assert body["metadata"]["remainingItemCount"] == 1


def test_list_value_with_limit_is_exact(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"resourceVersion": history["first"], "limit": "10"}).json()
    assert body["metadata"]["resourceVersion"] == history["first"]
    assert names(body) == ["a"]  # the collection as it was at that revision


@pytest.mark.parametrize("rv", ["", "0"])
def test_continue_with_unset_or_zero_continues_exactly(client: httpx.Client, history: dict, rv: str) -> None:
    first = client.get(history["path"], params={"limit": "1"}).json()
    client.post(history["path"], json={"metadata": {"name": "d"}})  # after the snapshot: not listed
    params = {"limit": "1", "continue": first["metadata"]["continue"]}
    if rv:
        params["resourceVersion"] = rv
    second = client.get(history["path"], params=params).json()
    assert names(second) == ["b"] and second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    third = client.get(history["path"], params={"limit": "5", "continue": second["metadata"]["continue"]}).json()
    assert names(third) == ["c"] and "continue" not in third["metadata"]
    assert "remainingItemCount" not in third["metadata"]


def test_continue_with_a_value_is_400(client: httpx.Client, history: dict) -> None:
    first = client.get(history["path"], params={"limit": "1"}).json()
    response = client.get(
        history["path"],
        params={"limit": "1", "continue": first["metadata"]["continue"], "resourceVersion": history["first"]},
    )
    assert response.status_code == 400
    assert response.json()["message"] == "specifying resource version is not allowed when using continue"


@pytest.mark.parametrize("limit", [None, "2"])
def test_exact_match(client: httpx.Client, history: dict, limit: str | None) -> None:
    params = {"resourceVersionMatch": "Exact", "resourceVersion": history["first"]}
    if limit:
        params["limit"] = limit
    body = client.get(history["path"], params=params).json()
    assert body["metadata"]["resourceVersion"] == history["first"] and names(body) == ["a"]


@pytest.mark.parametrize("limit", [None, "2"])
@pytest.mark.parametrize(
    ("match", "rv", "message"),
    [
        (
            "Exact",
            None,
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "Exact",
            "0",
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
        (
            "NotOlderThan",
            None,
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "Newest",
            "5",
            'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
        ),
    ],
)
def test_invalid_cells_are_422(client: httpx.Client, history: dict, limit, match: str, rv, message: str) -> None:
    params = {"resourceVersionMatch": match}
    if rv is not None:
        params["resourceVersion"] = rv
    if limit:
        params["limit"] = limit
    response = client.get(history["path"], params=params)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "Invalid" and body["message"] == INVALID + message
    assert body["details"]["kind"] == "ListOptions" and body["details"]["group"] == "meta.k8s.io"


@pytest.mark.parametrize("limit", [None, "1"])
def test_not_older_than(client: httpx.Client, history: dict, limit: str | None) -> None:
    params = {"resourceVersionMatch": "NotOlderThan", "resourceVersion": history["first"]}
    if limit:
        params["limit"] = limit
    body = client.get(history["path"], params=params).json()
    assert int(body["metadata"]["resourceVersion"]) >= int(history["first"])
    assert names(body)[0] == "a" and names(body) in (["a"], ["a", "b"], ["a", "b", "c"])
    if limit:
        assert names(body) == ["a"]


@pytest.mark.parametrize("limit", [None, "1"])
def test_not_older_than_zero_is_any(client: httpx.Client, history: dict, limit: str | None) -> None:
    params = {"resourceVersionMatch": "NotOlderThan", "resourceVersion": "0"}
    if limit:
        params["limit"] = limit
    assert names(client.get(history["path"], params=params).json()) == ["a", "b", "c"]


def test_send_initial_events_is_forbidden_for_list(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"sendInitialEvents": "true"}).json()
    assert body["message"] == INVALID + "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"


# ---- get ----------------------------------------------------------------------------------
def test_get_semantics(client: httpx.Client, history: dict) -> None:
    url = f"{history['path']}/c"
    assert client.get(url).json()["metadata"]["resourceVersion"] == history["last"]  # most recent
    assert client.get(url, params={"resourceVersion": "0"}).status_code == 200  # any
    newer = client.get(url, params={"resourceVersion": history["first"]}).json()  # not older than
    assert int(newer["metadata"]["resourceVersion"]) >= int(history["first"])


def test_get_right_after_update_is_most_recent(client: httpx.Client, history: dict) -> None:
    url = f"{history['path']}/a"
    for i in range(20):
        written = client.put(url, json={"metadata": {"name": "a"}, "data": {"i": str(i)}}).json()
        assert client.get(url).json()["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]


@pytest.mark.parametrize("rv", ["abc", "-1", "1.5"])
def test_non_numeric_resource_version_is_400(client: httpx.Client, history: dict, rv: str) -> None:
    for url in (history["path"], f"{history['path']}/a"):
        response = client.get(url, params={"resourceVersion": rv})
        assert response.status_code == 400
        assert response.json()["message"] == (
            f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": invalid syntax'
        )


def test_too_large_resource_version_is_504_with_retry_after(client: httpx.Client, history: dict) -> None:
    big = str(int(history["last"]) + 1_000_000)
    for url in (history["path"], f"{history['path']}/a"):
        response = client.get(url, params={"resourceVersion": big})
        assert response.status_code == 504 and response.headers["Retry-After"] == "1"
        body = response.json()
        assert body["reason"] == "Timeout"
        assert body["message"].startswith(f"Timeout: Too large resource version: {big}, current: ")
        assert body["details"]["causes"] == [
            {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
        ]
        assert body["details"]["retryAfterSeconds"] == 1


def test_exact_future_revision_is_504_without_retry(client: httpx.Client, history: dict) -> None:
    big = str(int(history["last"]) + 1_000_000)
    response = client.get(history["path"], params={"resourceVersion": big, "resourceVersionMatch": "Exact"})
    assert response.status_code == 504 and "Retry-After" not in response.headers


# ---- watch --------------------------------------------------------------------------------
@pytest.mark.parametrize("rv", [None, "0"])
def test_watch_unset_or_zero_gets_state_then_changes(client: httpx.Client, history: dict, rv) -> None:
    params = {"timeoutSeconds": "10"}
    if rv is not None:
        params["resourceVersion"] = rv
    events = watch_lines(client, history["path"], stop_after=4, **params)
    initial = [next(events) for _ in range(3)]
    assert [e["type"] for e in initial] == ["ADDED"] * 3
    assert sorted(e["object"]["metadata"]["name"] for e in initial) == ["a", "b", "c"]
    client.post(history["path"], json={"metadata": {"name": "d"}})
    assert next(events)["object"]["metadata"]["name"] == "d"


def test_watch_value_starts_exactly_there(client: httpx.Client, history: dict) -> None:
    events = list(
        watch_lines(client, history["path"], stop_after=2, resourceVersion=history["first"], timeoutSeconds="10")
    )
    assert [e["object"]["metadata"]["name"] for e in events] == ["b", "c"]  # no synthetic events


def test_send_initial_events_requires_not_older_than(client: httpx.Client, history: dict) -> None:
    body = client.get(history["path"], params={"watch": "1", "sendInitialEvents": "true"}).json()
    assert body["code"] == 422
    assert body["message"] == (
        INVALID + "resourceVersionMatch: Forbidden: "
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    )
    body = client.get(
        history["path"], params={"watch": "1", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "5"}
    ).json()
    assert body["message"] == (
        INVALID + "resourceVersionMatch: Forbidden: "
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    )


def test_streaming_list(client: httpx.Client, history: dict) -> None:
    """The API concepts' example (streaming lists): ADDED for the state, a BOOKMARK marking its end, then the stream."""
    events = watch_lines(
        client,
        history["path"],
        stop_after=5,
        sendInitialEvents="true",
        allowWatchBookmarks="true",
        resourceVersion="",
        resourceVersionMatch="NotOlderThan",
        timeoutSeconds="10",
    )
    initial = [next(events) for _ in range(4)]
    assert [e["type"] for e in initial] == ["ADDED", "ADDED", "ADDED", "BOOKMARK"]
    bookmark = initial[3]["object"]
    assert bookmark["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(history["last"])
    client.post(history["path"], json={"metadata": {"name": "after"}})
    following = next(events)
    assert following["type"] == "ADDED" and following["object"]["metadata"]["name"] == "after"


# ---- history that is gone -----------------------------------------------------------------
def test_compacted_history(server: GatewayProcess, client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    old = client.post(path, json={"metadata": {"name": "old"}}).json()["metadata"]["resourceVersion"]
    client.post(path, json={"metadata": {"name": "w"}})
    first_page = client.get(path, params={"limit": "1"}).json()
    for name in ("x", "y"):
        client.post(path, json={"metadata": {"name": name}})
    latest = client.post(path, json={"metadata": {"name": "z"}}).json()["metadata"]["resourceVersion"]
    compact(server, int(latest))

    exact = client.get(path, params={"resourceVersion": old, "resourceVersionMatch": "Exact"})
    assert exact.status_code == 410
    assert exact.json()["reason"] == "Expired"
    assert exact.json()["message"] == "The resourceVersion for the provided list is too old."

    expired = client.get(path, params={"limit": "1", "continue": first_page["metadata"]["continue"]})
    assert expired.status_code == 410 and expired.json()["reason"] == "Expired"
    assert expired.json()["message"].startswith("The provided continue parameter is too old")
    fresh = expired.json()["metadata"]["continue"]  # continue inconsistently, at the latest revision
    rest = client.get(path, params={"limit": "10", "continue": fresh}).json()
    assert names(rest) == ["w", "x", "y", "z"]


def test_watch_from_before_the_cache_window_gets_410_event(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    response = client.get(path, params={"watch": "1", "resourceVersion": "1", "timeoutSeconds": "5"})
    assert response.status_code == 200
    lines = response.text.splitlines()
    assert len(lines) == 1
    event = httpx.Response(200, content=lines[0]).json()
    assert event["type"] == "ERROR"
    status = event["object"]
    assert status["kind"] == "Status" and status["code"] == 410 and status["reason"] == "Expired"
    assert status["message"].startswith("too old resource version: 1 (")


@pytest.mark.parametrize(
    "token",
    ["garbage", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJ4In0", "eyJ2IjoieCIsInJ2IjozLCJzdGFydCI6IngifQ"],
)
def test_malformed_continue_token_is_400(client: httpx.Client, namespace: str, token: str) -> None:
    response = client.get(f"/api/v1/namespaces/{namespace}/configmaps", params={"limit": "1", "continue": token})
    assert response.status_code == 400
    assert response.json()["message"].startswith("invalid continue token: continue key is not valid")


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(
    ("token", "error"),
    [
        ("a", "illegal base64 data at input byte 0"),
        ("abcd=", "illegal base64 data at input byte 4"),
        ("abc", "invalid character 'i' looking for beginning of value"),
        (_token(b'{"v":"meta.k8s.io/v1"'), "unexpected end of JSON input"),
        (_token(b"[1]"), "json: cannot unmarshal array into Go value of type storage.continueToken"),
        (
            _token(b'{"v":"meta.k8s.io/v1","rv":"5","start":"x"}'),
            "json: cannot unmarshal string into Go struct field continueToken.rv of type int64",
        ),
        (
            _token(b'{"v":"meta.k8s.io/v1","rv":99999999999999999999999,"start":"x"}'),
            "json: cannot unmarshal number 99999999999999999999999 into Go struct field continueToken.rv of type int64",
        ),
        (_token(b'{"v":"v9","rv":5,"start":"x"}'), "server does not recognize this encoded version v9"),
        (
            _token(b'{"v":"meta.k8s.io/v1","start":"x"}'),
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        (_token(b'{"v":"meta.k8s.io/v1","rv":5}'), "encoded start key empty (version meta.k8s.io/v1)"),
        (_token(b'{"v":"meta.k8s.io/v1","rv":5,"start":"//x"}'), "//x"),
    ],
)
def test_continue_token_errors_in_gos_words(client: httpx.Client, namespace: str, token: str, error: str) -> None:
    """DecodeContinue's errors as encoding/base64 and encoding/json word them (they were Python's)."""
    response = client.get(f"/api/v1/namespaces/{namespace}/configmaps", params={"limit": "1", "continue": token})
    assert response.status_code == 400
    assert response.json()["message"] == f"invalid continue token: continue key is not valid: {error}"
