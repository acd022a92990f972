"""Hostile and malformed requests get a 4xx metav1.Status, never a 500, and a refused write stores
nothing (rules of the robustness issue; upstream's answers where it has one).

Strings become valid text as Go's decoders make them (lone surrogates and invalid UTF-8 → U+FFFD),
numbers are what Go's parsers accept, storage's size limit is a 413 as upstream maps it.
"""

from __future__ import annotations

import base64
import json

import httpx
import pytest

JSON = {"Content-Type": "application/json"}
YAML = {"Content-Type": "application/yaml"}
PROTOBUF = {"Content-Type": "application/vnd.kubernetes.protobuf"}


def envelope(api_version: bytes, kind: bytes, raw: bytes) -> bytes:
    def field(number: int, payload: bytes) -> bytes:
        return bytes([(number << 3) | 2, len(payload)]) + payload

    return b"k8s\x00" + field(1, field(1, api_version) + field(2, kind)) + field(2, raw)


def huge_owner(size: int) -> dict:
    """An owner reference whose name (which validation does not bound, unlike a ConfigMap's 1 MiB of
    data) makes the object larger than storage accepts."""
    return {"apiVersion": "v1", "kind": "Owner", "name": "x" * size, "uid": "u"}


def token(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


# (method, path suffix, kwargs, expected status, message fragment or "")
CASES = [
    ("POST", "", {"content": b'{"metadata":{"name":"a\\ud800"}}', "headers": JSON}, 422, "is invalid"),
    ("POST", "", {"content": b'{"metadata":{"name":"\xff"}}', "headers": JSON}, 422, "is invalid"),
    (
        "POST",
        "",
        {"content": b'{"metadata":{"name":"n"},"data":{"k":NaN}}', "headers": JSON},
        400,
        "invalid character 'N'",
    ),
    (
        "POST",
        "",
        {"content": b"a:\n" + b"".join(b" " * (i + 1) + b"a:\n" for i in range(1000)), "headers": YAML},
        400,
        "exceeded max depth",
    ),
    ("POST", "", {"content": b"metadata:\n  name: \xff\xfe\n", "headers": YAML}, 400, "invalid leading UTF-8 octet"),
    (
        "POST",
        "",
        {"content": envelope(b"v1", b"ConfigMap", b"\x0a\x05\x0a\x03a\xffb"), "headers": PROTOBUF},
        422,
        "is invalid",
    ),
    ("POST", "", {"content": envelope(b"a\xffb", b"Config", b""), "headers": PROTOBUF}, 400, "cannot be handled"),
    (
        "POST",
        "",
        {"json": {"metadata": {"name": "big", "ownerReferences": [huge_owner(2 * 1024 * 1024)]}}},
        413,
        "Request entity too large: etcdserver: request is too large",
    ),
    (
        "POST",
        "",
        {"json": {"metadata": {"name": "big", "ownerReferences": [huge_owner(1600 * 1024)]}}},
        413,
        "etcdserver: request is too large",
    ),
    (
        "GET",
        "",
        {"params": {"resourceVersion": "99999999999999999999", "resourceVersionMatch": "Exact"}},
        400,
        "value out of range",
    ),
    ("GET", "/x", {"params": {"resourceVersion": "99999999999999999999"}}, 400, "value out of range"),
    ("GET", "", {"params": {"resourceVersion": "١٢"}}, 400, "invalid syntax"),  # non-ASCII digits
    ("GET", "", {"params": {"limit": "99999999999999999999"}}, 400, "value out of range"),
    ("DELETE", "/x", {"params": {"gracePeriodSeconds": "99999999999999999999"}}, 400, "value out of range"),
    (
        "GET",
        "",
        {
            "params": {
                "limit": "1",
                "continue": token(b'{"v":"meta.k8s.io/v1","rv":99999999999999999999999,"start":"a"}'),
            }
        },
        400,
        "invalid continue token",
    ),
    (
        "GET",
        "",
        {"params": {"limit": "1", "continue": token(b'{"v":"meta.k8s.io/v1","rv":5,"start":"\\ud800"}')}},
        400,
        "invalid continue token",
    ),
    ("TRACE", "", {}, 405, "not supported"),
    ("FOO", "", {}, 405, "not supported"),
]


@pytest.mark.parametrize(("method", "suffix", "kwargs", "code", "fragment"), CASES)
def test_refused_with_a_status(
    client: httpx.Client, namespace: str, method: str, suffix: str, kwargs: dict, code: int, fragment: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    before = client.get(path).json()["items"]
    response = client.request(method, path + suffix, **kwargs)
    assert response.status_code == code, response.text
    status = response.json()
    assert status["kind"] == "Status" and status["code"] == code and fragment in status["message"]
    assert client.get(path).json()["items"] == before  # nothing stored


def test_invalid_text_is_stored_as_replacement_characters(client: httpx.Client, namespace: str) -> None:
    """A lone surrogate in a value, or as an unknown field's name, is U+FFFD, as Go decodes it;
    the unknown field's Warning header carries the replacement too."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = client.post(path, content=b'{"metadata":{"name":"s"},"data":{"k":"a\\ud800b"},"\\udc00":1}', headers=JSON)
    assert created.status_code == 201
    assert created.json()["data"] == {"k": "a\ufffdb"}
    assert created.headers["Warning"] == '299 - "unknown field \\"\ufffd\\""'  # sent as UTF-8
    assert client.get(f"{path}/s").json()["data"] == {"k": "a\ufffdb"}
    # invalid UTF-8 in a protobuf value: kept as U+FFFD too
    raw = b"\x0a\x03\x0a\x01p" + b"\x12\x07\x0a\x01k\x12\x02\xff\xfe"
    created = client.post(path, content=envelope(b"v1", b"ConfigMap", raw), headers=PROTOBUF)
    assert created.status_code == 201 and created.json()["data"] == {"k": "\ufffd\ufffd"}


def test_json_strings_are_decoded_as_go_decodes_them(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = json.dumps({"metadata": {"name": "pair"}, "data": {"emoji": "\U0001f600"}}).encode()
    assert b"\\ud83d\\ude00" in body  # a valid surrogate pair stays one character
    assert client.post(path, content=body, headers=JSON).json()["data"] == {"emoji": "\U0001f600"}


def test_bytes_decode_as_gos_base64_decoder(client: httpx.Client, namespace: str) -> None:
    """Line breaks inside base64 (`base64` wraps at 76 columns) are skipped, as Go's decoder skips
    them; any other stray character is refused naming its offset."""
    path = f"/api/v1/namespaces/{namespace}/secrets"
    wrapped = {"metadata": {"name": "wrapped"}, "data": {"a": "aGVsbG8g\nd29y\r\nbGQ="}}
    response = client.post(path, json=wrapped)
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"a": "aGVsbG8gd29ybGQ="}
    broken = {"metadata": {"name": "broken"}, "data": {"a": "aGV*bG8="}}
    response = client.post(path, json=broken)
    assert response.status_code == 400
    assert "json: illegal base64 data at input byte 3" in response.json()["message"]
