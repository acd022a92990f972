"""Admission webhooks against a real server and real HTTPS webhook servers (webhookserver.py):
denials and their Status, warnings, JSONPatch mutations, failures with failurePolicy Fail and
Ignore, reinvocation, selectors, dry run and sideEffects, custom resources and subresources,
Service client configs through EndpointSlices, and kubectl's view of a denial.

The module runs its own server: its configurations take whole resources for a while."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .helpers import GatewayProcess, eventually
from .webhookserver import WebhookServer

VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
_names = itertools.count()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("webhooks")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer(dns_names=("hooks.webhooks.svc",)).start()
    yield server
    server.stop()


@pytest.fixture
def api(gateway: GatewayProcess) -> Iterator[httpx.Client]:
    with gateway.client() as client:
        yield client


@pytest.fixture
def ns(api: httpx.Client) -> Iterator[str]:
    name = f"wh-{next(_names)}"
    assert (
        api.post("/api/v1/namespaces", json={"metadata": {"name": name, "labels": {"team": name}}}).status_code == 201
    )
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def webhook(
    name: str, path: str, hooks: WebhookServer, *, resources: tuple[str, ...] = ("configmaps",), **extra: Any
) -> dict[str, Any]:
    """A webhook on core/v1 ``resources`` (CREATE and UPDATE) calling ``path`` on ``hooks``."""
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": {"url": hooks.url(path), "caBundle": hooks.ca_bundle},
        "rules": [
            {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": list(resources)}
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    hook.update(extra)
    return hook


class Configured:
    """Configurations made by a test, deleted when it ends; ``ready`` waits until they take effect."""

    def __init__(self, api: httpx.Client) -> None:
        self.api = api
        self.made: list[str] = []

    def add(self, collection: str, *webhooks: dict[str, Any]) -> str:
        name = f"config-{next(_names)}"
        made = self.api.post(collection, json={"metadata": {"name": name}, "webhooks": list(webhooks)})
        assert made.status_code == 201, made.text
        self.made.append(f"{collection}/{name}")
        return name

    def remove_all(self) -> None:
        for path in self.made:
            self.api.delete(path)


@pytest.fixture
def configured(api: httpx.Client) -> Iterator[Configured]:
    made = Configured(api)
    yield made
    made.remove_all()


def create_configmap(api: httpx.Client, ns: str, name: str, **params: str) -> httpx.Response:
    return api.post(
        f"/api/v1/namespaces/{ns}/configmaps", params=params, json={"metadata": {"name": name}, "data": {"a": "b"}}
    )


def until_called(api: httpx.Client, ns: str, hooks: WebhookServer, path: str) -> httpx.Response:
    """Create configmaps until the webhook at ``path`` sees one (configurations take effect when the
    server's watch cache has them); the last answer."""
    answers: list[httpx.Response] = []

    def attempt() -> bool:
        answer = create_configmap(api, ns, f"probe-{next(_names)}")
        answers.append(answer)
        return bool(hooks.reviews.get(path))

    assert eventually(attempt), answers[-1].text
    return answers[-1]


def test_a_denial_is_the_webhooks_status_with_upstreams_message(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/deny"] = lambda request: {
        "allowed": False,
        "status": {"code": 422, "message": "size must be at most 100"},
    }
    configured.add(VALIDATING, webhook("deny.example.com", "/deny", hooks))
    refused = until_called(api, ns, hooks, "/deny")
    assert refused.status_code == 422, refused.text
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'admission webhook "deny.example.com" denied the request: size must be at most 100',
        "code": 422,
    }
    review = hooks.reviews["/deny"][-1]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    request = review["request"]
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["requestKind"] == request["kind"] and request["requestResource"] == request["resource"]
    assert request["namespace"] == ns and request["operation"] == "CREATE"
    assert request["userInfo"]["username"] == "system:unsecured"
    assert request["object"]["kind"] == "ConfigMap" and request["object"]["data"] == {"a": "b"}
    assert request["oldObject"] is None and request["dryRun"] is False
    # fieldManager: the manager the server records (the client's user agent when it names none)
    assert request["options"] == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "python-httpx",
    }
    assert hooks.queries["/deny"][-1] == "timeout=10s"
    # nothing was stored
    name = request["name"]
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps/{name}").status_code == 404


def test_a_denial_without_a_status(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/bare-deny"] = lambda request: {"allowed": False}
    configured.add(VALIDATING, webhook("bare.example.com", "/bare-deny", hooks))
    refused = until_called(api, ns, hooks, "/bare-deny")
    assert refused.status_code == 400
    assert refused.json()["message"] == 'admission webhook "bare.example.com" denied the request without explanation'


def test_warnings_become_warning_headers(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/warn"] = lambda request: {"allowed": True, "warnings": ["mind the gap", 'say "hi"']}
    configured.add(VALIDATING, webhook("warn.example.com", "/warn", hooks))
    allowed = until_called(api, ns, hooks, "/warn")
    assert allowed.status_code == 201, allowed.text
    assert allowed.headers.get_list("Warning") == ['299 - "mind the gap"', '299 - "say \\"hi\\""']


def test_a_jsonpatch_mutates_the_object(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/mutate"] = lambda request: {
        "allowed": True,
        "patch": [
            {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
            {"op": "replace", "path": "/data/a", "value": "patched"},
        ],
    }
    configured.add(MUTATING, webhook("mutate.example.com", "/mutate", hooks))
    created = until_called(api, ns, hooks, "/mutate")
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["labels"] == {"mutated": "yes"}
    assert created.json()["data"] == {"a": "patched"}
    stored = api.get(f"/api/v1/namespaces/{ns}/configmaps/{created.json()['metadata']['name']}").json()
    assert stored["data"] == {"a": "patched"}
