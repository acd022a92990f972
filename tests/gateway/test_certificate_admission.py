"""The admission plugins of CertificateSigningRequests: CertificateSubjectRestriction (no
system:masters from the kube-apiserver-client signer), CertificateApproval (``approve`` on the
signer to write ``/approval``) and CertificateSigning (``sign`` on the signer to change the
certificate or the conditions through ``/status``).

The admin (the insecure listener, in system:masters) makes the requests and the roles; the users
under test are impersonated. Each test deletes what it made: CSRs and cluster roles are
cluster-scoped, and the server is shared with other modules.
"""

from __future__ import annotations

import base64
import itertools
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .helpers import self_signed_pem

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
SETTLE = 5.0  # seconds a grant may take to reach the authorizer
KEY = ec.generate_private_key(ec.SECP256R1())
Make = Callable[[str, dict[str, Any]], dict[str, Any]]  # create through the admin, delete after the test
_roles = itertools.count()


def subject(common_name: str, organizations: tuple[str, ...]) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name(attributes)


def csr(name: str, organizations: tuple[str, ...] = (), signer: str = CLIENT_SIGNER) -> dict[str, Any]:
    request = (
        x509.CertificateSigningRequestBuilder().subject_name(subject(name, organizations)).sign(KEY, hashes.SHA256())
    )
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
            "signerName": signer,
            "usages": ["client auth"],
        },
    }


def certificate(common_name: str) -> str:
    """A self-signed certificate, base64 of its PEM as status.certificate carries it."""
    return base64.b64encode(self_signed_pem(subject(common_name, ()), KEY)).decode()


def forbidden(name: str, reason: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'certificatesigningrequests.certificates.k8s.io "{name}" is forbidden: {reason}',
        "reason": "Forbidden",
        "details": {"name": name, "group": "certificates.k8s.io", "kind": "certificatesigningrequests"},
        "code": 403,
    }


def as_user(name: str) -> dict[str, str]:
    return {"Impersonate-User": name}


@pytest.fixture
def make(client: httpx.Client) -> Iterator[Make]:
    """Create an object through the admin; deleted again when the test is done."""
    made: list[str] = []

    def create(collection: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = client.post(collection, json=body)
        assert answer.status_code == 201, answer.text
        made.append(f"{collection}/{body['metadata']['name']}")
        return answer.json()

    yield create
    for path in reversed(made):
        client.delete(path)


def grant(make: Make, user: str, rules: list[dict[str, Any]]) -> None:
    """A ClusterRole with ``rules`` bound to ``user``."""
    name = f"{user}-{next(_roles)}"
    make(f"{RBAC}/clusterroles", {"metadata": {"name": name}, "rules": rules})
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
    subjects = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
    make(f"{RBAC}/clusterrolebindings", {"metadata": {"name": name}, "roleRef": ref, "subjects": subjects})


def writer_of(subresource: str) -> list[dict[str, Any]]:
    """What lets a user read requests and write one of their subresources (RBAC, before admission)."""
    return [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get"]},
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": [f"certificatesigningrequests/{subresource}"],
            "verbs": ["update"],
        },
    ]


def on_signers(verb: str, *names: str) -> list[dict[str, Any]]:
    return [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "resourceNames": list(names), "verbs": [verb]}
    ]


def put_until(
    client: httpx.Client, path: str, body: dict[str, Any], user: str, settled: Callable[[httpx.Response], bool]
) -> httpx.Response:
    """PUT as ``user`` until ``settled`` holds for the answer: grants reach the authorizer through
    its informers, a moment after they are written."""
    deadline = time.monotonic() + SETTLE
    while not settled(answer := client.put(path, json=body, headers=as_user(user))):
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    return answer


def not_rbac_forbidden(answer: httpx.Response) -> bool:
    """The authorization filter let the request through (its refusals say 'User "x" cannot ...')."""
    return answer.status_code != 403 or " cannot " not in answer.json()["message"]


def approval(csr_object: dict[str, Any], condition: str = "Approved") -> dict[str, Any]:
    status = {"conditions": [{"type": condition, "status": "True", "reason": "Test", "message": "test"}]}
    return {**csr_object, "status": status}


def test_the_kube_apiserver_client_signer_never_issues_system_masters(client: httpx.Client, make: Make) -> None:
    refused = client.post(CSRS, json=csr("adm-masters", ("system:masters", "devs")))
    assert refused.status_code == 403, refused.text
    reason = "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    assert refused.json() == forbidden("adm-masters", reason)
    assert client.get(f"{CSRS}/adm-masters").status_code == 404

    make(CSRS, csr("adm-devs", ("devs",)))  # any other organization
    make(CSRS, csr("adm-other-signer", ("system:masters",), signer="example.com/signer"))  # any other signer


def test_approval_needs_approve_on_the_signer(client: httpx.Client, make: Make) -> None:
    user = "adm-approver"
    made = make(CSRS, csr("adm-approve-me"))
    path = f"{CSRS}/adm-approve-me/approval"
    grant(make, user, writer_of("approval"))

    refused = put_until(client, path, approval(made), user, not_rbac_forbidden)
    reason = f'user not permitted to approve requests with signerName "{CLIENT_SIGNER}"'
    assert (refused.status_code, refused.json()) == (403, forbidden("adm-approve-me", reason))
    denied = put_until(client, path, approval(made, "Denied"), user, not_rbac_forbidden)
    assert denied.status_code == 403, denied.text
    assert client.get(f"{CSRS}/adm-approve-me").json() == made  # unchanged

    grant(make, user, on_signers("approve", "example.com/signer", CLIENT_SIGNER))
    approved = put_until(client, path, approval(made), user, lambda a: a.status_code != 403)
    assert approved.status_code == 200, approved.text
    (condition,) = client.get(f"{CSRS}/adm-approve-me").json()["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("Approved", "True")


def test_approve_on_the_signers_domain_wildcard(client: httpx.Client, make: Make) -> None:
    user = "adm-domain-approver"
    made = make(CSRS, csr("adm-approve-by-domain"))
    path = f"{CSRS}/adm-approve-by-domain/approval"
    grant(make, user, writer_of("approval"))
    grant(make, user, on_signers("approve", "kubernetes.io"))  # a domain alone is no wildcard
    refused = put_until(client, path, approval(made), user, not_rbac_forbidden)
    assert refused.status_code == 403, refused.text

    grant(make, user, on_signers("approve", "kubernetes.io/*"))
    approved = put_until(client, path, approval(made), user, lambda a: a.status_code != 403)
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"]["conditions"][0]["type"] == "Approved"


def test_signing_needs_sign_on_the_signer(client: httpx.Client, make: Make) -> None:
    user = "adm-signer"
    make(CSRS, csr("adm-sign-me"))
    approved = client.put(f"{CSRS}/adm-sign-me/approval", json=approval(client.get(f"{CSRS}/adm-sign-me").json()))
    assert approved.status_code == 200, approved.text
    stored = approved.json()
    path = f"{CSRS}/adm-sign-me/status"
    grant(make, user, writer_of("status"))

    # a status write that changes neither the certificate nor the conditions needs no signer
    same = put_until(client, path, stored, user, not_rbac_forbidden)
    assert same.status_code == 200, same.text
    stored = same.json()

    issued = {**stored, "status": {**stored["status"], "certificate": certificate("adm-sign-me")}}
    refused = client.put(path, json=issued, headers=as_user(user))
    reason = f'user not permitted to sign requests with signerName "{CLIENT_SIGNER}"'
    assert (refused.status_code, refused.json()) == (403, forbidden("adm-sign-me", reason))
    failed = {"type": "Failed", "status": "True", "reason": "Test", "message": "test"}
    with_failure = {**stored, "status": {"conditions": [*stored["status"]["conditions"], failed]}}
    refused = client.put(path, json=with_failure, headers=as_user(user))
    assert (refused.status_code, refused.json()) == (403, forbidden("adm-sign-me", reason))
    assert client.get(f"{CSRS}/adm-sign-me").json() == stored  # unchanged

    grant(make, user, on_signers("sign", CLIENT_SIGNER))
    signed = put_until(client, path, issued, user, lambda a: a.status_code != 403)
    assert signed.status_code == 200, signed.text
    assert client.get(f"{CSRS}/adm-sign-me").json()["status"]["certificate"] == issued["status"]["certificate"]
