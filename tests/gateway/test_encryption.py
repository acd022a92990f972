"""Encryption at rest (--encryption-provider-config): what etcdctl reads from storage is upstream's
encrypted format, the API reads plaintext, keys rotate, data written before stays readable."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import nacl.secret
import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .helpers import ROOT, GatewayProcess

ETCDCTL = shutil.which("etcdctl")
pytestmark = pytest.mark.skipif(ETCDCTL is None, reason="etcdctl not installed (Debian package etcd-client)")

KEY1, KEY2 = os.urandom(32), os.urandom(32)
GCM_KEY, BOX_KEY = os.urandom(16), os.urandom(32)
SECRET_TEXT = "hunter2-plaintext"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def config(tmp: Path, secrets_keys: list[tuple[str, bytes]], name: str = "encryption.yaml") -> Path:
    document = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [
            {
                "resources": ["secrets"],
                "providers": [
                    {"aescbc": {"keys": [{"name": n, "secret": b64(k)} for n, k in secrets_keys]}},
                    {"identity": {}},
                ],
            },
            {"resources": ["configmaps"], "providers": [{"aesgcm": {"keys": [{"name": "g", "secret": b64(GCM_KEY)}]}}]},
            {"resources": ["*.apps"], "providers": [{"secretbox": {"keys": [{"name": "b", "secret": b64(BOX_KEY)}]}}]},
        ],
    }
    path = tmp / name
    path.write_text(json.dumps(document))  # JSON is YAML
    return path


def raw(server: GatewayProcess, key: str) -> bytes:
    """The stored value, as etcdctl reads it from the embedded storage's socket."""
    out = subprocess.run(
        [ETCDCTL, "--endpoints", server.storage, "get", key, "--print-value-only"],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    return out.removesuffix(b"\n")


def cbc_decrypt(stored: bytes, prefix: bytes, key: bytes) -> bytes:
    """Upstream's aescbc layout, decrypted independently: prefix, 16-byte IV, PKCS#7-padded CBC."""
    assert stored.startswith(prefix)
    body = stored[len(prefix) :]
    decryptor = Cipher(algorithms.AES(key), modes.CBC(body[:16])).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(decryptor.update(body[16:]) + decryptor.finalize()) + unpadder.finalize()


def secret(client: httpx.Client, name: str, text: str = SECRET_TEXT) -> None:
    body = {"metadata": {"name": name}, "stringData": {"password": text}}
    assert client.post("/api/v1/namespaces/default/secrets", json=body).status_code == 201


def password(client: httpx.Client, name: str) -> str:
    return base64.b64decode(
        client.get(f"/api/v1/namespaces/default/secrets/{name}").json()["data"]["password"]
    ).decode()


def test_stored_values_are_encrypted_in_upstreams_format(tmp_path: Path) -> None:
    server = GatewayProcess(tmp_path / "data", "--encryption-provider-config", str(config(tmp_path, [("k1", KEY1)])))
    server.start()
    try:
        with server.client() as client:
            secret(client, "s1")
            stored = raw(server, "/registry/secrets/default/s1")
            assert stored.startswith(b"k8s:enc:aescbc:v1:k1:") and SECRET_TEXT.encode() not in stored
            plain = cbc_decrypt(stored, b"k8s:enc:aescbc:v1:k1:", KEY1)
            assert plain.startswith(b"k8s\x00") and SECRET_TEXT.encode() in plain  # the protobuf envelope
            assert password(client, "s1") == SECRET_TEXT

            cm = {"metadata": {"name": "c1"}, "data": {"color": "ultraviolet"}}
            assert client.post("/api/v1/namespaces/default/configmaps", json=cm).status_code == 201
            key = "/registry/configmaps/default/c1"
            stored = raw(server, key)
            assert stored.startswith(b"k8s:enc:aesgcm:v1:g:") and b"ultraviolet" not in stored
            body = stored[len(b"k8s:enc:aesgcm:v1:g:") :]
            assert b"ultraviolet" in AESGCM(GCM_KEY).decrypt(body[:12], body[12:], key.encode())  # the key is AAD

            deploy = {
                "metadata": {"name": "d1"},
                "spec": {
                    "selector": {"matchLabels": {"app": "d1"}},
                    "template": {
                        "metadata": {"labels": {"app": "d1"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            }
            assert client.post("/apis/apps/v1/namespaces/default/deployments", json=deploy).status_code == 201
            stored = raw(server, "/registry/deployments/default/d1")
            assert stored.startswith(b"k8s:enc:secretbox:v1:b:") and b"nginx" not in stored
            assert b"nginx" in nacl.secret.SecretBox(BOX_KEY).decrypt(stored[len(b"k8s:enc:secretbox:v1:b:") :])
            read = client.get("/apis/apps/v1/namespaces/default/deployments/d1").json()
            assert read["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"

            # Other resources are stored as they are; lists and watches see plaintext too.
            assert raw(server, "/registry/namespaces/default").startswith(b"k8s\x00")
            items = client.get("/api/v1/namespaces/default/secrets").json()["items"]
            assert [i["metadata"]["name"] for i in items] == ["s1"]
            rv = items and client.get("/api/v1/namespaces/default/secrets").json()["metadata"]["resourceVersion"]
            patch = {"stringData": {"password": "rotated"}}
            headers = {"Content-Type": "application/merge-patch+json"}
            assert client.patch("/api/v1/namespaces/default/secrets/s1", json=patch, headers=headers).status_code == 200
            with client.stream(
                "GET", "/api/v1/namespaces/default/secrets", params={"watch": "1", "resourceVersion": rv}
            ) as stream:
                event = json.loads(next(stream.iter_lines()))
            assert base64.b64decode(event["object"]["data"]["password"]) == b"rotated"
    finally:
        server.kill()


def test_existing_data_stays_readable_and_keys_rotate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    plain_server = GatewayProcess(data).start()
    try:
        with plain_server.client() as client:
            secret(client, "before")
        assert raw(plain_server, "/registry/secrets/default/before").startswith(b"k8s\x00")
    finally:
        plain_server.kill()

    first = GatewayProcess(data, "--encryption-provider-config", str(config(tmp_path, [("k1", KEY1)]))).start()
    try:
        with first.client() as client:
            assert password(client, "before") == SECRET_TEXT  # read through the identity provider
            secret(client, "with-k1")
    finally:
        first.kill()

    rotated = config(tmp_path, [("k2", KEY2), ("k1", KEY1)], "rotated.yaml")  # a new key listed first
    second = GatewayProcess(data, "--encryption-provider-config", str(rotated)).start()
    try:
        with second.client() as client:
            assert password(client, "with-k1") == SECRET_TEXT
            assert password(client, "before") == SECRET_TEXT
            secret(client, "with-k2")
            assert raw(second, "/registry/secrets/default/with-k2").startswith(b"k8s:enc:aescbc:v1:k2:")
            # Rewriting an object read with an old key stores it with the new key even when nothing
            # changed (upstream's stale reads): `kubectl get secrets -o json | kubectl replace -f -`.
            current = client.get("/api/v1/namespaces/default/secrets/with-k1").json()
            replaced = client.put("/api/v1/namespaces/default/secrets/with-k1", json=current).json()
            assert replaced["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]
            assert raw(second, "/registry/secrets/default/with-k1").startswith(b"k8s:enc:aescbc:v1:k2:")
            again = client.put("/api/v1/namespaces/default/secrets/with-k1", json=replaced).json()
            assert again["metadata"]["resourceVersion"] == replaced["metadata"]["resourceVersion"]  # now a no-op
    finally:
        second.kill()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"kind": "EncryptionConfiguration", "apiVersion": "v1"}, "got unexpected config type"),
        (
            {
                "kind": "EncryptionConfiguration",
                "apiVersion": "apiserver.config.k8s.io/v1",
                "resources": [
                    {
                        "resources": ["secrets"],
                        "providers": [{"aescbc": {"keys": [{"name": "k", "secret": b64(b"short")}]}}],
                    }
                ],
            },
            'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": '
            "secret is not of the expected length, got 5, expected one of [16 24 32]",
        ),
        (
            {
                "kind": "EncryptionConfiguration",
                "apiVersion": "apiserver.config.k8s.io/v1",
                "resources": [{"resources": ["secrets"], "providers": [{"identity": {}, "aesgcm": {"keys": []}}]}],
            },
            "more than one provider specified in a single element",
        ),
        (
            {
                "kind": "EncryptionConfiguration",
                "apiVersion": "apiserver.config.k8s.io/v1",
                "resources": [{"resources": ["events.events.k8s.io"], "providers": [{"identity": {}}]}],
            },
            "Use 'events' instead in the config file",
        ),
    ],
)
def test_bad_configurations_are_refused_at_start(tmp_path: Path, document: dict, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(document))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "protokube",
            "serve",
            "--data-dir",
            str(tmp_path / "d"),
            "--encryption-provider-config",
            str(path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr
