"""Hostile YAML and CBOR bodies (issue 34, items 5 and 10 and the CBOR divergences): answered as
upstream answers them, and a large YAML body never holds the event loop — a bystander's GET
/version during it waits about as long as when the server is idle.

Upstream's decoders: go-yaml v2 under sigs.k8s.io/yaml (aliases counted, no limit for a document
without them) and fxamacker/cbor in apimachinery's decode mode (bignum tags, duplicate map keys
and data after the first item refused).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cbor2
import httpx
import pytest

from .helpers import GatewayProcess

YAML = {"Content-Type": "application/yaml"}
CBOR = {"Content-Type": "application/cbor"}
SELF_DESCRIBED = b"\xd9\xd9\xf7"
BODY_LIMIT = 3 * 1024 * 1024


def summary(body: bytes) -> str:
    """How upstream quotes a body it cannot read (summarizeData): 30 bytes, in hex unless JSON."""
    return body[:30].hex() + " ..."


def idle_latency(client: httpx.Client) -> float:
    """The slowest of 20 GET /version on a quiet server."""
    latencies = []
    for _ in range(20):
        began = time.perf_counter()
        assert client.get("/version").status_code == 200
        latencies.append(time.perf_counter() - began)
    return max(latencies)


def post_with_bystander(server: GatewayProcess, path: str, body: bytes, **kwargs: Any) -> tuple[httpx.Response, Waits]:
    """POST ``body`` from one client while another sends GET /version after GET /version until the
    POST is answered; the POST's response and what the bystander waited."""
    answer: list[httpx.Response] = []

    def hostile() -> None:
        with server.client() as client:
            answer.append(client.post(path, content=body, timeout=120, **kwargs))

    poster = threading.Thread(target=hostile)
    latencies = []
    with server.client() as bystander:
        started = time.perf_counter()
        poster.start()
        while poster.is_alive() or not latencies:
            began = time.perf_counter()
            assert bystander.get("/version").status_code == 200
            latencies.append(time.perf_counter() - began)
    poster.join()
    return answer[0], Waits(latencies, time.perf_counter() - started)


@dataclass(frozen=True)
class Waits:
    """The bystander's latencies while the hostile POST ran, and how long that POST took."""

    latencies: list[float]
    post_seconds: float


def assert_responsive(waits: Waits, idle: float) -> None:
    """The bystander was served throughout: half its requests within twice the idle latency (plus a
    tenth of a second for a machine shared with other work), and none waited anywhere near as long as
    the decode (before, one waited the whole decode: 18-43 s). Both bounds scale with the machine."""
    latencies = waits.latencies
    slowest, median = max(latencies), statistics.median(latencies)
    assert median <= 2 * idle + 0.1, (median, idle, waits.post_seconds)
    assert slowest <= max(2 * idle + 0.5, waits.post_seconds / 4), (slowest, median, idle, waits.post_seconds)


# ---- YAML ------------------------------------------------------------------------------------------
def test_flow_list_of_a_million_items_is_accepted_while_others_are_served(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    """A 3 MB flow list (1.5 M plain scalars, no alias) in an unknown field: go-yaml decodes it and
    the ConfigMap is created with the unknown field's warning (it was refused as "excessive
    aliasing" after a 43 s stall)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    items = ",".join(["a"] * 1_500_000)
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: flow}}\njunk: [{items}]\n".encode()
    assert 2_900_000 < len(body) < BODY_LIMIT
    idle = idle_latency(client)
    response, waits = post_with_bystander(server, path, body, headers=YAML)
    assert response.status_code == 201, response.text[:500]
    assert response.headers["Warning"] == '299 - "unknown field \\"junk\\""'
    assert client.get(f"{path}/flow").json()["metadata"]["name"] == "flow"
    assert_responsive(waits, idle)


def test_map_of_210k_annotations_is_decoded_while_others_are_served(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    """A 3 MB block map of 210,000 annotations (the last repeating the first): decoded in full,
    then refused by strict field validation for the duplicate, as upstream's strict YAML decoding
    finds it; nothing is stored."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    annotations = "".join(f"    k{i}: v\n" for i in range(210_000))
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotated\n  annotations:\n{annotations}    k0: v\n"
    assert 2_900_000 < len(body) < BODY_LIMIT
    idle = idle_latency(client)
    response, waits = post_with_bystander(
        server, path, body.encode(), headers=YAML, params={"fieldValidation": "Strict"}
    )
    assert response.status_code == 400, response.text[:500]
    status = response.json()
    assert status["reason"] == "BadRequest"
    assert status["message"].startswith(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error'
    )
    assert status["message"].endswith('line 210006: key "k0" already set in map')
    assert client.get(f"{path}/annotated").status_code == 404
    assert_responsive(waits, idle)


def alias_bomb(width: int, depth: int) -> bytes:
    """A ConfigMap whose unknown field expands to width**depth values through nested aliases."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, depth):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    "body",
    [
        alias_bomb(10, 9),  # "billion laughs": 10**9 values from a few hundred bytes
        # go-yaml's own limit test: 1,000 KB of small maps, then 100 aliases of them
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n"
        + b"a: &a [{a}"
        + b",{a}" * (1000 * 1024 // 4 - 100)
        + b"]\nb: &b [*a"
        + b",*a" * 99
        + b"]\n",
    ],
    ids=["nested-aliases", "many-aliases"],
)
def test_alias_bombs_are_refused(client: httpx.Client, namespace: str, body: bytes) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    response = client.post(path, content=body, headers=YAML)
    assert response.status_code == 400
    assert response.json()["message"] == (
        "the object provided is unrecognized (must be of type ConfigMap): "
        f"yaml: document contains excessive aliasing ({summary(body)})"
    )
    assert client.get(f"{path}/bomb").status_code == 404


def test_aliases_within_go_yamls_limit_are_accepted(client: httpx.Client, namespace: str) -> None:
    """Aliases are not refused as such, nor for how far they expand: 300,000 of 400,000 values
    through aliases is within go-yaml's share (99% up to 400,000 values)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    items = ", ".join(["x"] * 100_000)
    body = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aliased}\n"
        f"list: &list [{items}]\nagain: [*list, *list, *list]\ndata: {{k: &v shared, other: *v}}\n"
    )
    response = client.post(path, content=body.encode(), headers=YAML)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"k": "shared", "other": "shared"}


def test_apply_body_alias_bomb_is_refused(client: httpx.Client, namespace: str) -> None:
    body = alias_bomb(10, 9)
    response = client.patch(
        f"/api/v1/namespaces/{namespace}/configmaps/bomb",
        content=body,
        params={"fieldManager": "m"},
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert response.status_code == 400
    assert response.json()["message"] == (
        "error decoding YAML: error converting YAML to JSON: yaml: document contains excessive aliasing"
    )


# ---- CBOR ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cbor_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server = GatewayProcess(tmp_path_factory.mktemp("cbor"), "--feature-gates", "CBORServingAndStorage=true").start()
    with server.client() as client:
        yield client
    server.kill()


class Encoded(bytes):
    """A value already encoded as CBOR."""


def pairs_map(*pairs: tuple[str, object]) -> Encoded:
    """A CBOR map with these pairs in this order, repeated keys kept."""

    def encoded(value: object) -> bytes:
        return bytes(value) if isinstance(value, Encoded) else cbor2.dumps(value)

    return Encoded(bytes([0xA0 | len(pairs)]) + b"".join(cbor2.dumps(k) + encoded(v) for k, v in pairs))


def cbor_map(*pairs: tuple[str, object]) -> bytes:
    """A request body: the self-described tag, then the map."""
    return SELF_DESCRIBED + pairs_map(*pairs)


TYPE_META = (("apiVersion", "v1"), ("kind", "ConfigMap"))
PATH = "/api/v1/namespaces/default/configmaps"


def unrecognized(body: bytes, error: str) -> str:
    """upstream's message for a CBOR body it cannot read apiVersion and kind from."""
    return (
        "the object provided is unrecognized (must be of type ConfigMap): unable to determine "
        f"group/version/kind: {error} ({summary(body)})"
    )


def refused(client: httpx.Client, body: bytes, name: str) -> str:
    """A 400 BadRequest's message; nothing stored."""
    response = client.post(PATH, content=body, headers=CBOR)
    assert response.status_code == 400, response.text
    status = response.json()
    assert status["reason"] == "BadRequest"
    assert client.get(f"{PATH}/{name}").status_code == 404
    return status["message"]


@pytest.mark.parametrize("size", [2_000, 4_096, 100_000])
def test_cbor_bignum_is_refused(cbor_client: httpx.Client, size: int) -> None:
    """Tags 2 and 3 are refused whatever their size (a 2,000-byte one was a 500 formatting the
    error); upstream's decode mode forbids bignum tags while checking well-formedness."""
    for tag in (2, 3):
        body = cbor_map(*TYPE_META, ("metadata", {"name": "big"}), ("data", {"n": cbor2.CBORTag(tag, b"\x07" * size)}))
        error = "cbor: data item of cbor type tag is not accepted by protocol: bignum"
        assert refused(cbor_client, body, "big") == unrecognized(body, error)


def test_cbor_duplicate_map_keys_are_refused(cbor_client: httpx.Client) -> None:
    """A duplicate top-level key is found while reading apiVersion and kind; a nested one while
    decoding the object, whose kind is then known."""
    top = cbor_map(*TYPE_META, ("metadata", {"name": "dup"}), ("kind", "ConfigMap"))
    error = 'cbor: found duplicate map key "kind" at map element index 3'
    assert refused(cbor_client, top, "dup") == unrecognized(top, error)

    data = pairs_map(("a", "1"), ("b", "2"), ("a", "3"))
    nested = cbor_map(*TYPE_META, ("metadata", {"name": "dup"}), ("data", data))
    assert refused(cbor_client, nested, "dup") == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'cbor: found duplicate map key "a" at map element index 2'
    )


def test_cbor_data_after_the_item_is_refused(cbor_client: httpx.Client) -> None:
    item = cbor_map(*TYPE_META, ("metadata", {"name": "twice"}))
    for body in (item + item, item + b"\x01"):
        error = f"cbor: {len(body) - len(item)} bytes of extraneous data starting at index {len(item)}"
        assert refused(cbor_client, body, "twice") == unrecognized(body, error)
    assert cbor_client.post(PATH, content=item, headers=CBOR).status_code == 201  # the item alone
