"""Admission webhooks against a real server and real HTTPS webhook servers (webhookserver.py):
denials and their Status, warnings, JSONPatch mutations, failures with failurePolicy Fail and
Ignore, reinvocation, selectors, dry run and sideEffects, custom resources and subresources,
Service client configs through EndpointSlices, and kubectl's view of a denial.

The module runs its own server: its configurations take whole resources for a while."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import GatewayProcess, Kubectl, eventually, until_cached
from .webhookserver import WebhookServer, allow, host_address, slow

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
    server = WebhookServer(dns_names=("hooks.webhooks.svc",), also_on=host_address()).start()
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
    """Configurations made by a test, deleted when it ends; both take effect before they return
    (the webhooks act once the server's watch cache has the change)."""

    def __init__(self, api: httpx.Client) -> None:
        self.api = api
        self.made: list[str] = []

    def add(self, collection: str, *webhooks: dict[str, Any]) -> str:
        name = f"config-{next(_names)}"
        made = self.api.post(collection, json={"metadata": {"name": name}, "webhooks": list(webhooks)})
        assert made.status_code == 201, made.text
        self.made.append(f"{collection}/{name}")
        until_cached(self.api, collection, made.json()["metadata"]["resourceVersion"])
        return name

    def remove_all(self) -> None:
        for path in self.made:
            self.api.delete(path)
        for collection in {path.rpartition("/")[0] for path in self.made}:
            until_cached(self.api, collection, self.api.get(collection).json()["metadata"]["resourceVersion"])
        self.made.clear()


@pytest.fixture
def configured(api: httpx.Client) -> Iterator[Configured]:
    made = Configured(api)
    yield made
    made.remove_all()


def create_configmap(api: httpx.Client, ns: str, name: str, **params: str) -> httpx.Response:
    return api.post(
        f"/api/v1/namespaces/{ns}/configmaps", params=params, json={"metadata": {"name": name}, "data": {"a": "b"}}
    )


def reviewed(hooks: WebhookServer, path: str, name: str) -> dict[str, Any]:
    """The last review request the webhook at ``path`` got about the object ``name`` (controllers
    write objects of their own meanwhile: kube-root-ca.crt in every namespace, ...)."""
    found = [review["request"] for review in hooks.reviews.get(path, ()) if review["request"].get("name") == name]
    assert found, f"no review of {name} at {path}"
    return found[-1]


def until_called(api: httpx.Client, ns: str, hooks: WebhookServer, path: str) -> tuple[httpx.Response, dict]:
    """Create a configmap and the webhook at ``path`` sees it (configurations take effect before
    Configured.add returns); the answer and the webhook's review request."""
    name = f"probe-{next(_names)}"
    return create_configmap(api, ns, name), reviewed(hooks, path, name)


def test_a_denial_is_the_webhooks_status_with_upstreams_message(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/deny"] = lambda request: {
        "allowed": False,
        "status": {"code": 422, "message": "size must be at most 100"},
    }
    configured.add(VALIDATING, webhook("deny.example.com", "/deny", hooks))
    refused, request = until_called(api, ns, hooks, "/deny")
    assert refused.status_code == 422, refused.text
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'admission webhook "deny.example.com" denied the request: size must be at most 100',
        "code": 422,
    }
    assert {review["apiVersion"] for review in hooks.reviews["/deny"]} == {"admission.k8s.io/v1"}
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
    hooks.handlers["/bare-deny"] = lambda request: {"allowed": False, "warnings": ["see the docs"]}
    configured.add(VALIDATING, webhook("bare.example.com", "/bare-deny", hooks))
    refused, _ = until_called(api, ns, hooks, "/bare-deny")
    assert refused.status_code == 400
    assert refused.json()["message"] == 'admission webhook "bare.example.com" denied the request without explanation'
    assert refused.headers.get_list("Warning") == ['299 - "see the docs"']  # a denial carries its warnings


def test_warnings_become_warning_headers(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/warn"] = lambda request: {"allowed": True, "warnings": ["mind the gap", 'say "hi"']}
    configured.add(VALIDATING, webhook("warn.example.com", "/warn", hooks))
    allowed, _ = until_called(api, ns, hooks, "/warn")
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
    created, _ = until_called(api, ns, hooks, "/mutate")
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["labels"] == {"mutated": "yes"}
    assert created.json()["data"] == {"a": "patched"}
    stored = api.get(f"/api/v1/namespaces/{ns}/configmaps/{created.json()['metadata']['name']}").json()
    assert stored["data"] == {"a": "patched"}


def test_a_timeout_fails_the_request_or_is_ignored(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/slow"] = slow(3)
    configured.add(VALIDATING, webhook("slow.example.com", "/slow", hooks, timeoutSeconds=1))
    failed, _ = until_called(api, ns, hooks, "/slow")
    assert failed.status_code == 500, failed.text
    assert failed.json()["reason"] == "InternalError"
    assert failed.json()["message"] == (
        'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: '
        f'Post "{hooks.url("/slow")}?timeout=1s": context deadline exceeded'
    )
    assert hooks.queries["/slow"][-1] == "timeout=1s"
    configured.remove_all()
    hooks.handlers["/slow-ignored"] = slow(3)
    configured.add(
        VALIDATING, webhook("ignored.example.com", "/slow-ignored", hooks, timeoutSeconds=1, failurePolicy="Ignore")
    )
    allowed, _ = until_called(api, ns, hooks, "/slow-ignored")
    assert allowed.status_code == 201, allowed.text


def test_an_unreachable_webhook(api: httpx.Client, ns: str, configured: Configured, hooks: WebhookServer) -> None:
    hook = webhook("gone.example.com", "/", hooks)
    hook["clientConfig"] = {"url": "https://127.0.0.1:1/check"}
    configured.add(VALIDATING, hook)

    def refused() -> httpx.Response | None:
        answer = create_configmap(api, ns, f"probe-{next(_names)}")
        return answer if answer.status_code == 500 else None

    answer = eventually(refused)
    assert answer is not None
    assert answer.json()["message"] == (
        'Internal error occurred: failed calling webhook "gone.example.com": failed to call webhook: '
        'Post "https://127.0.0.1:1/check?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused'
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (b'{"hello": "world"}', "failed to call webhook: Object 'Kind' is missing in '{\"hello\": \"world\"}'"),
        (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "x"}}',
            'received invalid webhook response: expected response.uid="{uid}", got "x"',
        ),
        (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}',
            "received invalid webhook response: webhook response was absent",
        ),
        (
            (500, "text/plain", b"boom\n"),
            'failed to call webhook: an error on the server ("boom") has prevented the request from succeeding',
        ),
        (
            (503, "application/json", b'{"kind": "Status", "apiVersion": "v1", "message": "overloaded", "code": 503}'),
            "failed to call webhook: overloaded",
        ),
        ((404, "text/html", b"<html/>"), "failed to call webhook: the server could not find the requested resource"),
    ],
)
def test_answers_that_are_not_reviews(
    api: httpx.Client,
    ns: str,
    hooks: WebhookServer,
    configured: Configured,
    answer: bytes | tuple[int, str, bytes],
    message: str,
) -> None:
    path = f"/bad-{next(_names)}"
    hooks.handlers[path] = lambda request: answer
    configured.add(VALIDATING, webhook("bad.example.com", path, hooks))
    failed, request = until_called(api, ns, hooks, path)
    assert failed.status_code == 500, failed.text
    uid = request["uid"]
    assert failed.json()["message"] == (
        f'Internal error occurred: failed calling webhook "bad.example.com": {message.replace("{uid}", uid)}'
    )


def test_a_patch_that_does_not_apply(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/bad-patch"] = lambda request: {
        "allowed": True,
        "patch": [{"op": "replace", "path": "/spec/missing/deeper", "value": 1}],
    }
    configured.add(MUTATING, webhook("badpatch.example.com", "/bad-patch", hooks, failurePolicy="Ignore"))
    failed, _ = until_called(api, ns, hooks, "/bad-patch")
    # not a failed call: an internal error whatever the failure policy (as upstream)
    assert failed.status_code == 500, failed.text
    assert failed.json()["reason"] == "InternalError"
    assert failed.json()["message"].startswith("Internal error occurred: ")


def test_reinvocation(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    """The first webhook (IfNeeded) is called again after the second changed the object."""

    def first(request: dict[str, Any]) -> dict[str, Any]:
        labels = request["object"]["metadata"].get("labels") or {}
        return {
            "allowed": True,
            "patch": [{"op": "add", "path": "/metadata/annotations", "value": {"seen": ",".join(sorted(labels))}}],
        }

    hooks.handlers["/first"] = first
    hooks.handlers["/second"] = lambda request: {
        "allowed": True,
        "patch": [{"op": "add", "path": "/metadata/labels", "value": {"second": "yes"}}],
    }
    configured.add(
        MUTATING,
        webhook("a-first.example.com", "/first", hooks, reinvocationPolicy="IfNeeded"),
        webhook("b-second.example.com", "/second", hooks),
    )
    created, _ = until_called(api, ns, hooks, "/second")
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["annotations"] == {"seen": "second"}
    assert created.json()["metadata"]["labels"] == {"second": "yes"}
    name = created.json()["metadata"]["name"]
    first = [review for review in hooks.reviews["/first"] if review["request"]["name"] == name]
    assert len(first) == 2  # called again after the second webhook's change


def test_namespace_and_object_selectors(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/selected"] = lambda request: {"allowed": False, "status": {"message": "selected"}}
    other = f"wh-other-{next(_names)}"
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": other}}).status_code == 201
    try:
        configured.add(
            VALIDATING,
            webhook(
                "selected.example.com",
                "/selected",
                hooks,
                namespaceSelector={"matchLabels": {"team": ns}},
                objectSelector={"matchExpressions": [{"key": "checked", "operator": "Exists"}]},
            ),
        )

        def labelled(namespace: str, labels: dict[str, str]) -> httpx.Response:
            body = {"metadata": {"name": f"cm-{next(_names)}", "labels": labels}}
            return api.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body)

        assert eventually(lambda: labelled(ns, {"checked": "1"}).status_code == 400)
        assert labelled(ns, {"other": "1"}).status_code == 201  # objectSelector does not match
        assert labelled(other, {"checked": "1"}).status_code == 201  # namespaceSelector does not match
    finally:
        api.delete(f"/api/v1/namespaces/{other}")


def test_dry_run_and_side_effects(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/none"] = allow
    hooks.handlers["/unknown"] = allow
    configured.add(VALIDATING, webhook("none.example.com", "/none", hooks))
    until_called(api, ns, hooks, "/none")
    dry = create_configmap(api, ns, "dry", dryRun="All")
    assert dry.status_code == 201, dry.text
    assert reviewed(hooks, "/none", "dry")["dryRun"] is True
    assert reviewed(hooks, "/none", "dry")["options"]["dryRun"] == ["All"]
    # v1 allows no other sideEffects (Some and Unknown, refused on dry runs, are v1beta1's)
    configured.add(VALIDATING, webhook("unknown.example.com", "/unknown", hooks, sideEffects="NoneOnDryRun"))
    until_called(api, ns, hooks, "/unknown")
    assert create_configmap(api, ns, "dry2", dryRun="All").status_code == 201
    assert reviewed(hooks, "/unknown", "dry2")["dryRun"] is True
    assert api.get(f"/api/v1/namespaces/{ns}/configmaps/dry2").status_code == 404


def test_match_conditions(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/conditions"] = lambda request: {"allowed": False, "status": {"message": "checked"}}
    conditions = [
        {"name": "checked-names", "expression": "object.metadata.name.startsWith('check-')"},
        {"name": "not-by-nobody", "expression": "request.userInfo.username != 'nobody'"},
    ]
    configured.add(VALIDATING, webhook("conditions.example.com", "/conditions", hooks, matchConditions=conditions))
    assert eventually(lambda: create_configmap(api, ns, f"check-{next(_names)}").status_code == 400)
    assert create_configmap(api, ns, f"other-{next(_names)}").status_code == 201


def test_a_match_condition_that_errs(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/erring"] = allow
    conditions = [{"name": "data", "expression": "object.data.missing == 'x'"}]
    configured.add(VALIDATING, webhook("erring.example.com", "/erring", hooks, matchConditions=conditions))
    refused = eventually(lambda: (r := create_configmap(api, ns, "erring")).status_code == 403 and r)
    assert refused.json()["message"] == (
        "configmaps \"erring\" is forbidden: expression 'object.data.missing == 'x'' resulted in error: "
        "no such key: missing"
    )
    assert not hooks.reviews.get("/erring")
    configured.remove_all()
    configured.add(
        VALIDATING,
        webhook("erring.example.com", "/erring", hooks, matchConditions=conditions, failurePolicy="Ignore"),
    )
    assert eventually(lambda: create_configmap(api, ns, f"erring-{next(_names)}").status_code == 201)
    assert not hooks.reviews.get("/erring")  # skipped, not called


def test_a_match_condition_that_does_not_compile_is_refused(
    api: httpx.Client, hooks: WebhookServer, configured: Configured
) -> None:
    conditions = [{"name": "bad", "expression": "object.metadata.name.frobnicate()"}]
    hook = webhook("bad-condition.example.com", "/x", hooks, matchConditions=conditions)
    refused = api.post(VALIDATING, json={"metadata": {"name": "bad-condition"}, "webhooks": [hook]})
    assert refused.status_code == 422, refused.text
    cause = refused.json()["details"]["causes"][0]
    assert cause["field"] == "webhooks[0].matchConditions[0].expression"
    assert "compilation failed" in cause["message"] and "frobnicate" in cause["message"]


WIDGETS_CRD = {
    "metadata": {"name": "widgets.hooks.example.com"},
    "spec": {
        "group": "hooks.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}},
            }
        ],
    },
}


def test_webhooks_on_a_custom_resource(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    created = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=WIDGETS_CRD)
    assert created.status_code == 201, created.text
    try:

        def size_limit(request: dict[str, Any]) -> dict[str, Any]:
            if request["object"]["spec"].get("size", 0) > 100:
                return {"allowed": False, "status": {"code": 422, "message": "size must be at most 100"}}
            return {"allowed": True}

        hooks.handlers["/widgets-validate"] = size_limit
        hooks.handlers["/widgets-mutate"] = lambda request: {
            "allowed": True,
            "patch": [{"op": "add", "path": "/spec/color", "value": "blue"}],
        }
        rule = {
            "operations": ["CREATE"],
            "apiGroups": ["hooks.example.com"],
            "apiVersions": ["*"],
            "resources": ["widgets"],
        }
        configured.add(VALIDATING, webhook("size-limit.hooks.example.com", "/widgets-validate", hooks, rules=[rule]))
        configured.add(MUTATING, webhook("color.hooks.example.com", "/widgets-mutate", hooks, rules=[rule]))
        widgets = f"/apis/hooks.example.com/v1/namespaces/{ns}/widgets"

        def widget(size: int) -> httpx.Response:
            body = {"apiVersion": "hooks.example.com/v1", "kind": "Widget", "metadata": {"name": f"w-{next(_names)}"}}
            return api.post(widgets, json={**body, "spec": {"size": size}})

        refused = eventually(lambda: (r := widget(1000)).status_code == 422 and r)
        assert refused.json()["message"] == (
            'admission webhook "size-limit.hooks.example.com" denied the request: size must be at most 100'
        )
        made = eventually(lambda: (r := widget(5)).status_code == 201 and r.json()["spec"].get("color") and r)
        assert made.json()["spec"] == {"size": 5, "color": "blue"}
        review = reviewed(hooks, "/widgets-validate", made.json()["metadata"]["name"])
        assert review["kind"] == {"group": "hooks.example.com", "version": "v1", "kind": "Widget"}
        assert review["object"]["spec"] == {"size": 5, "color": "blue"}  # the validating webhook sees the mutation
    finally:
        api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.hooks.example.com")


def test_a_webhook_on_pods_status(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    made = eventually(lambda: (r := api.post(f"/api/v1/namespaces/{ns}/pods", json=pod)).status_code == 201 and r)
    assert made, "the pod was not created"
    hooks.handlers["/status"] = lambda request: {"allowed": False, "status": {"message": "status is read-only"}}
    rule = {"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/status"]}
    configured.add(VALIDATING, webhook("status.example.com", "/status", hooks, rules=[rule]))
    status = f"/api/v1/namespaces/{ns}/pods/p/status"
    patch = {"status": {"message": "hello"}}
    merge = {"Content-Type": "application/merge-patch+json"}
    refused = eventually(lambda: (r := api.patch(status, json=patch, headers=merge)).status_code == 400 and r)
    assert refused.json()["message"] == 'admission webhook "status.example.com" denied the request: status is read-only'
    request = reviewed(hooks, "/status", "p")
    assert request["subResource"] == "status" and request["requestSubResource"] == "status"
    assert request["kind"]["kind"] == "Pod" and request["operation"] == "UPDATE"
    assert request["oldObject"]["metadata"]["name"] == "p" and request["object"]["status"]["message"] == "hello"
    assert request["options"]["kind"] == "UpdateOptions"
    # the pod itself is not taken by pods/status
    labelled = api.patch(f"/api/v1/namespaces/{ns}/pods/p", json={"metadata": {"labels": {"a": "b"}}}, headers=merge)
    assert labelled.status_code == 200, labelled.text


def test_a_service_client_config_through_endpoint_slices(
    api: httpx.Client, hooks: WebhookServer, configured: Configured, ns: str
) -> None:
    """The Service hooks.webhooks (port 443) has one EndpointSlice: this host's address (loopback
    ones are refused in slices) on the server's port; the server's certificate names hooks.webhooks.svc."""
    if not hooks.also_on:
        pytest.skip("this host has no address but loopback")
    hooks.handlers["/svc"] = lambda request: {"allowed": False, "status": {"message": "through the service"}}
    api.post("/api/v1/namespaces", json={"metadata": {"name": "webhooks"}})
    try:
        service = {"metadata": {"name": "hooks"}, "spec": {"ports": [{"name": "https", "port": 443}]}}
        assert api.post("/api/v1/namespaces/webhooks/services", json=service).status_code == 201
        hook = webhook("svc.example.com", "/", hooks)
        hook["clientConfig"] = {
            "service": {"namespace": "webhooks", "name": "hooks", "path": "/svc"},
            "caBundle": hooks.ca_bundle,
        }
        configured.add(VALIDATING, hook)
        unresolved = eventually(lambda: (r := create_configmap(api, ns, "svc-0")).status_code == 500 and r)
        assert unresolved.json()["message"] == (
            'Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: '
            'Post "https://hooks.webhooks.svc:443/svc?timeout=10s": no endpoints available for service "hooks"'
        )
        endpoint_slice = {
            "metadata": {"name": "hooks-1", "labels": {"kubernetes.io/service-name": "hooks"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [hooks.also_on], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": hooks.port, "protocol": "TCP"}],
        }
        made = api.post("/apis/discovery.k8s.io/v1/namespaces/webhooks/endpointslices", json=endpoint_slice)
        assert made.status_code == 201, made.text
        refused = eventually(lambda: (r := create_configmap(api, ns, "svc-1")).status_code == 400 and r)
        assert (
            refused.json()["message"] == 'admission webhook "svc.example.com" denied the request: through the service'
        )
    finally:
        api.delete("/api/v1/namespaces/webhooks")


def test_kubectl_create_of_a_configuration_then_a_denial(
    gateway: GatewayProcess, api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured, tmp_path: Path
) -> None:
    kubectl = Kubectl(gateway.url, tmp_path / "home")
    hooks.handlers["/kubectl"] = lambda request: {"allowed": False, "status": {"message": "no configmaps here"}}
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "kubectl-deny"},
        "webhooks": [webhook("deny.kubectl.example.com", "/kubectl", hooks)],
    }
    manifest = tmp_path / "webhook.yaml"
    manifest.write_text(json.dumps(configuration))
    made = kubectl.run("create", "-f", str(manifest))
    configured.made.append(f"{VALIDATING}/kubectl-deny")  # deleted with the test's others
    assert made.stdout.strip() == "validatingwebhookconfiguration.admissionregistration.k8s.io/kubectl-deny created"
    denied = eventually(
        lambda: (r := kubectl.run("create", "configmap", f"c{next(_names)}", "-n", ns, check=False)).returncode and r
    )
    assert denied.stderr.strip() == (
        'error: failed to create configmap: admission webhook "deny.kubectl.example.com" denied the request: '
        "no configmaps here"
    )


def test_admission_configurations_are_never_sent_to_webhooks(
    api: httpx.Client, hooks: WebhookServer, configured: Configured
) -> None:
    """A webhook that refuses everything cannot lock its own configuration in (upstream's
    IsExemptAdmissionConfigurationResource)."""
    hooks.handlers["/everything"] = lambda request: {"allowed": False}
    rule = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}
    configured.add(VALIDATING, webhook("everything.example.com", "/everything", hooks, rules=[rule]))
    assert eventually(lambda: api.post("/api/v1/namespaces", json={"metadata": {"name": "never"}}).status_code == 400)
    other = api.post(MUTATING, json={"metadata": {"name": "still-allowed"}, "webhooks": []})
    assert other.status_code == 201, other.text
    assert api.delete(f"{MUTATING}/still-allowed").status_code == 200
    configured.remove_all()
    kinds = {review["request"]["kind"]["kind"] for review in hooks.reviews["/everything"]}
    assert "Namespace" in kinds and not kinds & {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}


def test_a_deletion(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    hooks.handlers["/delete"] = lambda request: {"allowed": False, "status": {"message": "keep it"}}
    assert create_configmap(api, ns, "kept").status_code == 201
    rule = {"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}
    configured.add(VALIDATING, webhook("delete.example.com", "/delete", hooks, rules=[rule]))
    path = f"/api/v1/namespaces/{ns}/configmaps/kept"
    refused = eventually(lambda: (r := api.delete(path, params={"gracePeriodSeconds": "0"})).status_code == 400 and r)
    assert refused.json()["message"] == 'admission webhook "delete.example.com" denied the request: keep it'
    request = reviewed(hooks, "/delete", "kept")
    assert request["operation"] == "DELETE" and request["name"] == "kept"
    assert request["object"] is None and request["oldObject"]["data"] == {"a": "b"}
    assert request["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "gracePeriodSeconds": 0}
    assert api.get(path).status_code == 200


GADGETS_CRD = {
    "metadata": {"name": "gadgets.hooks.example.com"},
    "spec": {
        "group": "hooks.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
        "versions": [
            {
                "name": version,
                "served": True,
                "storage": version == "v1",
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }
            for version in ("v1", "v2")
        ],
    },
}


def test_match_policy_equivalent_calls_with_the_webhooks_version(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    """A webhook on gadgets v1 takes a write at v2 (matchPolicy Equivalent, the default): it sees
    the object at v1, and the request's own kind and resource as requestKind/requestResource; with
    Exact it is not called."""
    created = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=GADGETS_CRD)
    assert created.status_code == 201, created.text
    try:
        hooks.handlers["/gadgets"] = lambda request: {
            "allowed": True,
            "patch": [{"op": "add", "path": "/spec/seen", "value": request["kind"]["version"]}],
        }
        hooks.handlers["/gadgets-exact"] = lambda request: {"allowed": False}
        rule = {"operations": ["CREATE"], "apiGroups": ["hooks.example.com"], "apiVersions": ["v1"]}
        rule["resources"] = ["gadgets"]
        configured.add(MUTATING, webhook("equivalent.example.com", "/gadgets", hooks, rules=[rule]))
        exact = webhook("exact.example.com", "/gadgets-exact", hooks, rules=[rule], matchPolicy="Exact")
        configured.add(VALIDATING, exact)
        gadgets = f"/apis/hooks.example.com/v2/namespaces/{ns}/gadgets"

        def gadget() -> httpx.Response:
            body = {"apiVersion": "hooks.example.com/v2", "kind": "Gadget", "metadata": {"name": f"g-{next(_names)}"}}
            return api.post(gadgets, json={**body, "spec": {}})

        made = eventually(lambda: (r := gadget()).status_code == 201 and r.json()["spec"].get("seen") and r)
        assert made, "the mutating webhook was not called"
        assert made.json()["apiVersion"] == "hooks.example.com/v2" and made.json()["spec"] == {"seen": "v1"}
        request = reviewed(hooks, "/gadgets", made.json()["metadata"]["name"])
        assert request["kind"] == {"group": "hooks.example.com", "version": "v1", "kind": "Gadget"}
        assert request["resource"] == {"group": "hooks.example.com", "version": "v1", "resource": "gadgets"}
        assert request["requestKind"] == {"group": "hooks.example.com", "version": "v2", "kind": "Gadget"}
        assert request["requestResource"] == {"group": "hooks.example.com", "version": "v2", "resource": "gadgets"}
        assert request["object"]["apiVersion"] == "hooks.example.com/v1"
        assert not hooks.reviews.get("/gadgets-exact")
    finally:
        api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.hooks.example.com")


def test_a_huge_answer_and_an_unknown_certificate(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    """An answer past 16 MiB is not read whole (a protokube bound); without a caBundle the server's
    certificate is checked against the system's roots, which do not know the test CA."""
    huge = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "pad": "' + b"x" * (17 << 20) + b'"}'
    hooks.handlers["/huge"] = lambda request: huge
    configured.add(VALIDATING, webhook("huge.example.com", "/huge", hooks))
    failed, _ = until_called(api, ns, hooks, "/huge")
    assert failed.status_code == 500, failed.text
    assert failed.json()["message"] == (
        'Internal error occurred: failed calling webhook "huge.example.com": failed to call webhook: '
        "the answer is larger than 16777216 bytes"
    )
    configured.remove_all()
    hook = webhook("untrusted.example.com", "/untrusted", hooks)
    del hook["clientConfig"]["caBundle"]
    hooks.handlers["/untrusted"] = allow
    configured.add(VALIDATING, hook)
    untrusted = eventually(lambda: (r := create_configmap(api, ns, "untrusted")).status_code == 500 and r)
    assert untrusted.json()["message"] == (
        'Internal error occurred: failed calling webhook "untrusted.example.com": failed to call webhook: '
        f'Post "{hooks.url("/untrusted")}?timeout=10s": tls: failed to verify certificate: x509: '
        "certificate signed by unknown authority"
    )


def test_a_webhook_on_namespaces(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    """A namespace's own labels are what namespaceSelector sees when the namespace is written, and
    the review names it as its namespace (upstream's request info does for a namespace's path)."""
    hooks.handlers["/namespaces"] = lambda request: {"allowed": False, "status": {"message": "frozen"}}
    rule = {"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"]}
    selector = {"matchLabels": {"frozen": "yes"}}
    configured.add(
        VALIDATING, webhook("namespaces.example.com", "/namespaces", hooks, rules=[rule], namespaceSelector=selector)
    )
    merge = {"Content-Type": "application/merge-patch+json"}
    path = f"/api/v1/namespaces/{ns}"
    assert api.patch(path, json={"metadata": {"labels": {"other": "1"}}}, headers=merge).status_code == 200
    refused = api.patch(path, json={"metadata": {"labels": {"frozen": "yes"}}}, headers=merge)
    assert refused.status_code == 400, refused.text
    request = reviewed(hooks, "/namespaces", ns)
    assert request["name"] == ns and request["namespace"] == ns


def test_a_configuration_with_a_bad_url_is_refused(api: httpx.Client, hooks: WebhookServer) -> None:
    hook = webhook("plain.example.com", "/", hooks)
    hook["clientConfig"] = {"url": "http://127.0.0.1:8080/check?x=1"}
    refused = api.post(VALIDATING, json={"metadata": {"name": "plain"}, "webhooks": [hook]})
    assert refused.status_code == 422, refused.text
    assert [cause["message"] for cause in refused.json()["details"]["causes"]] == [
        "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
        'Invalid value: "x=1": query parameters are not permitted in the URL',
    ]


def test_a_mutating_webhook_on_deletes(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    """Mutating webhooks are called on deletes too (with the old object); they may refuse, and a
    patch is an internal error: there is no object to change."""
    for name in ("refused", "patched"):
        assert create_configmap(api, ns, name).status_code == 201
    hooks.handlers["/delete-mutate"] = lambda request: (
        {"allowed": False, "status": {"message": "not this one"}}
        if request["name"] == "refused"
        else {"allowed": True, "patch": [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]}
    )
    rule = {"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}
    configured.add(MUTATING, webhook("delete-mutate.example.com", "/delete-mutate", hooks, rules=[rule]))
    refused = api.delete(f"/api/v1/namespaces/{ns}/configmaps/refused")
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == 'admission webhook "delete-mutate.example.com" denied the request: not this one'
    patched = api.delete(f"/api/v1/namespaces/{ns}/configmaps/patched")
    assert patched.status_code == 500, patched.text
    assert patched.json()["message"] == (
        'Internal error occurred: admission webhook "delete-mutate.example.com" attempted to modify the object, '
        "which is not supported for this operation"
    )
    request = reviewed(hooks, "/delete-mutate", "patched")
    assert request["operation"] == "DELETE" and request["object"] is None and request["oldObject"]["data"] == {"a": "b"}
    for name in ("refused", "patched"):
        assert api.get(f"/api/v1/namespaces/{ns}/configmaps/{name}").status_code == 200


def test_a_webhook_that_speaks_only_v1beta1(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    """It gets an admission.k8s.io/v1beta1 review; its answer's uid is not checked and a patch
    without patchType is a JSONPatch (upstream's v1beta1 handling)."""
    patch = base64.b64encode(json.dumps([{"op": "add", "path": "/data/b", "value": "c"}]).encode()).decode()
    answer = {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "any"}}
    answer["response"].update(allowed=True, patch=patch)
    hooks.handlers["/v1beta1"] = lambda request: json.dumps(answer).encode()
    configured.add(MUTATING, webhook("old.example.com", "/v1beta1", hooks, admissionReviewVersions=["v1beta1"]))
    created, _ = until_called(api, ns, hooks, "/v1beta1")
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {"a": "b", "b": "c"}
    assert hooks.reviews["/v1beta1"][-1]["apiVersion"] == "admission.k8s.io/v1beta1"


def test_a_mutating_webhook_selects_what_the_one_before_it_made(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/labeller"] = lambda request: {
        "allowed": True,
        "patch": [{"op": "add", "path": "/metadata/labels", "value": {"labelled": "yes"}}],
    }
    hooks.handlers["/selected-later"] = lambda request: {
        "allowed": True,
        "patch": [{"op": "add", "path": "/data/seen", "value": request["object"]["metadata"]["labels"]["labelled"]}],
    }
    configured.add(
        MUTATING,
        webhook("a-labeller.example.com", "/labeller", hooks),
        webhook("b-later.example.com", "/selected-later", hooks, objectSelector={"matchLabels": {"labelled": "yes"}}),
    )
    created, _ = until_called(api, ns, hooks, "/selected-later")
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {"a": "b", "seen": "yes"}


def test_match_conditions_on_a_deeply_nested_custom_object(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    """Custom objects nest up to 10,000 levels; a webhook's conditions see them (and skip the
    webhook here) instead of failing on a JSON depth limit."""
    crd = json.loads(json.dumps(WIDGETS_CRD).replace("widget", "deepthing").replace("Widget", "Deepthing"))
    assert api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    try:
        hooks.handlers["/deep"] = lambda request: {"allowed": False}
        rule = {"operations": ["CREATE"], "apiGroups": ["hooks.example.com"], "apiVersions": ["v1"]}
        rule["resources"] = ["deepthings"]
        conditions = [{"name": "never", "expression": "object.metadata.name == 'never'"}]
        configured.add(
            VALIDATING, webhook("deep.example.com", "/deep", hooks, rules=[rule], matchConditions=conditions)
        )
        levels = 3000
        spec = '{"a":' * levels + "1" + "}" * levels
        body = '{"apiVersion": "hooks.example.com/v1", "kind": "Deepthing", "metadata": {"name": "deep"}, "spec": '
        path = f"/apis/hooks.example.com/v1/namespaces/{ns}/deepthings"
        post = lambda: api.post(path, content=body + spec + "}", headers={"Content-Type": "application/json"})  # noqa: E731
        created = eventually(lambda: (r := post()).status_code != 404 and r)
        assert created.status_code == 201, created.text[:500]
        assert not hooks.reviews.get("/deep")
    finally:
        api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/deepthings.hooks.example.com")
