"""The operator of greeting_operator.py under test: kopf's KopfRunner runs it against the plugin's
``kube_apiserver``, watching the test's ``kube_namespace`` only."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from greeting_operator import CRD, GROUP, PLURAL, VERSION
from kopf.testing import KopfRunner

from protokube.testing import Server

OPERATOR = str(Path(__file__).with_name("greeting_operator.py"))


def eventually(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (answer := check()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return answer


@pytest.fixture(scope="module")
def client(kube_apiserver: Server) -> Iterator[kubernetes.client.ApiClient]:
    """An API client of the server, on which the Greeting CRD is established."""
    api = kubernetes.config.new_client_from_config(str(kube_apiserver.kubeconfig))
    extensions = kubernetes.client.ApiextensionsV1Api(api)
    extensions.create_custom_resource_definition(CRD)

    def established() -> bool:
        conditions = extensions.read_custom_resource_definition(CRD["metadata"]["name"]).status.conditions or []
        return any(c.type == "Established" and c.status == "True" for c in conditions)

    assert eventually(established)
    yield api
    extensions.delete_custom_resource_definition(CRD["metadata"]["name"])


def test_a_greeting_gets_its_configmap_and_status(
    kube_apiserver: Server, kube_namespace: str, client: kubernetes.client.ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kube_apiserver.kubeconfig))  # where kopf and the operator connect
    objects = kubernetes.client.CustomObjectsApi(client)
    core = kubernetes.client.CoreV1Api(client)
    with KopfRunner(["run", "--standalone", "--namespace", kube_namespace, OPERATOR]) as runner:
        greeting = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Greeting", "metadata": {"name": "world"}}
        objects.create_namespaced_custom_object(
            GROUP, VERSION, kube_namespace, PLURAL, greeting | {"spec": {"to": "you"}}
        )

        def status() -> dict:
            return objects.get_namespaced_custom_object(GROUP, VERSION, kube_namespace, PLURAL, "world").get("status")

        assert eventually(lambda: (status() or {}).get("configMap") == "world-greeting"), status()
    assert runner.exception is None and runner.exit_code == 0, runner.output
    configmap = core.read_namespaced_config_map("world-greeting", kube_namespace)
    assert configmap.data == {"text": "Hello, you!"}
    owner = configmap.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("Greeting", "world", True)
