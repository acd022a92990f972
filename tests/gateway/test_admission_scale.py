"""Admission of ``*/scale`` writes as kube-apiserver 1.32 does it, against a real server and a real
HTTPS webhook server (webhookserver.py): mutating admission runs on the autoscaling/v1 Scale the
request makes and its spec.replicas lands in the parent; validating admission sees the Scale of
the updated parent. Webhooks are sent kind and requestKind autoscaling/v1 Scale, the parent's
resource and subResource scale; a ValidatingAdmissionPolicy on deployments/scale reads the Scale.
kubectl scale, merge PATCH, server-side apply and a custom resource's scale alike.

The module runs its own server: its configurations take whole resources."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import GatewayProcess, Kubectl, eventually, kubectl_path
from .test_admission_webhooks import MUTATING, VALIDATING, Configured, reviewed, webhook
from .webhookserver import WebhookServer, allow

SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
DEPLOYMENTS = {"group": "apps", "version": "v1", "resource": "deployments"}
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = {"Content-Type": "application/merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
_names = itertools.count()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("scale-admission")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    server = WebhookServer().start()
    yield server
    server.stop()


@pytest.fixture
def api(gateway: GatewayProcess) -> Iterator[httpx.Client]:
    with gateway.client() as client:
        yield client


@pytest.fixture
def ns(api: httpx.Client) -> Iterator[str]:
    name = f"scale-{next(_names)}"
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture
def configured(api: httpx.Client) -> Iterator[Configured]:
    made = Configured(api)
    yield made
    made.remove_all()


@pytest.fixture(scope="module")
def kubectl(gateway: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed (/usr/bin/kubectl or the pinned 1.32 build)")
    return Kubectl(gateway.url, Path(tmp_path_factory.mktemp("kubectl-home")))


def scale_hook(name: str, path: str, hooks: WebhookServer, resources: str = "deployments/scale") -> dict[str, Any]:
    """A webhook on UPDATE of apps/v1 ``resources`` calling ``path`` on ``hooks``."""
    rule = {"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": [resources]}
    return webhook(name, path, hooks, rules=[rule])


def replicas_to(value: Any) -> dict[str, Any]:
    """A mutating webhook's answer setting the Scale's spec.replicas."""
    return {"allowed": True, "patch": [{"op": "replace", "path": "/spec/replicas", "value": value}]}


def create_deployment(api: httpx.Client, ns: str, name: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    body = {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }
    made = api.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=body)
    assert made.status_code == 201, made.text
    return made.json()


def replicas_of(api: httpx.Client, path: str) -> int:
    return api.get(path).json()["spec"]["replicas"]


def test_kubectl_scale_sends_webhooks_a_scale(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured, kubectl: Kubectl
) -> None:
    for path in ("/seen-mutating", "/seen-validating", "/deployments-only"):
        hooks.handlers[path] = allow
    configured.add(MUTATING, scale_hook("mutating.scale.example.com", "/seen-mutating", hooks))
    configured.add(VALIDATING, scale_hook("validating.scale.example.com", "/seen-validating", hooks))
    configured.add(VALIDATING, scale_hook("parent.scale.example.com", "/deployments-only", hooks, "deployments"))
    made = create_deployment(api, ns, "d1")
    scaled = kubectl.run("scale", "deployment/d1", "--replicas=3", "-n", ns)
    assert scaled.stdout.strip() == "deployment.apps/d1 scaled"
    assert replicas_of(api, f"/apis/apps/v1/namespaces/{ns}/deployments/d1") == 3
    for path in ("/seen-mutating", "/seen-validating"):
        request = reviewed(hooks, path, "d1")
        assert request["kind"] == request["requestKind"] == SCALE_KIND
        assert request["resource"] == request["requestResource"] == DEPLOYMENTS
        assert request["subResource"] == request["requestSubResource"] == "scale"
        assert (request["operation"], request["namespace"], request["options"]["kind"]) == (
            "UPDATE",
            ns,
            "UpdateOptions",
        )
        new, old = request["object"], request["oldObject"]
        for scale in (new, old):
            assert (scale["apiVersion"], scale["kind"]) == ("autoscaling/v1", "Scale")
            assert (scale["metadata"]["name"], scale["metadata"]["namespace"]) == ("d1", ns)
            assert scale["metadata"]["uid"] == made["metadata"]["uid"]
            assert scale["status"]["selector"] == "app=d1"
        assert (new["spec"], old["spec"]) == ({"replicas": 3}, {"replicas": 1})
    # validating admission gets the Scale made from the updated parent (upstream's scaleFromDeployment: no
    # managedFields); mutating admission the Scale the request made, with the Scale's owners of spec.replicas
    assert "managedFields" not in reviewed(hooks, "/seen-validating", "d1")["object"]["metadata"]
    owners = reviewed(hooks, "/seen-mutating", "d1")["object"]["metadata"]["managedFields"]
    assert any(entry.get("subresource") == "scale" for entry in owners)
    assert all(r["request"].get("name") != "d1" for r in hooks.reviews.get("/deployments-only", ()))


def test_a_mutating_webhooks_replicas_land_in_the_deployment(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured, kubectl: Kubectl
) -> None:
    hooks.handlers["/double"] = lambda request: replicas_to(request["object"]["spec"]["replicas"] * 2)
    hooks.handlers["/after-double"] = allow
    configured.add(MUTATING, scale_hook("double.scale.example.com", "/double", hooks))
    configured.add(VALIDATING, scale_hook("after-double.scale.example.com", "/after-double", hooks))
    create_deployment(api, ns, "d2")
    deployment = f"/apis/apps/v1/namespaces/{ns}/deployments/d2"
    assert kubectl.run("scale", "deployment/d2", "--replicas=2", "-n", ns).stdout.strip() == "deployment.apps/d2 scaled"
    assert replicas_of(api, deployment) == 4
    validated = reviewed(hooks, "/after-double", "d2")
    assert (validated["object"]["spec"], validated["oldObject"]["spec"]) == ({"replicas": 4}, {"replicas": 1})
    assert reviewed(hooks, "/double", "d2")["object"]["spec"] == {"replicas": 2}  # before the patch


def test_merge_patch_and_apply_on_scale_are_admitted_alike(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured
) -> None:
    hooks.handlers["/plus-one"] = lambda request: replicas_to(request["object"]["spec"]["replicas"] + 1)
    hooks.handlers["/after-plus-one"] = allow
    configured.add(MUTATING, scale_hook("plus-one.scale.example.com", "/plus-one", hooks))
    configured.add(VALIDATING, scale_hook("after-plus-one.scale.example.com", "/after-plus-one", hooks))
    create_deployment(api, ns, "d3")
    deployment = f"/apis/apps/v1/namespaces/{ns}/deployments/d3"
    patched = api.patch(f"{deployment}/scale", json={"spec": {"replicas": 2}}, headers=MERGE)
    assert patched.status_code == 200, patched.text
    assert (patched.json()["kind"], patched.json()["spec"]) == ("Scale", {"replicas": 3})
    assert replicas_of(api, deployment) == 3
    validated = reviewed(hooks, "/after-plus-one", "d3")
    assert validated["kind"] == SCALE_KIND and validated["object"]["spec"] == {"replicas": 3}

    applied = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d3"}, "spec": {"replicas": 5}}
    answer = api.patch(
        f"{deployment}/scale", json=applied, headers=APPLY, params={"fieldManager": "scaler", "force": "true"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["spec"] == {"replicas": 6}
    assert replicas_of(api, deployment) == 6
    mutated = reviewed(hooks, "/plus-one", "d3")
    assert mutated["kind"] == SCALE_KIND and mutated["subResource"] == "scale"
    assert (mutated["object"]["spec"], mutated["oldObject"]["spec"]) == ({"replicas": 5}, {"replicas": 3})
    # a patch's options as upstream's patchToUpdateOptions makes them (force is not among them)
    assert mutated["options"] == {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "scaler"}
    managers = {entry["manager"] for entry in mutated["object"]["metadata"]["managedFields"]}
    assert "scaler" in managers

    # the patched Scale is checked as a request's: upstream's ValidateScale after mutating admission
    hooks.handlers["/plus-one"] = lambda request: replicas_to(-1)
    refused = api.patch(f"{deployment}/scale", json={"spec": {"replicas": 1}}, headers=MERGE)
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'Scale.autoscaling "d3" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    )
    assert replicas_of(api, deployment) == 6


def test_a_validating_webhooks_denial_through_kubectl_scale(
    api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured, kubectl: Kubectl
) -> None:
    def at_most_five(request: dict[str, Any]) -> dict[str, Any]:
        if request["object"]["spec"]["replicas"] <= 5:
            return {"allowed": True}
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "at most 5 replicas"}}

    hooks.handlers["/at-most-five"] = at_most_five
    configured.add(VALIDATING, scale_hook("at-most-five.scale.example.com", "/at-most-five", hooks))
    create_deployment(api, ns, "d4")
    deployment = f"/apis/apps/v1/namespaces/{ns}/deployments/d4"
    denied = kubectl.run("scale", "deployment/d4", "--replicas=6", "-n", ns, check=False)
    assert denied.returncode == 1
    message = 'admission webhook "at-most-five.scale.example.com" denied the request: at most 5 replicas'
    assert denied.stderr.strip() == f"Error from server (Forbidden): {message}"
    refused = api.patch(f"{deployment}/scale", json={"spec": {"replicas": 7}}, headers=MERGE)
    assert refused.status_code == 403
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "code": 403,
    }
    assert replicas_of(api, deployment) == 1
    assert kubectl.run("scale", "deployment/d4", "--replicas=5", "-n", ns).returncode == 0
    assert replicas_of(api, deployment) == 5


def test_a_policy_on_deployments_scale_reads_the_scale(api: httpx.Client, ns: str, kubectl: Kubectl) -> None:
    policy, binding = "scale-limit.example.com", "scale-limit-binding"
    rule = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments/scale"]}
    validations = [
        {"expression": "object.spec.replicas <= 5"},
        {"expression": "object.kind == 'Scale' && oldObject.kind == 'Scale' && request.kind.kind == 'Scale'"},
        {"expression": "request.resource.resource == 'deployments' && request.subResource == 'scale'"},
    ]
    spec = {"matchConstraints": {"resourceRules": [rule]}, "validations": validations}
    made = api.post(f"{ADMISSION}/validatingadmissionpolicies", json={"metadata": {"name": policy}, "spec": spec})
    assert made.status_code == 201, made.text
    bound = {"metadata": {"name": binding}, "spec": {"policyName": policy, "validationActions": ["Deny"]}}
    assert api.post(f"{ADMISSION}/validatingadmissionpolicybindings", json=bound).status_code == 201
    try:
        create_deployment(api, ns, "d5")
        scale = f"/apis/apps/v1/namespaces/{ns}/deployments/d5/scale"

        def refused() -> httpx.Response | None:
            answer = api.patch(scale, json={"spec": {"replicas": 6}}, headers=MERGE, params={"dryRun": "All"})
            return answer if answer.status_code != 200 else None

        answer = eventually(refused)
        assert answer is not None, "the policy was not enforced"
        message = (
            f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: "
            "failed expression: object.spec.replicas <= 5"
        )
        assert answer.status_code == 422
        assert answer.json()["reason"] == "Invalid"
        assert answer.json()["message"] == f'deployments.apps "d5" is forbidden: {message}'
        assert answer.json()["details"] == {
            "name": "d5",
            "group": "apps",
            "kind": "deployments",
            "causes": [{"message": message}],
        }
        denied = kubectl.run("scale", "deployment/d5", "--replicas=6", "-n", ns, check=False)
        assert denied.returncode == 1
        assert denied.stderr.strip() == f'The deployments "d5" is invalid: : {message}'
        # the other validations hold: the policy sees a Scale
        assert kubectl.run("scale", "deployment/d5", "--replicas=5", "-n", ns).returncode == 0
        assert replicas_of(api, f"/apis/apps/v1/namespaces/{ns}/deployments/d5") == 5
    finally:
        api.delete(f"{ADMISSION}/validatingadmissionpolicybindings/{binding}")
        api.delete(f"{ADMISSION}/validatingadmissionpolicies/{policy}")


SCALERS_CRD = {
    "metadata": {"name": "scalers.scale.example.com"},
    "spec": {
        "group": "scale.example.com",
        "scope": "Namespaced",
        "names": {"plural": "scalers", "singular": "scaler", "kind": "Scaler"},
        "versions": [
            {
                "name": version,
                "served": True,
                "storage": version == "v1",
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
            }
            for version in ("v1", "v2")
        ],
    },
}


def test_a_custom_resources_scale(api: httpx.Client, ns: str, hooks: WebhookServer, configured: Configured) -> None:
    assert api.post(CRDS, json=SCALERS_CRD).status_code == 201
    try:
        scalers = f"/apis/scale.example.com/v1/namespaces/{ns}/scalers"
        body = {"apiVersion": "scale.example.com/v1", "kind": "Scaler", "metadata": {"name": "s1"}}
        made = eventually(lambda: api.post(scalers, json={**body, "spec": {"replicas": 1}}).status_code == 201)
        assert made, "the custom resource was not served"
        hooks.handlers["/scaler-plus-one"] = lambda request: replicas_to(request["object"]["spec"]["replicas"] + 1)
        hooks.handlers["/scaler-seen"] = hooks.handlers["/scaler-v2"] = allow
        rule = {
            "operations": ["UPDATE"],
            "apiGroups": ["scale.example.com"],
            "apiVersions": ["v1"],
            "resources": ["scalers/scale"],
        }
        configured.add(MUTATING, webhook("plus-one.scalers.example.com", "/scaler-plus-one", hooks, rules=[rule]))
        configured.add(VALIDATING, webhook("seen.scalers.example.com", "/scaler-seen", hooks, rules=[rule]))
        v2_rule = {**rule, "apiVersions": ["v2"]}
        equivalent = webhook("v2.scalers.example.com", "/scaler-v2", hooks, rules=[v2_rule], matchPolicy="Equivalent")
        configured.add(VALIDATING, equivalent)
        patched = api.patch(f"{scalers}/s1/scale", json={"spec": {"replicas": 2}}, headers=MERGE)
        assert patched.status_code == 200, patched.text
        assert patched.json()["spec"] == {"replicas": 3}
        assert api.get(f"{scalers}/s1").json()["spec"]["replicas"] == 3
        for path in ("/scaler-plus-one", "/scaler-seen"):
            request = reviewed(hooks, path, "s1")
            assert request["kind"] == request["requestKind"] == SCALE_KIND
            assert request["resource"] == {"group": "scale.example.com", "version": "v1", "resource": "scalers"}
            assert request["subResource"] == "scale"
            assert (request["object"]["kind"], request["oldObject"]["spec"]) == ("Scale", {"replicas": 1})
        assert reviewed(hooks, "/scaler-seen", "s1")["object"]["spec"] == {"replicas": 3}
        # matchPolicy Equivalent: called for v2's scalers/scale, whose kind is the same Scale
        request = reviewed(hooks, "/scaler-v2", "s1")
        assert request["resource"] == {"group": "scale.example.com", "version": "v2", "resource": "scalers"}
        assert request["requestResource"] == {"group": "scale.example.com", "version": "v1", "resource": "scalers"}
        assert request["kind"] == request["requestKind"] == SCALE_KIND
        assert (request["object"]["kind"], request["object"]["spec"]) == ("Scale", {"replicas": 3})
    finally:
        api.delete(f"{CRDS}/scalers.scale.example.com")
