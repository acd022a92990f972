"""kopf's own admission webhook server end to end (issue 32's opening scenario): a kopf operator
(kopf_operator.py, run by `kopf run --standalone`) makes its ValidatingWebhookConfiguration and
MutatingWebhookConfiguration itself, with a `url` client config and its caBundle; a Widget of size
1000 is refused with upstream's 422 and message, a smaller one is created with the mutating
webhook's patch applied — over HTTP and through `kubectl create -f`.

The module runs its own server: kopf's configurations take widgets for the module's whole run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from .helpers import GatewayProcess, eventually, free_port, kubectl_path
from .webhookserver import _certificate, _pem

pytest.importorskip("kopf")  # a dev extra: the operator runs on it

OPERATOR = Path(__file__).with_name("kopf_operator.py")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
NS = "kopf-widgets"
WIDGETS = f"/apis/example.com/v1/namespaces/{NS}/widgets"
DENIAL = 'admission webhook "size-limit.auto.kopf.dev" denied the request: size must be at most 100'

WIDGETS_CRD = {
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
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


def write_certificates(directory: Path) -> None:
    """A CA (ca.crt, the caBundle kopf publishes) and a serving certificate for 127.0.0.1 signed by it."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("kopf-test-ca", ca_key, None)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate("kopf-webhooks", key, (ca.subject, ca_key))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.crt").write_bytes(_pem(ca))
    (directory / "tls.crt").write_bytes(_pem(cert))
    pkcs8 = serialization.PrivateFormat.PKCS8
    (directory / "tls.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption())
    )


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("kopf")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def api(gateway: GatewayProcess) -> Iterator[httpx.Client]:
    with gateway.client() as client:
        yield client


def widget(name: str, size: int) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}}


@pytest.fixture(scope="module")
def operator(gateway: GatewayProcess, api: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The Widget CRD, a namespace, and kopf running the operator until its webhooks answer; kopf's
    log file."""
    created = api.post(CRDS, json=WIDGETS_CRD)
    assert created.status_code == 201, created.text
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": NS}}).status_code == 201
    assert eventually(lambda: api.get(WIDGETS).status_code == 200), "the Widget CRD was not served"
    home = tmp_path_factory.mktemp("kopf-operator")
    write_certificates(home / "certs")
    log_path = home / "kopf.log"
    env = {
        **os.environ,
        "KUBECONFIG": str(gateway.kubeconfig),
        "KOPF_WEBHOOK_PORT": str(free_port()),
        "KOPF_WEBHOOK_CERTS": str(home / "certs"),
    }
    command = [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces", "--verbose", str(OPERATOR)]
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:

        def configured() -> bool:
            names = set()
            for collection in (VALIDATING, MUTATING):
                made = api.get(f"{collection}/auto.kopf.dev")
                if made.status_code == 200:
                    # kopf makes each configuration empty (no "webhooks": omitempty), then patches it
                    names |= {hook["name"] for hook in made.json().get("webhooks", [])}
            return names == {"size-limit.auto.kopf.dev", "default-color.auto.kopf.dev"}

        assert eventually(configured, timeout=60), "kopf made no webhook configurations:\n" + log_path.read_text()
        # a request answered by kopf's server: a refused widget (the configurations act once cached)
        probe = eventually(lambda: api.post(WIDGETS, json=widget("probe", 1000)).status_code == 422, timeout=30)
        assert probe, "kopf's webhook never refused a widget:\n" + log_path.read_text()
        yield log_path
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_kopf_makes_its_configurations(api: httpx.Client, operator: Path) -> None:
    validating = api.get(f"{VALIDATING}/auto.kopf.dev").json()
    mutating = api.get(f"{MUTATING}/auto.kopf.dev").json()
    (size_limit,) = validating["webhooks"]
    (default_color,) = mutating["webhooks"]
    assert size_limit["name"] == "size-limit.auto.kopf.dev"
    assert default_color["name"] == "default-color.auto.kopf.dev"
    for hook, path in ((size_limit, "/size-limit"), (default_color, "/default-color")):
        assert hook["clientConfig"]["url"].startswith("https://127.0.0.1:")
        assert hook["clientConfig"]["url"].endswith(path)
        assert hook["clientConfig"]["caBundle"]  # kopf's own (the CA the operator was given)
        assert hook["rules"] == [
            {
                "apiGroups": ["example.com"],
                "apiVersions": ["v1"],
                "resources": ["widgets"],
                "operations": ["*"],
                "scope": "*",
            }
        ]
        assert hook["admissionReviewVersions"] == ["v1", "v1beta1"]
        assert hook["sideEffects"] == "None" and hook["failurePolicy"] == "Fail"
        assert hook["matchPolicy"] == "Equivalent" and hook["timeoutSeconds"] == 30
        # kopf merge-patches "objectSelector": null; upstream's defaulting makes both selectors empty
        assert hook["objectSelector"] == {} and hook["namespaceSelector"] == {}


def test_a_large_widget_is_refused_as_upstream_refuses_it(api: httpx.Client, operator: Path) -> None:
    refused = api.post(WIDGETS, json=widget("big", 1000))
    assert refused.status_code == 422, refused.text
    # upstream's webhook dispatcher (ToStatusErr): the webhook's status with its code, "Failure",
    # and the message prefixed with the webhook's name; no reason
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": DENIAL,
        "code": 422,
    }
    assert api.get(f"{WIDGETS}/big").status_code == 404


def test_a_small_widget_gets_the_mutating_webhooks_color(api: httpx.Client, operator: Path) -> None:
    made = api.post(WIDGETS, json=widget("small", 5))
    assert made.status_code == 201, made.text
    assert made.json()["spec"] == {"size": 5, "color": "blue"}
    assert api.get(f"{WIDGETS}/small").json()["spec"] == {"size": 5, "color": "blue"}
    # the mutating webhook was shown the object in the request's namespace, as upstream's createHandler
    # sets it before admission (EnsureObjectNamespaceMatchesRequestNamespace), though the body names none
    assert made.json()["metadata"]["annotations"] == {"example.com/mutated-in": NS}
    # a color of its own is kept
    painted = widget("painted", 7)
    painted["spec"]["color"] = "red"
    kept = api.post(WIDGETS, json=painted)
    assert kept.status_code == 201, kept.text
    assert kept.json()["spec"] == {"size": 7, "color": "red"}
    # the validating webhook sees the patched object: an update over the limit is refused too
    grown = api.patch(
        f"{WIDGETS}/small",
        content=json.dumps({"spec": {"size": 500}}),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert grown.status_code == 422 and grown.json()["message"] == DENIAL
    # a delete passes both webhooks (kopf's are called for every operation; its mutation is a no-op)
    assert api.delete(f"{WIDGETS}/painted").status_code == 200
    assert api.get(f"{WIDGETS}/painted").status_code == 404


def test_kubectl_create_shows_the_denial(gateway: GatewayProcess, operator: Path, tmp_path: Path) -> None:
    kubectl = kubectl_path()
    if kubectl is None:
        pytest.skip("no kubectl")
    env = {**os.environ, "HOME": str(tmp_path)}
    big, small = tmp_path / "big.yaml", tmp_path / "small.yaml"
    big.write_text(json.dumps(widget("kubectl-big", 1000)))
    small.write_text(json.dumps(widget("kubectl-small", 3)))

    def create(manifest: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl, "--kubeconfig", str(gateway.kubeconfig), "create", "-n", NS, "-f", str(manifest)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    denied = create(big)
    assert denied.returncode == 1
    # kubectl's text for a Status without a reason (cmdutil.StandardErrorMessage, AddSourceToErr)
    assert denied.stderr.strip() == f'Error from server: error when creating "{big}": {DENIAL}'
    made = create(small)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "widget.example.com/kubectl-small created"
    shown = subprocess.run(
        [kubectl, "--kubeconfig", str(gateway.kubeconfig), "get", "widget", "kubectl-small", "-n", NS, "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert json.loads(shown.stdout)["spec"] == {"size": 3, "color": "blue"}
