"""The wire explorer (issue 20): /debug/wire's page and /debug/wire/decode, the JSON form of
``protokube wire``, on a server started with --enable-debug-wire; off (404) without it; subject to
authorization like the other /debug paths. The page's logic runs in node and, where Debian's
Chromium is installed, the page itself in headless Chromium."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import ROOT, GatewayProcess

PROTOBUF = "application/vnd.kubernetes.protobuf"
PAGE_JS = ROOT / "gateway" / "wireexplorer" / "static" / "explorer.js"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def explorer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("wire-gateway"), "--enable-debug-wire").start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def api(explorer: GatewayProcess) -> Iterator[httpx.Client]:
    with explorer.client() as client:
        client.post(
            CONFIGMAPS, json={"metadata": {"name": "cfg", "labels": {"app": "web"}}, "data": {"greeting": "hello"}}
        )
        yield client


def nodes(tree: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in tree:
        yield node
        yield from nodes(node["children"])


def decode(api: httpx.Client, data: bytes, **params: str) -> httpx.Response:
    return api.post(
        "/debug/wire/decode", content=data, params=params, headers={"Content-Type": "application/octet-stream"}
    )


def test_an_object_as_the_server_sends_it(api: httpx.Client) -> None:
    data = api.get(f"{CONFIGMAPS}/cfg", headers={"Accept": PROTOBUF}).content
    answer = decode(api, data)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["size"] == len(data)
    texts = [n["text"] for n in nodes(body["tree"])]
    assert texts[0] == "magic k8s\\x00 (6b 38 73 00): Kubernetes protobuf envelope"
    assert "object ConfigMap (k8s.io.api.core.v1.ConfigMap)" in texts
    name = next(n for n in nodes(body["tree"]) if n.get("name") == "name" and n["value"] == '"cfg"')
    # byte ranges match the bytes: the value is the last len("cfg") bytes of the field
    assert data[name["valueStart"] : name["end"]] == b"cfg" and name["wireType"] == "LEN" and name["number"] == 1
    assert data[name["start"]] == (1 << 3) | 2  # the tag: field 1, wire type LEN
    # sizes of the same object in each encoding, and what each top-level field costs
    assert body["object"]["data"] == {"greeting": "hello"}
    assert body["sizes"]["protobuf"] == len(data) and body["sizes"]["json"] > 0 and body["sizes"]["cbor"] > 0
    costs = {f["name"]: f for f in body["fields"]}
    assert costs["data"]["json"] == len('"data":{"greeting":"hello"}') and costs["data"]["protobuf"] > 0


def test_unknown_fields_are_shown_as_unknown(api: httpx.Client) -> None:
    data = api.get(f"{CONFIGMAPS}/cfg", headers={"Accept": PROTOBUF}).content
    unknown = b"\xf8\x06\x07"  # field 111, varint 7: appended to runtime.Unknown
    body = decode(api, data + unknown).json()
    found = [n for n in nodes(body["tree"]) if n.get("unknown")]
    assert [(n["number"], n["value"], n["start"]) for n in found] == [(111, "7", len(data))]


def test_a_watch_stream_and_text_inputs(api: httpx.Client) -> None:
    stream = api.get(CONFIGMAPS, params={"watch": "1", "timeoutSeconds": "1"}, headers={"Accept": PROTOBUF}).content
    body = decode(api, stream).json()
    frames = [n for n in body["tree"] if n["text"].startswith("frame: 4-byte big-endian length")]
    assert frames and frames[0]["start"] == 0 and frames[0]["end"] == 4 + struct.unpack(">I", stream[:4])[0]
    assert any(n.get("name") == "type" and n["value"] == '"ADDED"' for n in nodes(body["tree"]))
    raw = bytes.fromhex("0a 05 0a 03 61 62 63")  # ConfigMap{metadata{name:"abc"}}
    typed = decode(api, raw, type="ConfigMap").json()
    assert typed["tree"][0]["name"] == "metadata" and typed["tree"][0]["children"][0]["value"] == '"abc"'


@pytest.mark.parametrize(
    ("data", "params", "message"),
    [
        (b"", {}, "no bytes to decode: send them as the request body"),
        (b"k8s\x00\x0a\xff", {}, "not protobuf wire format: offset 6: truncated varint"),
        (b"\x0a\x00", {"type": "Nonesuch"}, "type 'Nonesuch' names 0 kinds; give a full message name"),
        (
            b"\x0a\x00",
            {"form": "weird"},
            'form: unsupported value "weird": supported values: auto, envelope, watch, message',
        ),
    ],
)
def test_bad_input_is_a_400(api: httpx.Client, data: bytes, params: dict[str, str], message: str) -> None:
    answer = decode(api, data, **params)
    assert answer.status_code == 400
    assert answer.json()["reason"] == "BadRequest" and answer.json()["message"] == message


def test_the_page_and_its_files(api: httpx.Client) -> None:
    page = api.get("/debug/wire")
    assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script src="/debug/wire/explorer.js">' in page.text
    assert api.get("/debug/wire/explorer.js").headers["content-type"] == "text/javascript; charset=utf-8"
    assert api.get("/debug/wire/explorer.css").status_code == 200
    assert api.get("/debug/wire/nothing").status_code == 404


def test_off_by_default_and_authorized_like_debug_paths(
    client: httpx.Client, server: GatewayProcess, explorer: GatewayProcess
) -> None:
    assert client.get("/debug/wire").status_code == 404  # the shared server runs without the flag
    assert client.post("/debug/wire/decode", content=b"\x0a\x00").status_code in (404, 405)
    with explorer.secure_client() as anonymous:
        refused = anonymous.post("/debug/wire/decode", content=b"\x0a\x00")
    assert refused.status_code == 403
    assert refused.json()["message"] == 'forbidden: User "system:anonymous" cannot post path "/debug/wire/decode"'


def test_the_page_logic_in_node(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    script = f"""
const x = require({json.dumps(str(PAGE_JS))});
const leaf = (start, end) => ({{start, end, children: []}});
const tree = [leaf(0, 4), {{start: 4, end: 10, children: [leaf(6, 8)]}}];
console.log(JSON.stringify({{
  hex: Array.from(x.parseInput("0a 05 0x61")),
  b64: Array.from(x.parseInput("{base64.b64encode(b"k8s").decode()}")),
  inner: x.innermost(tree, 7).start, outer: x.innermost(tree, 9).start, none: x.innermost(tree, 12),
  flat: x.flatten(tree).map((e) => e.depth),
}}));
"""
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30, check=True).stdout
    assert json.loads(out) == {
        "hex": [10, 5, 97],
        "b64": [107, 56, 115],
        "inner": 6,
        "outer": 4,
        "none": None,
        "flat": [0, 0, 1],
    }


def test_the_page_in_headless_chromium(explorer: GatewayProcess, api: httpx.Client, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed")
    url = f"{explorer.url}/debug/wire#path={CONFIGMAPS}/cfg"
    argv = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path}",
        "--virtual-time-budget=5000", "--dump-dom", url,
    ]  # fmt: skip
    dom = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    assert "object ConfigMap (k8s.io.api.core.v1.ConfigMap)" in dom  # the tree, rendered from the decode answer
    assert 'data-index="0"' in dom and ">6b </span>" in dom  # the bytes, one span each
    assert "unknown fields" in dom and '"greeting": "hello"' in dom
