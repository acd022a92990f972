"""Admission's cost on writes (issue 32): ConfigMap creates/s through the gateway with no admission
policy, with one ValidatingAdmissionPolicy whose binding takes every create (two CEL validations on
the object), and with one validating webhook taking every create (an HTTPS server on loopback in
this process: tests/gateway/webhookserver.py), measured in alternating rounds of the same run, each
keeping its best. The goal: a create with one policy costs at most 1.3x one without (time per
create at 8 clients); the webhook's cost is reported without a goal.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

from bench.common import Gateway, Row, at_most, best_rounds, fmt_rate, gateway, loadgen, ratio_row, request, wait_for
from tests.gateway.webhookserver import WebhookServer

CLIENTS = 8
GOAL = 1.3
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
POLICY = "bench.admission.example.com"
BINDING = "bench-admission-binding"
PROBE = "bench-probe-denied"  # the one name the policy refuses: how the bench sees it enforced
POLICY_BODY = {
    "metadata": {"name": POLICY},
    "spec": {
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
            ]
        },
        "validations": [
            {"expression": "!has(object.data) || size(object.data) <= 16", "message": "at most 16 keys"},
            {"expression": f"object.metadata.name != '{PROBE}'", "message": "the probe's name"},
        ],
    },
}
BINDING_BODY = {"metadata": {"name": BINDING}, "spec": {"policyName": POLICY, "validationActions": ["Deny"]}}
WEBHOOK = "bench-admission-webhook"
WEBHOOK_PROBE = "bench-probe-hooked"  # the one name the webhook refuses


def configmap_create_webhook(hooks: WebhookServer, configuration: str, webhook: str, path: str) -> dict:
    """A ValidatingWebhookConfiguration of one webhook, served by ``hooks`` at ``path``, taking every
    ConfigMap create."""
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
    hook = {
        "name": webhook,
        "clientConfig": {"url": hooks.url(path), "caBundle": hooks.ca_bundle},
        "rules": [rule],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    return {"metadata": {"name": configuration}, "webhooks": [hook]}


def _refuse_probe(request: dict) -> dict:
    return {"allowed": request["name"] != WEBHOOK_PROBE}


def _post(gw: Gateway, path: str, body: dict) -> int:
    return request(gw, "POST", path, json.dumps(body).encode())[0]


def _refused(gw: Gateway, name: str, code: int) -> bool:
    return _post(gw, "/api/v1/namespaces/default/configmaps?dryRun=All", {"metadata": {"name": name}}) == code


def _enforced(gw: Gateway) -> bool:
    return _refused(gw, PROBE, 422)


def _bind(gw: Gateway, bound: bool) -> None:
    """Create or delete the binding, and wait until admission acts on it."""
    if bound:
        assert _post(gw, f"{ADMISSION}/validatingadmissionpolicybindings", BINDING_BODY) == 201
    else:
        request(gw, "DELETE", f"{ADMISSION}/validatingadmissionpolicybindings/{BINDING}")
    wait_for(lambda: _enforced(gw) == bound, 30, f"the policy to be {'enforced' if bound else 'lifted'}")


def _hook(gw: Gateway, hooks: WebhookServer, hooked: bool) -> None:
    """Create or delete the webhook configuration, and wait until admission acts on it."""
    path = f"{ADMISSION}/validatingwebhookconfigurations"
    if hooked:
        body = configmap_create_webhook(hooks, WEBHOOK, "bench.admission.example.com", "/validate")
        assert _post(gw, path, body) == 201
    else:
        request(gw, "DELETE", f"{path}/{WEBHOOK}")
    wait_for(lambda: _refused(gw, WEBHOOK_PROBE, 400) == hooked, 30, f"the webhook to be {'on' if hooked else 'off'}")


def run(quick: bool) -> dict:
    seconds = 1.5 if quick else 5.0
    rounds = 2 if quick else 3
    loads = itertools.count()
    hooks = WebhookServer().start()
    hooks.handlers["/validate"] = _refuse_probe
    with tempfile.TemporaryDirectory(prefix="bench-admission-") as tmp, gateway(Path(tmp) / "data") as gw:
        assert _post(gw, f"{ADMISSION}/validatingadmissionpolicies", POLICY_BODY) == 201
        base = {"host": gw.host, "port": gw.port, "clients": CLIENTS, "creates_only": True}
        loadgen("writes", {**base, "seconds": 0.5, "tag": "warm"}, 60)

        def measure(target: str) -> dict:
            _bind(gw, target == "policy")
            _hook(gw, hooks, target == "webhook")
            config = {**base, "seconds": seconds, "tag": f"{target}{next(loads)}"}
            return loadgen("writes", config, seconds * 4 + 60)["create"]

        try:
            best = best_rounds(rounds, ["none", "policy", "webhook"], measure)
        finally:
            hooks.stop()
    return {"clients": CLIENTS, "seconds_per_load": seconds, "rounds": rounds, **best}


def rows(results: dict) -> list[Row]:
    none, policy, hooked = (results[target]["per_s"] for target in ("none", "policy", "webhook"))
    errors = sum(results[target]["errors"] for target in ("none", "policy", "webhook"))
    suffix = f", {errors} errors" if errors else ""
    return [
        Row("admission", f"creates/s, no policy, {CLIENTS} clients{suffix}", fmt_rate(none)),
        Row("admission", f"creates/s, one ValidatingAdmissionPolicy, {CLIENTS} clients", fmt_rate(policy)),
        ratio_row(
            "admission",
            "a create's cost with one ValidatingAdmissionPolicy",
            f"{none / policy:.2f}x",
            "a create without",
            none / policy,
            at_most,
            GOAL,
        ),
        Row("admission", f"creates/s, one validating webhook (HTTPS, loopback), {CLIENTS} clients", fmt_rate(hooked)),
        ratio_row(
            "admission",
            "a create's cost with one validating webhook",
            f"{none / hooked:.2f}x",
            "a create without",
            none / hooked,
        ),
    ]
