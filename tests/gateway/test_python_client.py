"""The official Kubernetes Python client against a running server."""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from .helpers import GatewayProcess


@pytest.fixture(scope="module")
def core(server: GatewayProcess) -> k8s.CoreV1Api:
    config = k8s.Configuration(host=server.url)
    return k8s.CoreV1Api(k8s.ApiClient(config))


def test_create_read_list_delete(core: k8s.CoreV1Api) -> None:
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="pyclient")))
    body = k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="cfg", labels={"app": "x"}), data={"k": "v"})
    created = core.create_namespaced_config_map("pyclient", body)
    assert created.metadata.uid and created.data == {"k": "v"}
    read = core.read_namespaced_config_map("cfg", "pyclient")
    assert read.metadata.resource_version == created.metadata.resource_version
    listed = core.list_namespaced_config_map("pyclient")
    assert [c.metadata.name for c in listed.items] == ["cfg"]
    status = core.delete_namespaced_config_map("cfg", "pyclient")  # this client version returns a dict
    assert status["status"] == "Success" and status["details"]["name"] == "cfg"


def test_already_exists_as_the_client_sees_it(core: k8s.CoreV1Api) -> None:
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="pyclient-dup")))
    with pytest.raises(ApiException) as raised:
        core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="pyclient-dup")))
    error = raised.value
    assert error.status == 409 and error.reason == "Conflict"
    assert json.loads(error.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'namespaces "pyclient-dup" already exists',
        "reason": "AlreadyExists",
        "details": {"name": "pyclient-dup", "kind": "namespaces"},
        "code": 409,
    }
