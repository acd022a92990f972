"""CertificateSigningRequests: the requester recorded from the request's user, spec unchangeable,
approval through its own subresource (kubectl certificate approve/deny)."""

from __future__ import annotations

import base64

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .helpers import Kubectl

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def csr(name: str) -> dict:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane")])
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    pem = request.public_bytes(serialization.Encoding.PEM)
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(pem).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
            "username": "someone-else",
            "groups": ["system:masters"],
        },
    }


def test_the_requester_is_who_creates_the_request(client: httpx.Client) -> None:
    made = client.post(CSRS, json=csr("jane-1"))
    assert made.status_code == 201, made.text
    spec = made.json()["spec"]
    # the insecure listener's user, whatever the body said
    assert (spec["username"], spec["groups"]) == ("system:unsecured", ["system:masters", "system:authenticated"])
    changed = made.json()
    changed["spec"]["usages"] = ["server auth"]
    changed["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    put = client.put(f"{CSRS}/jane-1", json=changed)
    assert put.status_code == 200
    assert put.json()["spec"]["usages"] == ["client auth"]  # spec and status stay as stored
    assert "conditions" not in put.json().get("status", {})


def test_kubectl_certificate_approve_writes_only_the_approval(client: httpx.Client, kubectl: Kubectl) -> None:
    assert client.post(CSRS, json=csr("jane-2")).status_code == 201
    kubectl.run("certificate", "approve", "jane-2")
    approved = client.get(f"{CSRS}/jane-2").json()
    (condition,) = approved["status"]["conditions"]
    assert condition["type"] == "Approved" and condition["status"] == "True"
    assert condition["reason"] == "KubectlApprove"
    assert condition["lastUpdateTime"] and condition["lastTransitionTime"]
    table = kubectl.run("get", "csr", "jane-2").stdout
    assert "Approved" in table.splitlines()[1]
    # the approval subresource ignores everything but the conditions
    approved["spec"]["usages"] = ["server auth"]
    approved["metadata"]["labels"] = {"sneaky": "yes"}
    put = client.put(f"{CSRS}/jane-2/approval", json=approved)
    assert put.status_code == 200
    assert put.json()["spec"]["usages"] == ["client auth"] and "labels" not in put.json()["metadata"]
    managers = [(m["manager"], m.get("subresource")) for m in put.json()["metadata"]["managedFields"]]
    assert any(subresource == "approval" for _, subresource in managers), managers
