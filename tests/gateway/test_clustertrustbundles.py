"""certificates.k8s.io/v1alpha1 ClusterTrustBundles, as kube-apiserver 1.32 serves them: only with
``--runtime-config certificates.k8s.io/v1alpha1/clustertrustbundles=true`` and ``--feature-gates
ClusterTrustBundle=true``; cluster-scoped; upstream's validation (name prefixed by the signer name,
PEM CERTIFICATE blocks of CA certificates, at least one, none repeated, the signer name immutable);
the ClusterTrustBundleAttest admission plugin (``attest`` on the signer to write a bundle naming it);
kubectl's NAME and SIGNERNAME columns.

A server of its own (the flags), with a token user ``attester`` whose grants the tests add; the
admin is the insecure listener (system:masters). Not served by default: the shared server.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.gateway.helpers import GatewayProcess, Kubectl, kubectl_path, self_signed_pem, watch_lines
from tests.gateway.test_authorization import SETTLE, binding, eventually_status, role, user

GROUP_VERSION = "/apis/certificates.k8s.io/v1alpha1"
BUNDLES = f"{GROUP_VERSION}/clustertrustbundles"
FLAGS = (
    "--runtime-config",
    "certificates.k8s.io/v1alpha1/clustertrustbundles=true",
    "--feature-gates",
    "ClusterTrustBundle=true",
)
TOKEN, ATTESTER = "attester-token", "attester"
SIGNER = "example.com/signer"
KEY = ec.generate_private_key(ec.SECP256R1())
_names = itertools.count()


def certificate_pem(common_name: str, ca: bool = True) -> str:
    """A self-signed certificate, a CA unless ``ca`` is false (no basic constraints then)."""
    return self_signed_pem(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]), KEY, ca=ca).decode()


ROOT = certificate_pem("root")


def bundle(name: str, signer: str = "", trust: str = ROOT) -> dict[str, Any]:
    spec = {"signerName": signer, "trustBundle": trust} if signer else {"trustBundle": trust}
    return {
        "apiVersion": "certificates.k8s.io/v1alpha1",
        "kind": "ClusterTrustBundle",
        "metadata": {"name": name},
        "spec": spec,
    }


def fresh(prefix: str = "") -> str:
    return f"{prefix}ctb{next(_names)}"


@pytest.fixture(scope="module")
def ctb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("clustertrustbundles")
    tokens = data / "tokens.csv"
    tokens.write_text(f'{TOKEN},{ATTESTER},u-1,""\n')
    process = GatewayProcess(data, *FLAGS, "--token-auth-file", str(tokens)).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def admin(ctb_server: GatewayProcess) -> Iterator[httpx.Client]:
    with ctb_server.client() as client:  # the insecure port: system:masters
        yield client


@pytest.fixture(scope="module")
def attester(ctb_server: GatewayProcess) -> Iterator[httpx.Client]:
    with ctb_server.secure_client(token=TOKEN) as client:
        yield client


def test_not_served_by_default(client: httpx.Client) -> None:
    """The shared server has the default flags: no v1alpha1 in discovery, 404 on its paths."""
    groups = {g["name"]: g for g in client.get("/apis").json()["groups"]}
    assert [v["version"] for v in groups["certificates.k8s.io"]["versions"]] == ["v1"]
    assert client.get(GROUP_VERSION).status_code == 404
    assert client.get(BUNDLES).status_code == 404


def test_the_runtime_config_alone_does_not_serve_them(tmp_path: Path) -> None:
    """Upstream's storage needs the feature gate as well, and says so when it is off."""
    process = GatewayProcess(tmp_path, "--runtime-config", "certificates.k8s.io/v1alpha1=true").start()
    try:
        with process.client() as client:
            assert client.get(BUNDLES).status_code == 404
        log = "".join(process.log)
        assert "ClusterTrustBundle storage is disabled because the ClusterTrustBundle feature gate is disabled" in log
    finally:
        process.kill()


def test_service_accounts_and_nodes_read_bundles(admin: httpx.Client, client: httpx.Client) -> None:
    """The gate's bootstrap RBAC policy (bootstrappolicy, 1.32): every service account may read
    bundles (system:cluster-trust-bundle-discovery), nodes too, and the serving-bundle publisher's
    controller role; none of it without the gate (the shared server)."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    read = {
        "verbs": ["get", "list", "watch"],
        "apiGroups": ["certificates.k8s.io"],
        "resources": ["clustertrustbundles"],
    }
    discovery = admin.get(f"{rbac}/clusterroles/system:cluster-trust-bundle-discovery").json()
    assert discovery["rules"] == [read]
    bound = admin.get(f"{rbac}/clusterrolebindings/system:cluster-trust-bundle-discovery").json()
    assert bound["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:serviceaccounts"}
    ]
    assert admin.get(f"{rbac}/clusterroles/system:node").json()["rules"][-1] == read
    publisher = "system:controller:kube-apiserver-serving-clustertrustbundle-publisher"
    assert admin.get(f"{rbac}/clusterroles/{publisher}").status_code == 200
    account = {
        "Impersonate-User": "system:serviceaccount:default:reader",
        "Impersonate-Group": "system:serviceaccounts",
    }
    assert admin.get(BUNDLES, headers=account).status_code == 200
    assert admin.get(BUNDLES, headers={"Impersonate-User": "nobody"}).status_code == 403
    for path in ("clusterroles/system:cluster-trust-bundle-discovery", f"clusterroles/{publisher}"):
        assert client.get(f"{rbac}/{path}").status_code == 404
    assert read not in client.get(f"{rbac}/clusterroles/system:node").json()["rules"]


def test_discovery_with_the_flags(admin: httpx.Client) -> None:
    groups = {g["name"]: g for g in admin.get("/apis").json()["groups"]}
    certificates = groups["certificates.k8s.io"]
    assert [v["version"] for v in certificates["versions"]] == ["v1", "v1alpha1"]
    assert certificates["preferredVersion"]["version"] == "v1"
    resources = admin.get(GROUP_VERSION).json()["resources"]
    assert [(r["name"], r["singularName"], r["namespaced"], r["kind"]) for r in resources] == [
        ("clustertrustbundles", "clustertrustbundle", False, "ClusterTrustBundle")
    ]
    assert sorted(resources[0]["verbs"]) == [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]


def test_create_get_list_watch(admin: httpx.Client) -> None:
    listed = admin.get(BUNDLES).json()
    assert listed["kind"] == "ClusterTrustBundleList"
    name = fresh("example.com:signer:")
    events = watch_lines(admin, BUNDLES, stop_after=1, resourceVersion=listed["metadata"]["resourceVersion"])
    created = admin.post(BUNDLES, json=bundle(name, SIGNER))
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["spec"] == {"signerName": SIGNER, "trustBundle": ROOT}
    assert "namespace" not in body["metadata"] and "generation" not in body["metadata"]
    event = next(events)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", name)
    assert admin.get(f"{BUNDLES}/{name}").json()["spec"]["signerName"] == SIGNER
    selected = admin.get(BUNDLES, params={"fieldSelector": f"spec.signerName={SIGNER}"}).json()["items"]
    assert name in [item["metadata"]["name"] for item in selected]
    assert admin.delete(f"{BUNDLES}/{name}").status_code == 200


def invalid(name: str, *causes: str) -> str:
    joined = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
    return f'ClusterTrustBundle.certificates.k8s.io "{name}" is invalid: {joined}'


OMITTED = 'spec.trustBundle: Invalid value: "<value omitted>": '
NOT_CA = certificate_pem("leaf", ca=False)
KEY_PEM = KEY.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
).decode()
WITH_HEADERS = ROOT.replace("-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)


@pytest.mark.parametrize(
    ("name", "signer", "trust", "causes"),
    [
        (
            "wrong",
            SIGNER,
            ROOT,
            [
                'metadata.name: Invalid value: "wrong": ClusterTrustBundle for signerName example.com/signer '
                "must be named with prefix example.com:signer:"
            ],
        ),
        (
            "a:b",
            "",
            ROOT,
            [
                'metadata.name: Invalid value: "a:b": '
                'ClusterTrustBundle without signer name must not have ":" in its name'
            ],
        ),
        (
            "example.com:Bad",
            "example.com",
            ROOT,
            [
                'metadata.name: Invalid value: "example.com:Bad": a lowercase RFC 1123 subdomain must consist of lower '
                "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                'spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form '
                "'example.com/signer-name'",
            ],
        ),
        ("plain", "", "", [OMITTED + "at least one trust anchor must be provided"]),
        ("plain", "", ROOT + " " * 1024 * 1024, ["spec.trustBundle: Too long: may not be more than 1048576 bytes"]),
        ("plain", "", "not PEM at all", [OMITTED + "at least one trust anchor must be provided"]),
        ("plain", "", KEY_PEM, [OMITTED + "entry 0 has bad block type: PRIVATE KEY"]),
        ("plain", "", ROOT + NOT_CA, [OMITTED + "entry 1 does not have the CA bit set"]),
        ("plain", "", WITH_HEADERS, [OMITTED + "entry 0 has PEM block headers"]),
        ("plain", "", ROOT + "text between blocks\n" + ROOT, [OMITTED + "duplicate trust anchor (indices [0 1])"]),
        (
            "plain",
            "",
            "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n",
            [OMITTED + "entry 0 does not parse as X.509"],
        ),
    ],
)
def test_validation(admin: httpx.Client, name: str, signer: str, trust: str, causes: list[str]) -> None:
    answer = admin.post(BUNDLES, json=bundle(name, signer, trust))
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"] == invalid(name, *causes)


def test_a_signer_name_may_be_571_bytes_long(admin: httpx.Client) -> None:
    """ValidateSignerName bounds the whole name (253 + 1 + 317), not its path alone: a 200-byte path
    is fine, a 572-byte name is Too long (with the name's own prefix errors beside it)."""
    path = "a" * 200
    name = f"example.com:{path}:x"
    answer = admin.post(BUNDLES, json=bundle(name, f"example.com/{path}"))
    assert answer.status_code == 201, answer.text
    admin.delete(f"{BUNDLES}/{name}")
    long_path = ".".join(["b" * 250, "c" * 250, "d" * 58])
    signer = f"example.com/{long_path}"
    assert len(signer) == 572
    answer = admin.post(BUNDLES, json=bundle("plain", signer))
    assert answer.status_code == 422, answer.text
    causes = [c["message"] for c in answer.json()["details"]["causes"] if c["field"] == "spec.signerName"]
    assert causes == ["Too long: may not be more than 571 bytes"], answer.text


def test_a_generated_name_needs_the_prefix_too(admin: httpx.Client) -> None:
    body = bundle("", SIGNER)
    body["metadata"] = {"generateName": "bad-"}
    answer = admin.post(BUNDLES, json=body)
    assert answer.status_code == 422, answer.text
    rule = "ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:"
    causes = answer.json()["details"]["causes"]
    assert [(c["field"], c["message"].startswith("Invalid value: ")) for c in causes] == [
        ("metadata.generateName", True),
        ("metadata.name", True),
    ]
    assert all(c["message"].endswith(rule) for c in causes)
    # the rest of the prefix is a DNS-1123 subdomain's prefix: the signer's prefix alone leaves ""
    body["metadata"] = {"generateName": "example.com:signer:"}
    bare = admin.post(BUNDLES, json=body).json()["details"]["causes"]
    assert [c["field"] for c in bare] == ["metadata.generateName"]
    assert "a lowercase RFC 1123 subdomain must consist of" in bare[0]["message"]
    body["metadata"] = {"generateName": "example.com:signer:gen-"}
    made = admin.post(BUNDLES, json=body)
    assert made.status_code == 201, made.text
    assert admin.delete(f"{BUNDLES}/{made.json()['metadata']['name']}").status_code == 200


def test_a_resource_key_is_lowercase(tmp_path: Path) -> None:
    """--runtime-config GROUP/VERSION/RESOURCE names the resource by its lowercase plural (upstream's
    MergeAPIResourceConfigs)."""
    key = "certificates.k8s.io/v1alpha1/ClusterTrustBundles"
    result = subprocess.run(
        [sys.executable, "-m", "protokube", "serve", "--data-dir", str(tmp_path), "--runtime-config", key],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    message = (
        f'invalid key {key}: group/version/resource and resource is always lowercase plural, not "ClusterTrustBundles"'
    )
    assert message in result.stderr


def test_the_signer_name_is_immutable(admin: httpx.Client) -> None:
    name = fresh("example.com:signer:")
    created = admin.post(BUNDLES, json=bundle(name, SIGNER))
    assert created.status_code == 201, created.text
    try:
        changed = created.json()
        changed["spec"]["signerName"] = "example.com/other"
        answer = admin.put(f"{BUNDLES}/{name}", json=changed)
        assert answer.status_code == 422, answer.text
        assert answer.json()["message"] == invalid(
            name,
            f'metadata.name: Invalid value: "{name}": ClusterTrustBundle for signerName example.com/other '
            "must be named with prefix example.com:other:",
            'spec.signerName: Invalid value: "example.com/other": field is immutable',
        )
    finally:
        admin.delete(f"{BUNDLES}/{name}")


def forbidden(name: str, signer: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'clustertrustbundles.certificates.k8s.io "{name}" is forbidden: '
        f'user not permitted to attest for signerName "{signer}"',
        "reason": "Forbidden",
        "details": {"name": name, "group": "certificates.k8s.io", "kind": "clustertrustbundles"},
        "code": 403,
    }


def grant(admin: httpx.Client, name: str, rules: list[dict[str, Any]]) -> None:
    assert admin.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json=role(name, rules)).status_code == 201
    bound = binding(name, "ClusterRole", name, [user(ATTESTER)])
    assert admin.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json=bound).status_code == 201


def eventually_403(attempt: Callable[[], httpx.Response]) -> httpx.Response:
    """The answer once it is 403 (a removed grant reaches the authorizer through a watch)."""
    deadline = time.monotonic() + SETTLE
    while (answer := attempt()).status_code != 403 and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer


def test_attest_is_needed_for_a_signer(admin: httpx.Client, attester: httpx.Client) -> None:
    """RBAC lets the attester write bundles; admission wants ``attest`` on the signer as well, on
    create and on update, by the signer's name or its domain's wildcard; unsigned bundles need none."""
    writer = {"apiGroups": ["certificates.k8s.io"], "resources": ["clustertrustbundles"], "verbs": ["*"]}
    grant(admin, "ctb-writer", [writer])
    unsigned = fresh()
    assert eventually_status(attester, "POST", BUNDLES, 201, json=bundle(unsigned)).status_code == 201
    name = fresh("example.com:signer:")
    denied = attester.post(BUNDLES, json=bundle(name, SIGNER))
    assert denied.status_code == 403
    assert denied.json() == forbidden(name, SIGNER)
    attest = {
        "apiGroups": ["certificates.k8s.io"],
        "resources": ["signers"],
        "resourceNames": ["example.com/*"],
        "verbs": ["attest"],
    }
    grant(admin, "ctb-attester", [attest])
    created = eventually_status(attester, "POST", BUNDLES, 201, json=bundle(name, SIGNER))
    assert created.status_code == 201, created.text
    other = "other.example.org/signer"  # not covered by example.com/*
    elsewhere = fresh("other.example.org:signer:")
    assert attester.post(BUNDLES, json=bundle(elsewhere, other)).json() == forbidden(elsewhere, other)
    # Taking the grant away: an update is checked too, but one of owner references only is not.
    assert admin.delete("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/ctb-attester").status_code == 200
    path = f"{BUNDLES}/{name}"
    second = ROOT + certificate_pem("second")

    def changed() -> dict[str, Any]:  # from the latest: an update the authorizer allowed until the
        latest = admin.get(path).json()  # grant's removal reached it has changed the object
        return {**latest, "spec": {**latest["spec"], "trustBundle": second}}

    assert eventually_403(lambda: attester.put(path, json=changed())).json() == forbidden(name, SIGNER)
    latest = admin.get(path).json()
    finalized = {**latest, "metadata": {**latest["metadata"], "finalizers": ["example.com/keep"]}}
    assert attester.put(path, json=finalized).status_code == 200
    patch = {"metadata": {"finalizers": None}}
    headers = {"Content-Type": "application/merge-patch+json"}
    assert admin.patch(path, json=patch, headers=headers).status_code == 200
    for made in (unsigned, name):
        assert admin.delete(f"{BUNDLES}/{made}").status_code == 200


def test_kubectl_get_columns(ctb_server: GatewayProcess, admin: httpx.Client, tmp_path: Path) -> None:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed")
    signed, unsigned = fresh("example.com:signer:"), fresh()
    for body in (bundle(signed, SIGNER), bundle(unsigned)):
        assert admin.post(BUNDLES, json=body).status_code == 201
    try:
        kubectl = Kubectl(ctb_server.url, tmp_path)
        rows = [line.split() for line in kubectl.run("get", "clustertrustbundles").stdout.splitlines()]
        assert rows[0] == ["NAME", "SIGNERNAME"]
        assert [signed, SIGNER] in rows[1:]
        assert [unsigned, "<none>"] in rows[1:]
    finally:
        for made in (signed, unsigned):
            admin.delete(f"{BUNDLES}/{made}")
