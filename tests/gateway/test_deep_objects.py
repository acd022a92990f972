"""Deeply nested objects: whatever is acknowledged reads back, and what is refused is refused with a
Status before anything is stored (issue 34, items 7-9).

- CRD schemas nest JSONSchemaProps in JSONSchemaProps. Upstream stores them as deep as its JSON
  decoder allows; here up to 64 levels (deeper: 422, or 400 at decoding), and they read back from
  storage, in protobuf too.
- Custom objects that preserve unknown fields nest up to Go's JSON limit (10,000 levels, then
  Go's "exceeded max depth"), through create, read, list, patches and managedFields.
- Server-side apply treats preserved unknown fields as structured-merge-diff's deduced type.

Very deep JSON is built as text: Python's json module recurses.

The module has a server of its own: its CRDs would show in other modules' discovery.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import orjson
import pytest

from .helpers import GatewayProcess, eventually

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "deep.example.com"
JSON = {"Content-Type": "application/json"}
PROTOBUF = "application/vnd.kubernetes.protobuf"
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def crd(plural: str, kind: str, schema: str) -> str:
    """A CRD of GROUP, as JSON text around an openAPIV3Schema given as JSON text."""
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": "SCHEMA"}}],
        },
    }
    return json.dumps(body).replace('"SCHEMA"', schema)


def nested_schema(levels: int) -> str:
    """An object schema whose property ``a`` is an object schema ... ``levels`` schemas deep."""
    return '{"type":"object","properties":{"a":' * (levels - 1) + '{"type":"string"}' + "}}" * (levels - 1)


def nested(levels: int, leaf: str = '"leaf"') -> str:
    """``{"a":{"a":...leaf...}}``: ``levels`` objects."""
    return '{"a":' * levels + leaf + "}" * levels


def obj(kind: str, name: str, fields: str) -> str:
    return f'{{"apiVersion":"{GROUP}/v1","kind":"{kind}","metadata":{{"name":"{name}"}},{fields}}}'


def install(client: httpx.Client, body: str) -> str:
    """Create a CRD and wait until it is established; its name."""
    made = client.post(CRDS, content=body, headers=JSON)
    assert made.status_code == 201, made.text
    name = made.json()["metadata"]["name"]

    def established() -> bool:
        found = client.get(f"{CRDS}/{name}")
        assert found.status_code == 200, found.text
        conditions = found.json().get("status", {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    assert eventually(established)
    return name


def uninstall(client: httpx.Client, name: str) -> None:
    deleted = client.delete(f"{CRDS}/{name}")
    assert deleted.status_code == 200, deleted.text
    assert eventually(lambda: client.get(f"{CRDS}/{name}").status_code == 404)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    process = GatewayProcess(tmp_path_factory.mktemp("deep-gateway")).start()
    with process.client() as client:
        yield client
    process.kill()


@pytest.fixture(scope="module")
def blobs(api: httpx.Client) -> Iterator[str]:
    """A kind whose root preserves unknown fields: the collection's path."""
    schema = '{"type":"object","x-kubernetes-preserve-unknown-fields":true}'
    name = install(api, crd("blobs", "Blob", schema))
    yield f"/apis/{GROUP}/v1/namespaces/default/blobs"
    uninstall(api, name)


def fields_v1(response: httpx.Response, manager: str) -> bytes:
    """The FieldsV1 of ``manager``'s entry, as JSON text (orjson: fewer than 255 levels)."""
    entries = orjson.loads(response.content)["metadata"]["managedFields"]
    entry = next(e for e in entries if e["manager"] == manager)
    return orjson.dumps(entry["fieldsV1"])


# -- CRD schemas (item 7) ---------------------------------------------------------------------------


def test_a_crd_nested_60_levels_reads_back_from_storage(api: httpx.Client) -> None:
    name = install(api, crd("deepschemas", "DeepSchema", nested_schema(60)))
    listed = api.get(CRDS)
    assert listed.status_code == 200, listed.text
    assert name in [item["metadata"]["name"] for item in listed.json()["items"]]
    as_protobuf = api.get(f"{CRDS}/{name}", headers={"Accept": PROTOBUF})
    assert as_protobuf.status_code == 200, as_protobuf.text
    # What a protobuf client read, it can write back.
    written = api.put(f"{CRDS}/{name}", content=as_protobuf.content, headers={"Content-Type": PROTOBUF})
    assert written.status_code == 200, written.text
    path = f"/apis/{GROUP}/v1/namespaces/default/deepschemas"
    made = api.post(path, content=obj("DeepSchema", "x", nested(59)[1:-1]), headers=JSON)
    assert made.status_code == 201, made.text
    assert nested(58) in api.get(f"{path}/x").text
    uninstall(api, name)


@pytest.mark.parametrize(
    ("levels", "code", "reason", "message"),
    [
        (65, 422, "Invalid", "must not nest schemas more than 64 levels deep"),
        (150, 400, "BadRequest", "json: exceeded max depth of 200 for a CustomResourceDefinition"),
    ],
)
def test_a_crd_nested_too_deep_is_refused_and_not_stored(
    api: httpx.Client, levels: int, code: int, reason: str, message: str
) -> None:
    refused = api.post(CRDS, content=crd(f"deep{levels}s", f"Deep{levels}", nested_schema(levels)), headers=JSON)
    assert refused.status_code == code, refused.text
    status = refused.json()
    assert (status["kind"], status["reason"], status["code"]) == ("Status", reason, code)
    assert message in status["message"]
    if code == 422:
        cause = status["details"]["causes"][0]
        assert (cause["reason"], cause["field"]) == ("FieldValueForbidden", "spec.versions[0].schema.openAPIV3Schema")
    assert api.get(f"{CRDS}/deep{levels}s.{GROUP}").status_code == 404
    assert api.get(CRDS).status_code == 200


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _nested_props(levels: int) -> bytes:
    """JSONSchemaProps bytes nested ``levels`` deep through properties (field 29) entry "a",
    written without building (or copying) each level: sizes first, innermost up."""
    sizes = [0]  # the size of the props at each level, innermost first
    for _ in range(levels):
        entry = len(_field(1, b"a")) + len(_varint(2 << 3 | 2)) + len(_varint(sizes[-1])) + sizes[-1]
        sizes.append(len(_varint(29 << 3 | 2)) + len(_varint(entry)) + entry)
    heads = []
    for inner in reversed(sizes[:-1]):
        entry_head = _field(1, b"a") + _varint(2 << 3 | 2) + _varint(inner)
        heads.append(_varint(29 << 3 | 2) + _varint(len(entry_head) + inner) + entry_head)
    return b"".join(heads)


def test_a_protobuf_crd_nested_beyond_the_limit_is_refused_before_it_is_parsed(api: httpx.Client) -> None:
    """65,000 levels: more than any parse here could take (upb parses stored objects up to 65,535
    levels, recursing in C)."""
    props = _nested_props(65000)
    version = _field(1, b"v1") + b"\x10\x01\x18\x01" + _field(4, _field(1, props))
    names = _field(1, b"deeppbs") + _field(2, b"deeppb") + _field(4, b"DeepPb")
    spec = _field(1, GROUP.encode()) + _field(3, names) + _field(4, b"Namespaced") + _field(7, version)
    crd_bytes = _field(1, _field(1, f"deeppbs.{GROUP}".encode())) + _field(2, spec)
    type_meta = _field(1, b"apiextensions.k8s.io/v1") + _field(2, b"CustomResourceDefinition")
    body = b"k8s\x00" + _field(1, type_meta) + _field(2, crd_bytes)
    refused = api.post(CRDS, content=body, headers={"Content-Type": PROTOBUF})
    assert refused.status_code == 400, refused.text
    assert "the protobuf object exceeded max depth of 200" in refused.json()["message"]
    assert api.get("/readyz").status_code == 200
    assert api.get(f"{CRDS}/deeppbs.{GROUP}").status_code == 404


# -- Custom objects (item 8) ------------------------------------------------------------------------


@pytest.mark.parametrize("levels", [300, 1000])
def test_preserved_fields_nested_deep_are_stored_and_read_back(api: httpx.Client, blobs: str, levels: int) -> None:
    name = f"nested{levels}"
    made = api.post(blobs, content=obj("Blob", name, f'"spec":{nested(levels)}'), headers=JSON)
    assert made.status_code == 201, made.text
    assert nested(levels) in made.text
    # The creator owns every field it set, at every level (deduced: each key a member).
    owned = b'{"f:spec":' + b'{".":{},"f:a":' * levels + b"{}" + b"}" * levels + b"}"
    assert b'"fieldsV1":' + owned + b',"manager":"python-httpx"' in made.content
    read = api.get(f"{blobs}/{name}")
    assert read.status_code == 200, read.text
    assert read.content == made.content
    listed = api.get(blobs)
    assert listed.status_code == 200, listed.text
    assert nested(levels) in listed.text
    assert api.delete(f"{blobs}/{name}").status_code == 200
    assert api.get(f"{blobs}/{name}").status_code == 404


def test_a_merge_patch_deepens_an_object(api: httpx.Client, blobs: str) -> None:
    made = api.post(blobs, content=obj("Blob", "patched", '"spec":{"x":1}'), headers=JSON)
    assert made.status_code == 201, made.text
    patched = api.patch(f"{blobs}/patched", content='{"spec":{"y":' + nested(1000) + "}}", headers=MERGE_PATCH)
    assert patched.status_code == 200, patched.text
    read = api.get(f"{blobs}/patched")
    assert read.status_code == 200, read.text
    assert '"spec":{"x":1,"y":' + nested(1000) + "}" in read.text
    added = api.patch(
        f"{blobs}/patched",
        content='[{"op":"add","path":"/spec/z","value":' + nested(1000) + "}]",
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert added.status_code == 200, added.text
    assert '"z":' + nested(1000) in api.get(f"{blobs}/patched").text
    assert api.delete(f"{blobs}/patched").status_code == 200


def test_nesting_up_to_go_json_limit(api: httpx.Client, blobs: str) -> None:
    """10,000 levels in all (the object itself is one), as encoding/json's scanner allows; one more
    is its syntax error, and nothing is stored."""
    made = api.post(blobs, content=obj("Blob", "deepest", f'"spec":{nested(9999)}'), headers=JSON)
    assert made.status_code == 201, made.text
    read = api.get(f"{blobs}/deepest")
    assert read.status_code == 200, read.text
    assert nested(9999) in read.text
    refused = api.post(blobs, content=obj("Blob", "deeper", f'"spec":{nested(10000)}'), headers=JSON)
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"].startswith(
        "the object provided is unrecognized (must be of type Blob): couldn't get version/kind; "
        "json parse error: invalid character '{' exceeded max depth"
    )
    assert api.get(f"{blobs}/deeper").status_code == 404
    assert api.delete(f"{blobs}/deepest").status_code == 200


# -- Server-side apply over preserved fields (item 9) ------------------------------------------------


def apply(api: httpx.Client, path: str, manager: str, body: str, force: bool = False) -> httpx.Response:
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return api.patch(path, params=params, content=body, headers=APPLY)


def test_apply_creates_and_updates_where_the_root_preserves_unknown_fields(api: httpx.Client, blobs: str) -> None:
    path = f"{blobs}/applied"
    created = apply(api, path, "alice", obj("Blob", "applied", '"spec":{"x":1,"m":{"k":"v"}}'))
    assert created.status_code == 201, created.text
    assert fields_v1(created, "alice") == b'{"f:spec":{".":{},"f:m":{".":{},"f:k":{}},"f:x":{}}}'
    updated = apply(api, path, "alice", obj("Blob", "applied", '"spec":{"x":2}'))
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"] == {"x": 2}  # alice no longer applies spec.m: it is gone
    assert fields_v1(updated, "alice") == b'{"f:spec":{".":{},"f:x":{}}}'
    conflict = apply(api, path, "bob", obj("Blob", "applied", '"spec":{"x":3}'))
    assert conflict.status_code == 409, conflict.text
    assert conflict.json()["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.x"}
    ]
    forced = apply(api, path, "bob", obj("Blob", "applied", '"spec":{"x":3}'), force=True)
    assert forced.status_code == 200, forced.text
    assert forced.json()["spec"] == {"x": 3}
    assert fields_v1(forced, "bob") == b'{"f:spec":{".":{},"f:x":{}}}'
    assert fields_v1(forced, "alice") == b'{"f:spec":{}}'  # spec itself stays alice's too
    posted = api.post(blobs, content=obj("Blob", "posted", '"spec":{"x":1}'), headers=JSON)
    assert posted.status_code == 201, posted.text
    assert fields_v1(posted, "python-httpx") == b'{"f:spec":{".":{},"f:x":{}}}'
    for name in ("applied", "posted"):
        assert api.delete(f"{blobs}/{name}").status_code == 200


def test_apply_merges_into_preserved_fields_below_declared_ones(api: httpx.Client) -> None:
    schema = (
        '{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer"},'
        '"config":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}'
    )
    name = install(api, crd("gadgets", "Gadget", schema))
    path = f"/apis/{GROUP}/v1/namespaces/default/gadgets/g"
    first = apply(api, path, "alice", obj("Gadget", "g", '"spec":{"replicas":1,"config":{"a":{"b":1}}}'))
    assert first.status_code == 201, first.text
    assert fields_v1(first, "alice") == b'{"f:spec":{"f:config":{"f:a":{".":{},"f:b":{}}},"f:replicas":{}}}'
    second = apply(api, path, "bob", obj("Gadget", "g", '"spec":{"config":{"a":{"c":2}}}'))
    assert second.status_code == 200, second.text
    assert second.json()["spec"] == {"replicas": 1, "config": {"a": {"b": 1, "c": 2}}}
    assert fields_v1(second, "bob") == b'{"f:spec":{"f:config":{"f:a":{".":{},"f:c":{}}}}}'
    uninstall(api, name)
