"""A tiny kopf operator: for each Greeting (examples.protokube.dev/v1) it makes a ConfigMap holding
the greeting's text, owned by the Greeting, and records the ConfigMap's name in the Greeting's
status. Run it against any cluster with `kopf run greeting_operator.py` (KUBECONFIG names the
cluster); test_kopf_operator.py runs it against the pytest plugin's server."""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "examples.protokube.dev", "v1", "greetings"


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """The cluster of the kubeconfig KUBECONFIG names, read when the operator starts."""
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False  # no Events for each handler run: the test reads objects, not Events


@kopf.on.create(GROUP, VERSION, PLURAL)
def make_configmap(spec: kopf.Spec, name: str, namespace: str, patch: kopf.Patch, **_: Any) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-greeting"},
        "data": {"text": f"Hello, {spec['to']}!"},
    }
    kopf.adopt(configmap)  # the Greeting's namespace and an ownerReference to it
    api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(os.environ.get("KUBECONFIG")))
    api.create_namespaced_config_map(namespace, configmap)
    patch.status["configMap"] = configmap["metadata"]["name"]


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "singular": "greeting", "kind": "Greeting"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}
