"""controller-runtime as a real client: the Widget controller of tests/clients/controller
(sigs.k8s.io/controller-runtime v0.25.2 on client-go v0.37.2), tested with envtest the way Go operator
developers test theirs, pointed at a started gateway (envtest's UseExistingCluster, with the admin
kubeconfig in $KUBECONFIG). envtest installs the CRD and the webhook configurations (its serving
certificate as their caBundle, URLs on 127.0.0.1); a manager elected on a Lease reconciles Widgets
into child ConfigMaps with owner references through its cache (a field index, a label selector),
adds a finalizer, writes the status subresource and records events.k8s.io Events; a standby manager
serves the defaulting and validating webhooks and takes over when the primary releases the Lease;
the garbage collector deletes (or orphans) the children; envtest uninstalls the CRD. Once with
controller-runtime's default content types (protobuf for built-in kinds, JSON for Widgets), once
with JSON throughout.

What it found in the server (gateway/webhooks/client.py): a caBundle holding the serving
certificate itself was refused (Go's crypto/x509 takes every root as a trust anchor), and the 307
that Go's ServeMux answers envtest's double-slash webhook URLs with was not followed (Go's
http.Client repeats the POST).

The test binary (`go test -c`) is built once per content of the folder (.cache/controller/), with
the Go test_client_go finds.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from .helpers import ROOT, GatewayProcess, eventually
from .test_client_go import CACHE, find_go
from .webhookserver import WebhookServer

pytestmark = pytest.mark.timeout(1800)  # the first build of controller-runtime on a slow machine

PROGRAM = ROOT / "tests" / "clients" / "controller"
BUILD_TIMEOUT = 1500
RUN_TIMEOUT = 300
STEPS = [
    "envtest",
    "manager",
    "standby",
    "create",
    "status",
    "webhooks",
    "cache",
    "update",
    "rename",
    "drift",
    "events",
    "delete",
    "orphan",
    "failover",
    "release",
    "uninstall",
]


@pytest.fixture(scope="module")
def controller_test() -> str:
    """The test binary, built once per content of the folder's sources."""
    go = find_go()
    if go is None:
        pytest.skip("no Go toolchain 1.21+ found, and go.mod's toolchain could not be fetched from the module proxy")
    sources = sorted(path for path in PROGRAM.rglob("*") if path.is_file())
    digest = hashlib.sha256(
        b"".join(str(path.relative_to(PROGRAM)).encode() + path.read_bytes() for path in sources)
    ).hexdigest()[:16]
    out = CACHE / "controller"
    out.mkdir(parents=True, exist_ok=True)
    binary = out / f"controller-{digest}.test"
    with open(out / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it
        if not binary.exists():
            env = {**os.environ, "GOTOOLCHAIN": "auto", "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"}
            env["PATH"] = f"{Path(go).parent}:{env.get('PATH', '')}"
            partial = out / f"controller-{digest}.partial"
            build = subprocess.run(
                [go, "test", "-c", "-o", str(partial), "."],
                cwd=PROGRAM,
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
            assert build.returncode == 0, f"go test -c failed:\n{build.stdout}\n{build.stderr}"
            partial.rename(binary)
            for old in out.glob("controller-*"):  # builds of earlier sources
                if old != binary:
                    old.unlink(missing_ok=True)
    return str(binary)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    began = time.monotonic()
    process = GatewayProcess(tmp_path_factory.mktemp("controller")).start()
    print(f"protokube start (to /readyz 200): {time.monotonic() - began:.3f}s")
    yield process
    process.kill()


@pytest.mark.parametrize("content_type", ["default", "json"])
def test_widget_controller(controller_test: str, gateway: GatewayProcess, content_type: str) -> None:
    args = [controller_test, "-test.v", "-test.count=1", "-test.timeout=4m"]
    if content_type == "json":
        args.append("-content-type=json")
    result = subprocess.run(
        args,
        cwd=PROGRAM,  # envtest reads the CRD from crd/
        env={**os.environ, "KUBECONFIG": str(gateway.kubeconfig)},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(args)} exited {result.returncode}:\n{output}"
    for step in STEPS:
        assert f"--- PASS: TestWidgetController/{step} " in result.stdout, output
    assert "--- FAIL" not in result.stdout, output
    setup = re.search(r"envtest setup took (\S+)", result.stdout)
    assert setup, output
    print(f"envtest setup ({content_type}): {setup.group(1)}")


# The server bugs the envtest runs found, as plain requests.


def test_webhook_ca_bundle_of_its_certificate_and_a_redirect(gateway: GatewayProcess) -> None:
    """envtest registers a webhook with the serving certificate itself as caBundle, at a URL with a
    double slash (https://127.0.0.1:PORT//validate-...), which Go's ServeMux answers with a 307 to
    the clean path. kube-apiserver's webhook client (Go's crypto/x509 and http.Client) trusts every
    certificate of the bundle and repeats the POST at the Location; this server answered 'x509:
    certificate signed by unknown authority', then 'the server responded with the status code 307'."""
    server = WebhookServer().start()
    try:
        certificate = ssl.get_server_certificate(("127.0.0.1", server.port))  # the leaf, not its CA

        def redirect(_: dict[str, object]) -> dict[str, object]:
            raise web.HTTPTemporaryRedirect("/validate")

        server.handlers["//validate"] = redirect
        server.handlers["/validate"] = lambda _: {"allowed": False, "status": {"code": 403, "message": "redirected"}}
        with gateway.client() as client:
            labels = {"pin": "webhook-redirect"}
            namespace = {"metadata": {"name": "pin-redirect", "labels": labels}}
            assert client.post("/api/v1/namespaces", json=namespace).status_code == 201
            hook = {
                "name": "redirect.pin.protokube.dev",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {
                    "url": f"https://127.0.0.1:{server.port}//validate",
                    "caBundle": base64.b64encode(certificate.encode()).decode(),
                },
                "namespaceSelector": {"matchLabels": labels},
                "rules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
                ],
            }
            configurations = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
            made = client.post(configurations, json={"metadata": {"name": "pin-redirect"}, "webhooks": [hook]})
            assert made.status_code == 201, made.text
            try:
                answers: list[httpx.Response] = []

                def denied() -> bool:  # once the server has seen the configuration
                    cm = {"metadata": {"generateName": "c-"}}
                    answers.append(client.post("/api/v1/namespaces/pin-redirect/configmaps", json=cm))
                    return answers[-1].status_code == 403

                assert eventually(denied), answers[-1].text
                message = 'admission webhook "redirect.pin.protokube.dev" denied the request: redirected'
                assert answers[-1].json()["message"] == message, answers[-1].text
                assert len(server.reviews["//validate"]) == len(server.reviews["/validate"]) >= 1
            finally:
                client.delete(f"{configurations}/pin-redirect")
    finally:
        server.stop()


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/pin.protokube.dev/v1/namespaces/default/gadgets"


def test_crd_made_again_under_its_name(gateway: GatewayProcess) -> None:
    """envtest uninstalls its CRDs after a suite (CleanUpAfterUse) and the next suite installs them
    again under their names. The CRD controller acted on its informer's view by name: a view of the
    CRD just deleted, older than storage, removed the finalizer of the CRD made since (whose objects
    then outlived it: the next CRD's create of one was 409 AlreadyExists) and kept it from being
    Established for seconds (the second envtest setup took 6 s instead of 0.3 s)."""
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.pin.protokube.dev"},
        "spec": {
            "group": "pin.protokube.dev",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }
    path = f"{CRDS}/gadgets.pin.protokube.dev"

    def established(client: httpx.Client) -> bool:
        conditions = (client.get(path).json().get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    with gateway.client() as client:
        for _ in range(4):
            assert client.post(CRDS, json=crd).status_code == 201
            began = time.monotonic()
            assert eventually(lambda: established(client)), client.get(path).json()
            assert time.monotonic() - began < 2.5, f"Established after {time.monotonic() - began:.1f}s"
            gadget = {"apiVersion": "pin.protokube.dev/v1", "kind": "Gadget", "metadata": {"name": "x"}}
            assert eventually(lambda: client.get(GADGETS).status_code == 200)
            created = client.post(GADGETS, json=gadget)
            assert created.status_code == 201, created.text  # no object of an earlier CRD of the name
            assert client.delete(path).status_code == 200
            assert eventually(lambda: client.get(path).status_code == 404)
