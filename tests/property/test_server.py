"""Generated requests against a running `protokube serve`: every answer is below 500 and a Status
when it is an error, and a write that failed stored nothing (the objects of the resource in the
namespace, names and resourceVersions, are what they were before it)."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protokube.gateway.codecs import codec_for
from protokube.schema import envelope
from protokube.schema.jsondecode import without_lone_surrogates
from protokube.schema.registry import registry
from tests.gateway.helpers import GatewayProcess, eventually

from .strategies import JSON_VALUES, URL_TEXT, mutated

NS = "fuzz"
# collection path, a valid object without its name
KINDS = {
    "configmaps": (
        f"/api/v1/namespaces/{NS}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}},
    ),
    "secrets": (
        f"/api/v1/namespaces/{NS}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "data": {"k": "dg=="}, "stringData": {"s": "x"}, "type": "Opaque"},
    ),
    "pods": (
        f"/api/v1/namespaces/{NS}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"labels": {"app": "x"}, "finalizers": ["example.com/f"]},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]},
        },
    ),
    "deployments": (
        f"/apis/apps/v1/namespaces/{NS}/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "x"}},
                "template": {
                    "metadata": {"labels": {"app": "x"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    ),
}
MEDIA = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/cbor"]
_names = itertools.count()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server = GatewayProcess(tmp_path_factory.mktemp("fuzz"), "--feature-gates", "CBORServingAndStorage=true").start()
    try:
        with server.client() as client:
            assert client.post("/api/v1/namespaces", json={"metadata": {"name": NS}}).status_code == 201
            for made in ("serviceaccounts/default", "configmaps/kube-root-ca.crt"):  # the controllers' first
                path = f"/api/v1/namespaces/{NS}/{made}"
                assert eventually(lambda p=path: client.get(p).status_code == 200), path
            for kind, (path, body) in KINDS.items():
                created = client.post(path, json=_named(body, f"base-{kind}"))
                assert created.status_code == 201, created.text
            yield client
    finally:
        server.kill()
        print("".join(server.log[-60:]))  # shown when a test failed


def _named(body: dict[str, Any], name: str) -> dict[str, Any]:
    body = copy.deepcopy(body)
    body.setdefault("metadata", {})["name"] = name
    return body


def _state(client: httpx.Client, path: str) -> dict[str, str]:
    """name → resourceVersion of every object of the collection."""
    listed = client.get(path)
    assert listed.status_code == 200, listed.text
    return {item["metadata"]["name"]: item["metadata"]["resourceVersion"] for item in listed.json()["items"]}


# Where kube-apiserver itself answers a client's mistake with 500 (kubernetes/kubernetes#122480:
# an apply body that does not fit the schema), the same answer is expected here.
UPSTREAM_500 = ("failed to create typed patch object (",)


def _check(response: httpx.Response) -> None:
    if response.status_code == 500 and response.json().get("message", "").startswith(UPSTREAM_500):
        return
    assert response.status_code < 500, (response.status_code, response.text[:2000])
    if response.status_code >= 400 and response.status_code != 406:
        status = response.json() if "json" in response.headers.get("content-type", "") else None
        if status is not None:
            assert status["kind"] == "Status" and status["code"] == response.status_code, status
            assert "127.0.0.1" not in status.get("message", ""), status


def _encode(kind: str, value: Any, media_type: str) -> bytes:
    if media_type == "application/cbor":
        return cbor2.dumps(without_lone_surrogates(copy.deepcopy(value)))
    if media_type == "application/vnd.kubernetes.protobuf":
        resource = registry().resource(*_group_version(kind), kind)
        if resource is None or not resource.message:
            return b"k8s\x00" + json.dumps(value).encode("utf-8", "surrogatepass")
        codec = codec_for(resource)
        try:
            obj = codec.from_dict(without_lone_surrogates(copy.deepcopy(value))).obj
            return envelope.encode(obj, value.get("apiVersion", ""), value.get("kind", ""))
        except Exception:  # not expressible as the message: send the JSON behind the magic
            return b"k8s\x00" + json.dumps(value).encode("utf-8", "surrogatepass")
    return json.dumps(value, ensure_ascii=media_type == "application/json").encode("utf-8", "surrogatepass")


def _group_version(kind: str) -> tuple[str, str]:
    return ("apps", "v1") if kind == "deployments" else ("", "v1")


@st.composite
def _body(draw: st.DrawFn, kind: str) -> tuple[str, bytes, str]:
    """(name put in the body, body bytes, media type)."""
    name = f"f{next(_names)}"
    base = _named(KINDS[kind][1], name)
    value = draw(mutated(base)) if draw(st.integers(0, 5)) else base
    media_type = draw(st.sampled_from(MEDIA))
    return name, _encode(kind, value, media_type), media_type


@pytest.mark.parametrize("kind", list(KINDS))
@given(data=st.data())
def test_create(client: httpx.Client, kind: str, data: st.DataObject) -> None:
    path = KINDS[kind][0]
    name, body, media_type = data.draw(_body(kind))
    before = _state(client, path)
    response = client.post(path, content=body, headers={"Content-Type": media_type})
    _check(response)
    after = _state(client, path)
    if response.status_code >= 300:
        assert after == before, response.text
    else:
        created = response.json()["metadata"]["name"] if "json" in response.headers["content-type"] else None
        assert set(after) - set(before) <= {created, name}
        assert len(after) == len(before) + 1


@pytest.mark.parametrize("kind", list(KINDS))
@given(data=st.data())
def test_update(client: httpx.Client, kind: str, data: st.DataObject) -> None:
    path = KINDS[kind][0]
    target = f"{path}/base-{kind}"
    value = data.draw(mutated(_named(KINDS[kind][1], f"base-{kind}")))
    media_type = data.draw(st.sampled_from(MEDIA))
    before = _state(client, path)
    response = client.put(target, content=_encode(kind, value, media_type), headers={"Content-Type": media_type})
    _check(response)
    if response.status_code >= 300:
        assert _state(client, path) == before, response.text


JSON_PATCH_OPS = st.lists(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "nope"])},
        optional={
            "path": st.one_of(
                st.sampled_from(
                    [
                        "/metadata/labels/a",
                        "/data/k",
                        "/spec",
                        "/metadata/name",
                        "/-",
                        "",
                        "/a~2b",
                        "/spec/containers/0/-",
                    ]
                ),
                URL_TEXT,
            ),
            "from": st.sampled_from(["/metadata/labels", "/data", "/spec/containers/0", "/x"]),
            "value": JSON_VALUES,
        },
    ),
    max_size=4,
)
PATCH_TYPES = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
]


@st.composite
def _patch(draw: st.DrawFn, current: dict[str, Any]) -> tuple[str, bytes]:
    patch_type = draw(st.sampled_from(PATCH_TYPES))
    if patch_type == "application/json-patch+json":
        value: Any = draw(st.one_of(JSON_PATCH_OPS, JSON_VALUES))
    elif patch_type.startswith("application/apply-patch"):
        value = draw(mutated({k: current[k] for k in current if k != "status"}))
        if isinstance(value, dict):
            value.get("metadata", {}).pop("managedFields", None) if isinstance(value.get("metadata"), dict) else None
    else:
        directives = {"$patch": draw(st.sampled_from(["delete", "replace", "merge", "x"]))}
        value = draw(st.one_of(mutated({"metadata": {"labels": {"a": None}}, "spec": directives}), JSON_VALUES))
    if patch_type.endswith("cbor"):
        return patch_type, cbor2.dumps(without_lone_surrogates(copy.deepcopy(value)))
    return patch_type, json.dumps(value).encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("kind", list(KINDS))
@given(data=st.data())
def test_patch(client: httpx.Client, kind: str, data: st.DataObject) -> None:
    path = KINDS[kind][0]
    target = f"{path}/base-{kind}"
    patch_type, body = data.draw(_patch(_named(KINDS[kind][1], f"base-{kind}")))
    before = _state(client, path)
    response = client.patch(
        target, content=body, headers={"Content-Type": patch_type}, params={"fieldManager": "fuzz", "force": "true"}
    )
    _check(response)
    if response.status_code >= 300:
        assert _state(client, path) == before, response.text


QUERY = st.dictionaries(
    st.sampled_from(
        [
            "labelSelector",
            "fieldSelector",
            "resourceVersion",
            "resourceVersionMatch",
            "limit",
            "continue",
            "watch",
            "timeoutSeconds",
            "allowWatchBookmarks",
            "sendInitialEvents",
            "pretty",
        ]
    ),
    st.one_of(
        URL_TEXT, st.sampled_from(["1", "true", "Exact", "NotOlderThan", "99999999999999999999", "!a", "a in (b)"])
    ),
    max_size=5,
)


@given(
    kind=st.sampled_from(list(KINDS)),
    query=QUERY,
    accept=st.one_of(
        st.none(),
        st.sampled_from([*MEDIA, "application/json;as=Table;g=meta.k8s.io;v=v1", "*/*;q=0", "text/html"]),
    ),
)
def test_reads(client: httpx.Client, kind: str, query: dict[str, str], accept: str | None) -> None:
    if query.get("watch") not in (None, "0", "false", "False", "f", "F", "FALSE"):
        query["timeoutSeconds"] = "1"  # a watch that parses stops within a second
    headers = {"Accept": accept} if accept else {}
    with client.stream("GET", KINDS[kind][0], params=query, headers=headers) as response:
        if response.status_code >= 400:
            response.read()
            _check(response)
        else:
            for _ in response.iter_bytes():
                pass


def test_unlisted_paths_and_methods(client: httpx.Client) -> None:
    for method in ("TRACE", "CONNECT", "FOO", "PROPFIND"):
        _check(client.request(method, "/api/v1/namespaces"))
    assert Path(__file__).name  # the module stays importable without its fixtures
