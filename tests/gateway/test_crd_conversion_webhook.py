"""CRD conversion webhooks against a real server and a real HTTPS webhook server in this process
(webhookserver.py): a CRD with v1 (storage, spec.size) and v2 (spec.dimension, the same field
renamed) whose conversion is the webhook's. Objects written in v2 are stored in v1; reads, lists,
watches, patches and the status subresource in v2 are converted; a failing webhook, one that changes
metadata and one that cannot be reached answer as kube-apiserver 1.32 does; the CRD's conversion
is validated as upstream validates it.

The module runs its own server."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.etcdserverpb import rpc_pb2_grpc as rpc_grpc

from .helpers import GatewayProcess, Kubectl, eventually, free_port, kubectl_path, watch_lines
from .webhookserver import WebhookServer

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "conv.example.com"
_names = itertools.count()

SCHEMAS = {
    version: {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {field: {"type": "integer"}}},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
    for version, field in (("v1", "size"), ("v2", "dimension"))
}
RENAMED = {"v1": ("dimension", "size"), "v2": ("size", "dimension")}  # to version: (from field, to field)


def crd(plural: str, client_config: dict[str, Any], review_versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    kind = plural.capitalize()[:-1]
    return {
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": name == "v1",
                    "schema": {"openAPIV3Schema": SCHEMAS[name]},
                    "subresources": {"status": {}},
                }
                for name in ("v1", "v2")
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {"clientConfig": client_config, "conversionReviewVersions": list(review_versions)},
            },
        },
    }


def renaming(request: dict[str, Any]) -> bytes:
    """The webhook's conversion: spec.size ↔ spec.dimension."""
    desired = request["desiredAPIVersion"]
    source, target = RENAMED[desired.rpartition("/")[2]]
    converted = []
    for obj in request["objects"]:
        obj = {**obj, "apiVersion": desired, "spec": dict(obj.get("spec") or {})}
        if source in obj["spec"]:
            obj["spec"][target] = obj["spec"].pop(source)
        converted.append(obj)
    return answer(request, {"result": {"status": "Success"}, "convertedObjects": converted})


def answer(request: dict[str, Any], response: dict[str, Any], version: str = "v1") -> bytes:
    review = {"apiVersion": f"apiextensions.k8s.io/{version}", "kind": "ConversionReview"}
    return json.dumps({**review, "response": {"uid": request["uid"], **response}}).encode()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("conversion")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(gateway: GatewayProcess) -> Iterator[httpx.Client]:
    with gateway.client() as client:
        yield client


class Served:
    """A webhook-converted CRD being served, and its objects' paths in namespace default."""

    def __init__(self, api: httpx.Client, plural: str) -> None:
        self.api, self.plural = api, plural

    def path(self, version: str, name: str = "") -> str:
        base = f"/apis/{GROUP}/{version}/namespaces/default/{self.plural}"
        return f"{base}/{name}" if name else base

    def create(self, version: str, name: str, value: int) -> httpx.Response:
        field = "size" if version == "v1" else "dimension"
        kind = self.plural.capitalize()[:-1]
        body = {"apiVersion": f"{GROUP}/{version}", "kind": kind, "metadata": {"name": name}, "spec": {field: value}}
        return self.api.post(self.path(version), json=body)


@pytest.fixture
def served(api: httpx.Client, hooks: WebhookServer) -> Iterator[Callable[..., Served]]:
    """Makes a CRD converted by ``handler`` on the webhook server, served once it answers."""
    made: list[str] = []

    def make(handler: Any, review_versions: tuple[str, ...] = ("v1",)) -> Served:
        plural = f"gizmo{next(_names)}s"
        hooks.handlers[f"/{plural}"] = handler
        config = {"url": hooks.url(f"/{plural}"), "caBundle": hooks.ca_bundle}
        created = api.post(CRDS, json=crd(plural, config, review_versions))
        assert created.status_code == 201, created.text
        made.append(plural)
        serving = Served(api, plural)
        assert eventually(lambda: all(api.get(serving.path(v)).status_code == 200 for v in ("v1", "v2")))
        return serving

    yield make
    for plural in made:
        api.delete(f"{CRDS}/{plural}.{GROUP}")


def stored(gateway: GatewayProcess, plural: str, name: str) -> dict[str, Any]:
    """The object as storage holds it (read past the gateway)."""
    with grpc.insecure_channel(gateway.storage) as channel:
        key = f"/registry/{GROUP}/{plural}/default/{name}".encode()
        kvs = rpc_grpc.KVStub(channel).Range(rpc.RangeRequest(key=key), timeout=10).kvs
    assert kvs, f"{key!r} is not stored"
    return json.loads(kvs[0].value)


def test_objects_written_in_v2_are_stored_in_v1_and_read_in_either(
    gateway: GatewayProcess, api: httpx.Client, hooks: WebhookServer, served: Callable[..., Served]
) -> None:
    gizmos = served(renaming)
    made = gizmos.create("v2", "a", 3)
    assert made.status_code == 201, made.text
    assert made.json()["apiVersion"] == f"{GROUP}/v2"
    assert made.json()["spec"] == {"dimension": 3}
    on_disk = stored(gateway, gizmos.plural, "a")
    assert on_disk["apiVersion"] == f"{GROUP}/v1"
    assert on_disk["spec"] == {"size": 3}
    reviews = hooks.reviews[f"/{gizmos.plural}"]
    assert any(r["request"]["desiredAPIVersion"] == f"{GROUP}/v1" for r in reviews)
    assert all(r["apiVersion"] == "apiextensions.k8s.io/v1" and r["kind"] == "ConversionReview" for r in reviews)
    assert hooks.queries[f"/{gizmos.plural}"][0] == "timeout=30s"

    assert api.get(gizmos.path("v1", "a")).json()["spec"] == {"size": 3}
    got = api.get(gizmos.path("v2", "a")).json()
    assert (got["apiVersion"], got["spec"]) == (f"{GROUP}/v2", {"dimension": 3})

    assert gizmos.create("v1", "b", 4).status_code == 201
    listed = eventually(lambda: (r := api.get(gizmos.path("v2")).json()) and len(r["items"]) == 2 and r)
    assert listed["apiVersion"] == f"{GROUP}/v2"
    assert [(i["apiVersion"], i["spec"]) for i in listed["items"]] == [
        (f"{GROUP}/v2", {"dimension": 3}),
        (f"{GROUP}/v2", {"dimension": 4}),
    ]
    rv = listed["metadata"]["resourceVersion"]

    patched = api.patch(
        gizmos.path("v2", "b"),
        content=json.dumps({"spec": {"dimension": 7}}),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"] == {"dimension": 7}
    assert stored(gateway, gizmos.plural, "b")["spec"] == {"size": 7}

    status = {**patched.json(), "status": {"phase": "Ready"}}
    updated = api.put(gizmos.path("v2", "b") + "/status", json=status)
    assert updated.status_code == 200, updated.text
    assert (updated.json()["spec"], updated.json()["status"]) == ({"dimension": 7}, {"phase": "Ready"})
    assert stored(gateway, gizmos.plural, "b")["status"] == {"phase": "Ready"}
    assert api.get(gizmos.path("v1", "b") + "/status").json()["status"] == {"phase": "Ready"}

    events = list(watch_lines(api, gizmos.path("v2"), 2, resourceVersion=rv))
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["spec"]) for e in events] == [
        ("MODIFIED", f"{GROUP}/v2", {"dimension": 7}),
        ("MODIFIED", f"{GROUP}/v2", {"dimension": 7}),
    ]
    assert events[1]["object"]["status"] == {"phase": "Ready"}


def test_a_failing_webhook_is_upstreams_500(api: httpx.Client, served: Callable[..., Served]) -> None:
    gizmos = served(lambda request: answer(request, {"result": {"status": "Failure", "message": "no way"}}))
    refused = gizmos.create("v2", "a", 1)
    assert refused.status_code == 500, refused.text
    body = refused.json()
    assert body["message"] == f"conversion webhook for {GROUP}/v2, Kind=Gizmo{gizmos.plural[5:-1]} failed: no way"
    assert "reason" not in body
    assert gizmos.create("v1", "b", 1).status_code == 201  # the storage version needs no conversion


def test_a_webhook_changing_metadata(gateway: GatewayProcess, api: httpx.Client, served: Callable[..., Served]) -> None:
    """Only labels and annotations may change: a new name is refused; other metadata is restored."""

    def renames(request: dict[str, Any]) -> bytes:
        converted = json.loads(renaming(request))
        obj = converted["response"]["convertedObjects"][0]
        obj["metadata"]["name"] = "other"
        return json.dumps(converted).encode()

    gizmos = served(renames)
    kind = f"Gizmo{gizmos.plural[5:-1]}"
    refused = gizmos.create("v2", "a", 1)
    assert refused.status_code == 500, refused.text
    assert refused.json()["message"] == (
        f"conversion webhook for {GROUP}/v2, Kind={kind} returned invalid object: must have the same name: a != other"
    )

    def relabels(request: dict[str, Any]) -> bytes:
        converted = json.loads(renaming(request))
        for obj in converted["response"]["convertedObjects"]:
            obj["metadata"]["labels"] = {"converted": "yes"}
            obj["metadata"]["generation"] = 99
        return json.dumps(converted).encode()

    labelled = served(relabels)
    assert labelled.create("v2", "b", 1).status_code == 201
    on_disk = stored(gateway, labelled.plural, "b")
    assert (on_disk["metadata"]["labels"], on_disk["metadata"]["generation"]) == ({"converted": "yes"}, 1)
    got = api.get(labelled.path("v2", "b")).json()
    assert (got["metadata"]["labels"], got["metadata"]["generation"]) == ({"converted": "yes"}, 1)


def test_an_unreachable_webhook(api: httpx.Client, hooks: WebhookServer) -> None:
    port = free_port()
    plural = f"gizmo{next(_names)}s"
    config = {"url": f"https://127.0.0.1:{port}/convert", "caBundle": hooks.ca_bundle}
    assert api.post(CRDS, json=crd(plural, config)).status_code == 201
    try:
        gizmos = Served(api, plural)
        assert eventually(lambda: api.get(gizmos.path("v2")).status_code == 200)
        refused = gizmos.create("v2", "a", 1)
        assert refused.status_code == 500, refused.text
        assert refused.json()["message"] == (
            f"conversion webhook for {GROUP}/v2, Kind=Gizmo{plural[5:-1]} failed: "
            f'Post "https://127.0.0.1:{port}/convert?timeout=30s": '
            f"dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    finally:
        api.delete(f"{CRDS}/{plural}.{GROUP}")


URL, V1 = "https://h/x", ["v1"]


@pytest.mark.parametrize(
    ("conversion", "message"),
    [
        (
            {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}},
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        ),
        (
            {"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://h/x"}}},
            "spec.conversion.conversionReviewVersions: Required value",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "https://h/x"}, "conversionReviewVersions": ["v3"]},
            },
            'spec.conversion.conversionReviewVersions: Invalid value: []string{"v3"}: '
            "must include at least one of v1, v1beta1",
        ),
        (
            {
                "strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "http://h/x"}, "conversionReviewVersions": ["v1"]},
            },
            "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme",
        ),
    ],
)
def test_a_webhook_conversion_is_validated(api: httpx.Client, conversion: dict[str, Any], message: str) -> None:
    body = crd("things", {})
    body["spec"]["conversion"] = conversion
    refused = api.post(CRDS, json=body)
    assert refused.status_code == 422, refused.text
    assert message in refused.json()["message"]


@pytest.mark.skipif(kubectl_path() is None, reason="kubectl is not installed")
def test_kubectl_gets_either_version(gateway: GatewayProcess, served: Callable[..., Served], tmp_path: Path) -> None:
    gizmos = served(renaming)
    assert gizmos.create("v2", "k", 5).status_code == 201
    kubectl = Kubectl(gateway.url, tmp_path)
    for version, spec in (("v1", {"size": 5}), ("v2", {"dimension": 5})):
        shown = json.loads(kubectl.run("get", f"{gizmos.plural}.{version}.{GROUP}", "k", "-o", "json").stdout)
        assert (shown["apiVersion"], shown["spec"]) == (f"{GROUP}/{version}", spec)


def test_reads_while_the_webhook_fails(api: httpx.Client, served: Callable[..., Served]) -> None:
    """An object written in v1 while the webhook fails cannot be read in v2 (the read waits a while
    for the watch cache, which cannot convert it either, then reads storage: upstream's 500); once
    the webhook answers again, the cache converts it and reads succeed."""
    failing = {"on": False}

    def flaky(request: dict[str, Any]) -> bytes:
        if failing["on"]:
            return answer(request, {"result": {"status": "Failure", "message": "down"}})
        return renaming(request)

    gizmos = served(flaky)
    failing["on"] = True
    assert gizmos.create("v1", "late", 2).status_code == 201
    message = f"conversion webhook for {GROUP}/v1, Kind=Gizmo{gizmos.plural[5:-1]} failed: down"
    for path in (gizmos.path("v2", "late"), gizmos.path("v2")):
        refused = api.get(path)
        assert (refused.status_code, refused.json()["message"]) == (500, message), refused.text
    failing["on"] = False
    got = eventually(lambda: (r := api.get(gizmos.path("v2", "late"))).status_code == 200 and r)
    assert got.json()["spec"] == {"dimension": 2}
    listed = api.get(gizmos.path("v2")).json()["items"]
    assert [item["spec"] for item in listed] == [{"dimension": 2}]


def test_the_first_review_version_the_server_speaks_is_used(
    api: httpx.Client, hooks: WebhookServer, served: Callable[..., Served]
) -> None:
    def beta(request: dict[str, Any]) -> bytes:
        converted = json.loads(renaming(request))["response"]
        return answer(request, converted, "v1beta1")

    gizmos = served(beta, ("v9", "v1beta1", "v1"))
    made = gizmos.create("v2", "a", 6)
    assert made.status_code == 201, made.text
    assert api.get(gizmos.path("v1", "a")).json()["spec"] == {"size": 6}
    assert {r["apiVersion"] for r in hooks.reviews[f"/{gizmos.plural}"]} == {"apiextensions.k8s.io/v1beta1"}


def test_a_list_page_is_one_review(api: httpx.Client, hooks: WebhookServer, served: Callable[..., Served]) -> None:
    """When v2 is served anew (here: deprecated), its watch cache loads every stored object in one
    review, each carrying its resourceVersion."""
    gizmos = served(renaming)
    names = ("p", "q", "r")
    for value, name in enumerate(names):
        assert gizmos.create("v1", name, value).status_code == 201
    assert eventually(lambda: len(api.get(gizmos.path("v2")).json()["items"]) == len(names))
    path = f"/{gizmos.plural}"
    before = len(hooks.reviews[path])
    deprecate = [{"op": "add", "path": "/spec/versions/1/deprecated", "value": True}]
    changed = api.patch(
        f"{CRDS}/{gizmos.plural}.{GROUP}",
        content=json.dumps(deprecate),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert changed.status_code == 200, changed.text
    assert eventually(lambda: "deprecated" in api.get(gizmos.path("v2")).headers.get("Warning", ""))
    listed = api.get(gizmos.path("v2")).json()["items"]
    assert [(i["metadata"]["name"], i["spec"]) for i in listed] == [
        (name, {"dimension": value}) for value, name in enumerate(names)
    ]
    batches = [r["request"]["objects"] for r in hooks.reviews[path][before:]]
    whole = [batch for batch in batches if [o["metadata"]["name"] for o in batch] == list(names)]
    assert whole, batches
    assert all(o["metadata"]["resourceVersion"] for o in whole[0])


def test_a_write_answers_with_the_object_read_back(
    gateway: GatewayProcess, api: httpx.Client, served: Callable[..., Served]
) -> None:
    """Upstream's store decodes the bytes it wrote into a write's answer: with a webhook that is not
    its own inverse (v1 → v2 adds one), a create or update in v2 answers what a read of it in v2
    gives, not the object as sent."""

    def shifting(request: dict[str, Any]) -> bytes:
        converted = json.loads(renaming(request))
        for obj in converted["response"]["convertedObjects"]:
            if request["desiredAPIVersion"] == f"{GROUP}/v2" and "dimension" in obj["spec"]:
                obj["spec"]["dimension"] += 1
        return json.dumps(converted).encode()

    gizmos = served(shifting)
    made = gizmos.create("v2", "a", 3)
    assert made.status_code == 201, made.text
    assert stored(gateway, gizmos.plural, "a")["spec"] == {"size": 3}
    assert made.json()["spec"] == {"dimension": 4}
    assert made.json() == api.get(gizmos.path("v2", "a")).json()

    replaced = api.put(gizmos.path("v2", "a"), json={**made.json(), "spec": {"dimension": 10}})
    assert replaced.status_code == 200, replaced.text
    assert stored(gateway, gizmos.plural, "a")["spec"] == {"size": 10}
    assert replaced.json()["spec"] == {"dimension": 11}
    assert replaced.json() == api.get(gizmos.path("v2", "a")).json()

    made_in_v1 = gizmos.create("v1", "b", 5)  # the storage version: nothing to convert
    assert made_in_v1.json()["spec"] == {"size": 5}
