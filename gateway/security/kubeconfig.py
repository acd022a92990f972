"""Kubeconfig files kubectl can use as is: the server, the CA to trust, the client credential."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from protokube.gateway.security.certs import write_private


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(
    server: str,
    *,
    ca_pem: bytes | None = None,
    cert_pem: bytes | None = None,
    key_pem: bytes | None = None,
    token: str | None = None,
    user: str = "protokube-admin",
    name: str = "protokube",
) -> str:
    cluster: dict[str, str] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    credential: dict[str, str] = {}
    if cert_pem is not None and key_pem is not None:
        credential = {"client-certificate-data": _b64(cert_pem), "client-key-data": _b64(key_pem)}
    if token is not None:
        credential["token"] = token
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user}}],
        "users": [{"name": user, "user": credential}],
        "current-context": name,
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: Path, text: str) -> Path:
    """Kubeconfigs hold keys: owner-only."""
    write_private(path, text.encode())
    return path
