"""Representations (Kubernetes API Concepts: "HTTP media types", "JSON/YAML/Protobuf/CBOR resource encoding",
"Response compression", "Receiving resources as Tables"), for every verb the gateway serves.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import cbor.cbor as independent_cbor
import httpx
import pytest
import yaml

from protokube.schema.envelope import MAGIC

from .helpers import NO_ROOT_CA_PUBLISHER, GatewayProcess, Kubectl, deployment

ROOT = Path(__file__).parents[2]
PROTOBUF = "application/vnd.kubernetes.protobuf"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
# go-restful's 406 for the list route, before any handler negotiates (tests/gateway/test_anchor_differences.py)
ACCEPTED = (
    "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "
    f"{PROTOBUF}, application/json;stream=watch, {PROTOBUF};stream=watch"
)


def pod(name: str, **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]},
    }


@pytest.fixture
def pods(client: httpx.Client, namespace: str) -> str:
    path = f"/api/v1/namespaces/{namespace}/pods"
    for name in ("alpha", "beta"):
        assert client.post(path, json=pod(name, app="web")).status_code == 201
    return path


# ---- negotiation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        (None, "application/json"),
        ("*/*", "application/json"),
        ("application/yaml;q=0.5, application/json", "application/json"),
        ("application/json;q=0.1, application/yaml", "application/yaml"),
        ("text/html, application/yaml;q=0.9", "application/yaml"),
        (f"{PROTOBUF}, application/json", PROTOBUF),
        ("application/json;charset=utf-8", "application/json"),
    ],
)
def test_accept_negotiation(client: httpx.Client, pods: str, accept: str | None, content_type: str) -> None:
    headers = {"Accept": accept} if accept else {}
    response = client.get(f"{pods}/alpha", headers=headers)
    assert response.status_code == 200 and response.headers["content-type"] == content_type


def test_nothing_acceptable_is_406(client: httpx.Client, pods: str) -> None:
    for accept in ("text/html", "application/cbor", "application/xml;q=1, image/png"):
        response = client.get(pods, headers={"Accept": accept})
        assert response.status_code == 406
        body = response.json()
        assert body["reason"] == "NotAcceptable" and body["message"] == ACCEPTED


def test_unsupported_request_body_is_415(client: httpx.Client, namespace: str) -> None:
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        content=b"\xd9\xd9\xf7\xa0",
        headers={"Content-Type": "application/cbor"},
    )
    assert response.status_code == 415
    assert response.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, " + PROTOBUF
    )


# ---- YAML ----------------------------------------------------------------------------------
def test_yaml_in_and_out(client: httpx.Client, namespace: str) -> None:
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yml\ndata:\n  when: 2024-01-01T00:00:00Z\n"
    created = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        content=body,
        headers={"Content-Type": "application/yaml", "Accept": "application/yaml"},
    )
    assert created.status_code == 201 and created.headers["content-type"] == "application/yaml"
    parsed = yaml.safe_load(created.text)
    assert parsed["kind"] == "ConfigMap" and parsed["data"] == {"when": "2024-01-01T00:00:00Z"}
    listed = yaml.safe_load(
        client.get(f"/api/v1/namespaces/{namespace}/configmaps", headers={"Accept": "application/yaml"}).text
    )
    assert listed["kind"] == "ConfigMapList" and listed["items"][0]["metadata"]["name"] == "yml"


def test_yaml_watch_is_406(client: httpx.Client, pods: str) -> None:
    for accept in ("application/yaml", "application/yaml, application/json"):
        response = client.get(pods, params={"watch": "1"}, headers={"Accept": accept})
        assert response.status_code == 406
        assert yaml.safe_load(response.text)["message"] == (  # the Status itself comes back as YAML
            "only the following media types are accepted: application/json;stream=watch, "
            "application/vnd.kubernetes.protobuf;stream=watch"
        )


# ---- protobuf ------------------------------------------------------------------------------
def decode_raw(data: bytes) -> str:
    """protoc --decode_raw: an independent decoder that knows no schema."""
    result = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "--decode_raw"],
        input=data,
        capture_output=True,
        timeout=30,
        check=True,
    )
    return result.stdout.decode()


def wire(data: bytes) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "protokube", "wire"], input=data, capture_output=True, timeout=30, check=True, cwd=ROOT
    )
    return result.stdout.decode()


def test_protobuf_get_matches_json(client: httpx.Client, pods: str) -> None:
    as_json = client.get(f"{pods}/alpha").json()
    response = client.get(f"{pods}/alpha", headers={"Accept": PROTOBUF})
    assert response.headers["content-type"] == PROTOBUF
    data = response.content
    assert data[:4] == MAGIC
    raw = decode_raw(data[4:])
    assert '1 {\n  1: "v1"\n  2: "Pod"\n}' in raw  # runtime.Unknown typeMeta
    annotated = wire(data)
    meta = as_json["metadata"]
    for expected in (
        f'name: string = "{meta["name"]}"',
        f'uid: string = "{meta["uid"]}"',
        f'resourceVersion: string = "{meta["resourceVersion"]}"',
        'image: string = "nginx:1.27"',
        "containerPort: int32 = 80",
        'kind: string = "Pod"',
    ):
        assert expected in annotated, expected


def test_protobuf_list_is_enveloped_once(client: httpx.Client, pods: str) -> None:
    data = client.get(pods, headers={"Accept": PROTOBUF}).content
    assert data[:4] == MAGIC and data.count(MAGIC) == 1
    annotated = wire(data)
    assert "object PodList (k8s.io.api.core.v1.PodList)" in annotated
    assert annotated.count("items: k8s.io.api.core.v1.Pod") == 2


def test_protobuf_body_answered_in_json(client: httpx.Client, pods: str) -> None:
    encoded = client.get(f"{pods}/alpha", headers={"Accept": PROTOBUF}).content
    client.delete(f"{pods}/alpha")
    created = client.post(pods, content=encoded, headers={"Content-Type": PROTOBUF, "Accept": "application/json"})
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["name"] == "alpha"


@pytest.mark.parametrize(
    "body",
    [
        b"\x0a\x02hi",
        MAGIC + b"\x0a\x09\x0a\x02v1\x12\x03Pod\x12\xff",
        b"k8s\x00" + bytes(range(256)),
        b"\x00\x01\x02\x03",
    ],
)
def test_bad_protobuf_bodies_are_400(client: httpx.Client, pods: str, body: bytes) -> None:
    response = client.post(pods, content=body, headers={"Content-Type": PROTOBUF})
    assert response.status_code == 400 and response.json()["reason"] == "BadRequest"


def test_protobuf_body_of_another_kind_is_400(client: httpx.Client, namespace: str, pods: str) -> None:
    encoded = client.get(f"{pods}/alpha", headers={"Accept": PROTOBUF}).content
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps", content=encoded, headers={"Content-Type": PROTOBUF}
    )
    assert response.status_code == 400
    assert response.json()["message"].startswith('Pod in version "v1" cannot be handled as a ConfigMap')


def test_protobuf_watch_framing(client: httpx.Client, pods: str) -> None:
    with client.stream(
        "GET", pods, params={"watch": "1", "timeoutSeconds": "2"}, headers={"Accept": PROTOBUF}
    ) as response:
        assert response.headers["content-type"] == PROTOBUF + ";stream=watch"
        data = response.read()
    frames = []
    while data:
        (length,) = struct.unpack(">I", data[:4])
        frames.append(data[4 : 4 + length])
        data = data[4 + length :]
    assert len(frames) == 2
    for frame in frames:
        assert not frame.startswith(MAGIC)  # the WatchEvent itself is not enveloped
        raw = decode_raw(frame)
        assert raw.startswith('1: "ADDED"')
        assert "k8s\\000" in raw  # ... its object.raw is


# ---- CBOR ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cbor_server(tmp_path_factory: pytest.TempPathFactory):
    flags = ("--feature-gates", "CBORServingAndStorage=true", NO_ROOT_CA_PUBLISHER)  # default's lists: the test's
    server = GatewayProcess(tmp_path_factory.mktemp("cbor"), *flags).start()
    yield server
    server.kill()


def strip_tag(value):
    """The content of the self-described tag every CBOR item starts with, its byte strings as text:
    upstream writes every string and map key as a CBOR byte string (asserted for the item's keys)."""
    assert isinstance(value, independent_cbor.Tag) and value.tag == 55799
    assert isinstance(value.value, dict) and all(isinstance(k, bytes) for k in value.value), value.value
    return as_text(value.value)


def as_text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, dict):
        return {as_text(k): as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_text(v) for v in value]
    return value  # numbers, and tags: []byte is a byte string under tag 22


def test_cbor_get_list_and_create(cbor_server: GatewayProcess) -> None:
    with cbor_server.client() as client:
        path = "/api/v1/namespaces/default/secrets"
        secret = {"metadata": {"name": "s"}, "data": {"k": "AAEC"}}
        assert client.post(path, json=secret).status_code == 201
        got = client.get(f"{path}/s", headers={"Accept": "application/cbor"})
        assert got.headers["content-type"] == "application/cbor" and got.content[:3] == b"\xd9\xd9\xf7"
        obj = strip_tag(independent_cbor.loads(got.content))
        data = obj.pop("data")["k"]  # []byte as upstream writes it: a byte string under tag 22 (base64 later)
        assert isinstance(data, independent_cbor.Tag) and (data.tag, data.value) == (22, b"\x00\x01\x02")
        as_json = client.get(f"{path}/s").json()
        assert as_json.pop("data") == {"k": "AAEC"} and obj["kind"] == "Secret" and obj == as_json
        listed = strip_tag(independent_cbor.loads(client.get(path, headers={"Accept": "application/cbor"}).content))
        assert listed["kind"] == "SecretList" and listed["items"][0]["metadata"]["name"] == "s"

        import cbor2

        body = b"\xd9\xd9\xf7" + cbor2.dumps(  # []byte as upstream writes it: bytes under tag 22
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}, "data": {"x": cbor2.CBORTag(22, b"\xff")}}
        )
        created = client.post(path, content=body, headers={"Content-Type": "application/cbor"})
        assert created.status_code == 201, created.text
        assert created.json()["data"] == {"x": "/w=="}
        bad = client.post(path, content=b"\xd9\xd9\xf7\xbf\x61", headers={"Content-Type": "application/cbor"})
        assert bad.status_code == 400


def test_cbor_watch_is_a_sequence(cbor_server: GatewayProcess) -> None:
    with cbor_server.client() as client:
        path = "/api/v1/namespaces/default/configmaps"
        for name in ("w1", "w2"):
            client.post(path, json={"metadata": {"name": name}})
        with client.stream(
            "GET", path, params={"watch": "1", "timeoutSeconds": "2"}, headers={"Accept": "application/cbor"}
        ) as response:
            assert response.headers["content-type"] == "application/cbor-seq"
            data = response.read()
        import io

        stream = io.BytesIO(data)
        events = []
        while stream.tell() < len(data):
            events.append(strip_tag(independent_cbor.load(stream)))
        assert [e["type"] for e in events] == ["ADDED", "ADDED"]
        assert [strip_tag(e["object"])["metadata"]["name"] for e in events] == ["w1", "w2"]


# ---- Table ---------------------------------------------------------------------------------
def test_table_list(client: httpx.Client, pods: str) -> None:
    response = client.get(pods, headers={"Accept": TABLE + ", application/json"})
    assert response.headers["content-type"] == "application/json"
    table = response.json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", 0),
        ("Ready", 0),
        ("Status", 0),
        ("Restarts", 0),
        ("Age", 0),
        ("IP", 1),
        ("Node", 1),
        ("Nominated Node", 1),
        ("Readiness Gates", 1),
    ]
    assert all(set(c) == {"name", "type", "format", "description", "priority"} for c in table["columnDefinitions"])
    assert [r["cells"][:4] for r in table["rows"]] == [
        ["alpha", "0/1", "Pending", "0"],
        ["beta", "0/1", "Pending", "0"],
    ]
    assert table["rows"][0]["cells"][5:] == ["<none>", "<none>", "<none>", "<none>"]
    first = table["rows"][0]["object"]
    assert first["kind"] == "PartialObjectMetadata" and first["metadata"]["name"] == "alpha"
    assert table["metadata"]["resourceVersion"].isdigit()


def test_table_include_object(client: httpx.Client, pods: str) -> None:
    none = client.get(pods, params={"includeObject": "None"}, headers={"Accept": TABLE}).json()
    assert none["rows"][0]["object"] is None
    full = client.get(pods, params={"includeObject": "Object"}, headers={"Accept": TABLE}).json()
    assert full["rows"][0]["object"]["kind"] == "Pod" and full["rows"][0]["object"]["spec"]["containers"]
    bad = client.get(pods, params={"includeObject": "All"}, headers={"Accept": TABLE})
    assert bad.status_code == 400
    assert bad.json()["message"].startswith("Unable to convert to Table as requested: includeObject: Invalid value")


def test_table_get_and_yaml(client: httpx.Client, pods: str) -> None:
    single = client.get(f"{pods}/alpha", headers={"Accept": TABLE}).json()
    assert single["kind"] == "Table" and len(single["rows"]) == 1
    as_yaml = yaml.safe_load(client.get(pods, headers={"Accept": "application/yaml;as=Table;v=v1;g=meta.k8s.io"}).text)
    assert as_yaml["kind"] == "Table" and len(as_yaml["rows"]) == 2


def test_v1beta1_table_and_partial_metadata(client: httpx.Client, pods: str) -> None:
    """meta.k8s.io/v1beta1's Table and PartialObjectMetadata(List) are still served (upstream serves
    them to old clients; it was 406)."""
    v1beta1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
    table = client.get(pods, params={"includeObject": "Metadata"}, headers={"Accept": v1beta1}).json()
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1beta1")
    assert [r["cells"][0] for r in table["rows"]] == ["alpha", "beta"]
    assert table["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    partial = "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io"
    listed = client.get(pods, headers={"Accept": partial}).json()
    assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1beta1")
    assert [i["apiVersion"] for i in listed["items"]] == ["meta.k8s.io/v1beta1"] * 2
    single = client.get(
        f"{pods}/alpha", headers={"Accept": "application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io"}
    ).json()
    assert (single["kind"], single["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1beta1")
    envelope = client.get(
        pods, headers={"Accept": f"{PROTOBUF};as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io"}
    ).content
    assert envelope.startswith(MAGIC) and b"meta.k8s.io/v1beta1" in envelope[:64]
    with client.stream("GET", pods, params={"watch": "1", "timeoutSeconds": "1"}, headers={"Accept": v1beta1}) as w:
        events = [json.loads(line) for line in w.iter_lines() if line]
    assert [e["object"]["apiVersion"] for e in events] == ["meta.k8s.io/v1beta1"] * 2
    assert client.get(pods, headers={"Accept": "application/json;as=Table;v=v2;g=meta.k8s.io"}).status_code == 406


def test_protobuf_table_is_406(client: httpx.Client, pods: str) -> None:
    response = client.get(pods, headers={"Accept": f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io"})
    assert response.status_code == 406
    fallback = client.get(pods, headers={"Accept": f"{PROTOBUF};as=Table;v=v1;g=meta.k8s.io, application/json"})
    assert fallback.json()["kind"] == "PodList"


def test_table_watch_sends_columns_once(client: httpx.Client, pods: str) -> None:
    with client.stream(
        "GET", pods, params={"watch": "1", "timeoutSeconds": "2"}, headers={"Accept": TABLE}
    ) as response:
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert [e["type"] for e in events] == ["ADDED", "ADDED"]
    first, second = (e["object"] for e in events)
    assert first["kind"] == "Table" and len(first["rows"]) == 1 and first["columnDefinitions"]
    assert second["columnDefinitions"] is None and second["rows"][0]["cells"][0] == "beta"


def test_other_kinds_print_their_columns(client: httpx.Client, namespace: str) -> None:
    client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "c"}, "data": {"a": "1"}})
    cm = client.get(f"/api/v1/namespaces/{namespace}/configmaps", headers={"Accept": TABLE}).json()
    assert [c["name"] for c in cm["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert cm["rows"][0]["cells"][:2] == ["c", 1]
    ns = client.get("/api/v1/namespaces/default", headers={"Accept": TABLE}).json()
    assert ns["rows"][0]["cells"][:2] == ["default", "Active"]


def test_default_columns_for_kinds_without_printer_columns(client: httpx.Client, pods: str) -> None:
    import dataclasses

    from protokube.gateway.codecs import codec_for
    from protokube.gateway.objects.view import ObjectView
    from protokube.gateway.printing import table
    from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
    from protokube.schema.jsondecode import decode
    from protokube.schema.registry import registry

    resource = dataclasses.replace(registry().resource("", "v1", "pods"), printer_columns=())
    obj = decode(client.get(f"{pods}/alpha").json(), resource.message).message
    view = ObjectView.of(codec_for(resource), obj, 5)
    printed = table.table(resource, [view], meta.ListMeta(), "Metadata")
    assert [(c["name"], c["type"], c["format"]) for c in printed["columnDefinitions"]] == [
        ("Name", "string", "name"),
        ("Created At", "date", ""),
    ]
    assert printed["rows"][0]["cells"] == ["alpha", client.get(f"{pods}/alpha").json()["metadata"]["creationTimestamp"]]


# ---- metadata only -------------------------------------------------------------------------
def test_partial_object_metadata(client: httpx.Client, pods: str) -> None:
    single = client.get(
        f"{pods}/alpha", headers={"Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"}
    )
    assert single.json() == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": client.get(f"{pods}/alpha").json()["metadata"],
    }
    listed = client.get(
        pods, headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}
    ).json()
    assert listed["kind"] == "PartialObjectMetadataList" and len(listed["items"]) == 2
    assert listed["items"][0]["kind"] == "PartialObjectMetadata" and "spec" not in listed["items"][0]
    as_proto = client.get(pods, headers={"Accept": f"{PROTOBUF};as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"})
    assert "object PartialObjectMetadataList" in wire(as_proto.content)
    with client.stream(
        "GET",
        pods,
        params={"watch": "1", "timeoutSeconds": "1"},
        headers={"Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"},
    ) as response:
        events = [json.loads(line) for line in response.iter_lines() if line]
    assert {e["object"]["kind"] for e in events} == {"PartialObjectMetadata"}
    wrong = client.get(
        f"{pods}/alpha", headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"}
    )
    assert wrong.status_code == 406


# ---- compression ---------------------------------------------------------------------------
def test_large_lists_are_gzipped_small_gets_are_not(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(40):
        client.post(path, json={"metadata": {"name": f"big{i}"}, "data": {"blob": "x" * 4000}})
    raw = httpx.Client(base_url=client.base_url, headers={"Accept-Encoding": "gzip"})
    with raw.stream("GET", path) as response:
        assert response.headers["content-encoding"] == "gzip"
        body = b"".join(response.iter_raw())
    assert len(json.loads(gzip.decompress(body))["items"]) == 40
    small = client.get(f"{path}/big0", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    with raw.stream("GET", path, params={"watch": "1", "timeoutSeconds": "1"}) as response:
        assert "content-encoding" not in response.headers


# ---- hostile input -------------------------------------------------------------------------
BILLION_LAUGHS = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


@pytest.mark.parametrize(
    ("content_type", "body", "code"),
    [
        ("application/yaml", BILLION_LAUGHS, 400),
        ("application/json", b"[" * 200_000 + b"]" * 200_000, 400),
        ("application/json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, 400),
        ("application/json", b'{"metadata":{"name":"x"},"data":{"a":"' + b"x" * (4 * 1024 * 1024) + b'"}}', 413),
        (PROTOBUF, b"k8s\x00" + b"\x0a" * 1000, 400),
    ],
)
def test_hostile_bodies_fail_fast_and_leave_the_server_healthy(
    client: httpx.Client, namespace: str, content_type: str, body: bytes, code: int
) -> None:
    response = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps", content=body, headers={"Content-Type": content_type}, timeout=20
    )
    assert response.status_code == code, response.text[:300]
    assert response.json()["kind"] == "Status"
    assert client.get("/healthz").text == "ok"


# ---- kubectl -------------------------------------------------------------------------------
def test_kubectl_prints_tables(kubectl: Kubectl, client: httpx.Client, pods: str, namespace: str) -> None:
    out = kubectl.run("get", "pods", "-n", namespace).stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert out[1].split()[:4] == ["alpha", "0/1", "Pending", "0"]
    wide = kubectl.run("get", "pods", "-n", namespace, "-o", "wide").stdout.splitlines()
    assert wide[0].split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    everywhere = kubectl.run("get", "pods", "-A").stdout.splitlines()
    assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert any(line.split()[:2] == [namespace, "alpha"] for line in everywhere[1:])


def test_kubectl_watches_deployments(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    process = kubectl.popen("get", "deploy", "-n", namespace, "-w")
    try:
        time.sleep(2)
        client.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deployment("web"))
        assert process.stdout is not None
        header = process.stdout.readline().split()
        row = process.stdout.readline().split()
        assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
        assert row[:4] == ["web", "0/2", "0", "0"]
    finally:
        process.kill()
        process.wait(10)
