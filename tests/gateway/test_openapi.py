"""OpenAPI v2 and v3 as kube-apiserver 1.32 serves them: documents, caching headers, and kubectl.

kubectl 1.32's default ``--validate=strict`` reads the v3 document of the object's group version
to learn whether the server validates fields itself (a ``fieldValidation`` parameter on the
kind's PATCH operation); ``kubectl explain`` reads the schemas, and ``--output=plaintext-openapiv2``
the v2 document in gnostic protobuf.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import httpx
import orjson
import pytest
import yaml

import protokube.gen.gnostic.openapiv2.OpenAPIv2_pb2 as openapi_v2
from protokube.gateway.openapi.service import OpenAPIService
from protokube.schema import descriptors
from protokube.schema.registry import GroupVersionKind, build

from .helpers import Kubectl, deployment

V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
HASH = re.compile(r"^[0-9A-F]{128}$")
SCHEMAS = "#/components/schemas/"


@pytest.fixture(scope="module")
def index(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/openapi/v3")
    assert response.status_code == 200, response.text
    return response.json()["paths"]


@pytest.fixture(scope="module")
def apps(client: httpx.Client, index: dict[str, Any]) -> dict[str, Any]:
    response = client.get(index["apis/apps/v1"]["serverRelativeURL"])
    assert response.status_code == 200
    return response.json()


@pytest.fixture(scope="module")
def core(client: httpx.Client, index: dict[str, Any]) -> dict[str, Any]:
    return client.get(index["api/v1"]["serverRelativeURL"]).json()


def test_index_names_every_group_version_and_discovery_document(index: dict[str, Any]) -> None:
    for name in ("api", "apis", "api/v1", "apis/apps", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1"):
        url = index[name]["serverRelativeURL"]
        path, _, query = url.partition("?hash=")
        assert path == "/openapi/v3/" + name
        assert HASH.match(query), url


def test_document_with_its_hash_is_immutable_and_revalidates_by_etag(
    client: httpx.Client, index: dict[str, Any]
) -> None:
    url = index["apis/apps/v1"]["serverRelativeURL"]
    etag = '"' + url.partition("?hash=")[2] + '"'
    pinned = client.get(url)
    assert pinned.status_code == 200
    assert pinned.headers["Content-Type"] == "application/json"
    assert pinned.headers["Cache-Control"] == "public, immutable"
    assert pinned.headers["Etag"] == etag
    assert "Expires" in pinned.headers
    assert "Accept" in pinned.headers["Vary"]

    unpinned = client.get("/openapi/v3/apis/apps/v1")
    assert unpinned.headers["Cache-Control"] == "no-cache, private"
    assert unpinned.headers["Etag"] == etag
    assert unpinned.content == pinned.content

    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    # As Go's: no Content-Type, and no Content-Length (a cache would take 0 for the document's)
    assert "Content-Type" not in again.headers and "Content-Length" not in again.headers
    assert again.headers["Etag"] == etag and "Last-Modified" not in again.headers
    assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200


def test_stale_hash_redirects_to_the_current_one(client: httpx.Client, index: dict[str, Any]) -> None:
    response = client.get("/openapi/v3/apis/apps/v1?hash=0123ABCD")
    assert response.status_code == 301
    assert response.headers["Location"] == index["apis/apps/v1"]["serverRelativeURL"]


def test_v3_answers_json_only(client: httpx.Client) -> None:
    assert client.get("/openapi/v3/api/v1", headers={"Accept": "text/html"}).status_code == 406
    response = client.get("/openapi/v3/api/v1", headers={"Accept": "*/*"})
    assert response.status_code == 200
    assert response.json()["openapi"] == "3.0.0"


def _schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    return document["components"]["schemas"][name]


def test_deployment_definition_as_upstream(apps: dict[str, Any]) -> None:
    schema = _schema(apps, "io.k8s.api.apps.v1.Deployment")
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert schema["description"] == "Deployment enables declarative updates for Pods and ReplicaSets."
    assert schema["type"] == "object"
    assert schema["properties"]["apiVersion"]["description"].startswith("APIVersion defines the versioned schema")
    assert schema["properties"]["spec"] == {
        "allOf": [{"$ref": SCHEMAS + "io.k8s.api.apps.v1.DeploymentSpec"}],
        "default": {},
        "description": "Specification of the desired behavior of the Deployment.",
    }
    spec = _schema(apps, "io.k8s.api.apps.v1.DeploymentSpec")
    assert spec["required"] == ["selector", "template"]
    assert spec["properties"]["replicas"]["format"] == "int32"
    strategy = _schema(apps, "io.k8s.api.apps.v1.RollingUpdateDeployment")["properties"]["maxSurge"]
    assert strategy["allOf"] == [{"$ref": SCHEMAS + "io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]
    int_or_string = _schema(apps, "io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    assert int_or_string["format"] == "int-or-string"
    assert int_or_string["oneOf"] == [{"type": "integer"}, {"type": "string"}]


def test_pod_definition_as_upstream(core: dict[str, Any]) -> None:
    pod = _schema(core, "io.k8s.api.core.v1.Pod")
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    containers = _schema(core, "io.k8s.api.core.v1.PodSpec")["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["items"] == {"allOf": [{"$ref": SCHEMAS + "io.k8s.api.core.v1.Container"}], "default": {}}
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["description"].startswith("List of containers belonging to the pod.")
    port = _schema(core, "io.k8s.api.core.v1.ContainerPort")
    assert port["required"] == ["containerPort"]
    assert port["properties"]["protocol"]["default"] == "TCP"
    assert port["properties"]["protocol"]["enum"] == ["SCTP", "TCP", "UDP"]
    assert port["properties"]["containerPort"] == {
        "default": 0,
        "description": "Number of port to expose on the pod's IP address. This must be a valid port number, "
        "0 < x < 65536.",
        "format": "int32",
        "type": "integer",
    }
    quantity = _schema(core, "io.k8s.apimachinery.pkg.api.resource.Quantity")
    assert quantity["oneOf"] == [{"type": "string"}, {"type": "number"}]
    secret_data = _schema(core, "io.k8s.api.core.v1.Secret")["properties"]["data"]
    assert secret_data["additionalProperties"] == {"format": "byte", "type": "string"}


def test_object_meta_definition_as_upstream(core: dict[str, Any]) -> None:
    meta = _schema(core, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    assert "x-kubernetes-group-version-kind" not in meta
    props = meta["properties"]
    assert props["labels"]["additionalProperties"] == {"default": "", "type": "string"}
    assert props["finalizers"]["x-kubernetes-list-type"] == "set"
    assert props["finalizers"]["x-kubernetes-patch-strategy"] == "merge"
    assert props["ownerReferences"]["x-kubernetes-list-map-keys"] == ["uid"]
    assert props["creationTimestamp"]["allOf"] == [{"$ref": SCHEMAS + "io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]
    assert "default" not in props["creationTimestamp"]
    assert props["generation"]["format"] == "int64"
    time = _schema(core, "io.k8s.apimachinery.pkg.apis.meta.v1.Time")
    assert (time["type"], time["format"]) == ("string", "date-time")
    selector = _schema(core, "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")
    assert selector["x-kubernetes-map-type"] == "atomic"


def _params(operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in operation.get("parameters", [])}


def test_operations_named_and_described_as_upstream(apps: dict[str, Any], core: dict[str, Any]) -> None:
    item = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert [p["name"] for p in item["parameters"]] == ["name", "namespace", "pretty"]
    patch = item["patch"]
    assert patch["operationId"] == "patchAppsV1NamespacedDeployment"
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert list(_params(patch)) == ["dryRun", "fieldManager", "fieldValidation", "force"]
    assert _params(patch)["force"]["schema"] == {"type": "boolean", "uniqueItems": True}
    assert "application/apply-patch+yaml" in patch["requestBody"]["content"]
    assert patch["tags"] == ["apps_v1"]
    assert set(patch["responses"]) == {"200", "201", "401"}

    collection = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]
    assert collection["get"]["operationId"] == "listAppsV1NamespacedDeployment"
    assert collection["get"]["description"] == "list or watch objects of kind Deployment"
    assert {"watch", "labelSelector", "sendInitialEvents", "timeoutSeconds"} <= set(_params(collection["get"]))
    assert collection["delete"]["operationId"] == "deleteAppsV1CollectionNamespacedDeployment"
    assert "watch" not in _params(collection["delete"])
    assert {"gracePeriodSeconds", "propagationPolicy", "labelSelector"} <= set(_params(collection["delete"]))
    assert collection["post"]["description"] == "create a Deployment"

    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert scale["operationId"] == "patchAppsV1NamespacedDeploymentScale"
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    everywhere = apps["paths"]["/apis/apps/v1/deployments"]["get"]
    assert everywhere["operationId"] == "listAppsV1DeploymentForAllNamespaces"
    watch = apps["paths"]["/apis/apps/v1/watch/namespaces/{namespace}/deployments"]["get"]
    assert watch["operationId"] == "watchAppsV1NamespacedDeploymentList"
    assert watch["x-kubernetes-action"] == "watchlist"

    pods = core["paths"]["/api/v1/namespaces/{namespace}/pods"]["get"]
    assert pods["operationId"] == "listCoreV1NamespacedPod"
    assert core["paths"]["/api/v1/namespaces/{name}/finalize"]["put"]["operationId"] == "replaceCoreV1NamespaceFinalize"
    assert core["paths"]["/api/v1/"]["get"]["operationId"] == "getCoreV1APIResources"


def test_v2_in_json_and_gnostic_protobuf(client: httpx.Client) -> None:
    as_json = client.get("/openapi/v2")
    assert as_json.status_code == 200
    swagger = as_json.json()
    pod = swagger["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["properties"]["spec"] == {
        "$ref": "#/definitions/io.k8s.api.core.v1.PodSpec",
        "description": pod["properties"]["spec"]["description"],
    }
    port = swagger["definitions"]["io.k8s.api.core.v1.ContainerPort"]["properties"]["protocol"]
    assert "default" not in port  # kube-apiserver prunes defaults from v2

    as_protobuf = client.get("/openapi/v2", headers={"Accept": V2_PROTOBUF})
    assert as_protobuf.status_code == 200
    assert as_protobuf.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert as_protobuf.headers["Etag"] == as_json.headers["Etag"]
    document = openapi_v2.Document.FromString(as_protobuf.content)
    assert document.swagger == "2.0"
    definitions = {d.name: d.value for d in document.definitions.additional_properties}
    deployment_def = definitions["io.k8s.api.apps.v1.Deployment"]
    gvk = {e.name: yaml.safe_load(e.value.yaml) for e in deployment_def.vendor_extension}
    assert gvk["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert len(document.paths.path) == len(swagger["paths"])

    etag = as_json.headers["Etag"]
    assert client.get("/openapi/v2", headers={"If-None-Match": etag}).status_code == 304
    assert client.get("/openapi/v2", headers={"Accept": "text/plain"}).status_code == 406


def test_documents_follow_the_registry() -> None:
    """A change of the registry drops every built document; the next request sees the new state."""
    registry = build(descriptors.all_messages())
    service = OpenAPIService(registry)
    before = service.v3_index()
    deployments = service.v3("apis/apps/v1")
    assert deployments is not None
    assert service.v3("apis/apps/v1") is deployments  # built once

    registry.remove("apps", "v1", "deployments")
    after = service.v3("apis/apps/v1")
    assert after is not None and after.etag != deployments.etag
    assert b"/apis/apps/v1/namespaces/{namespace}/deployments" not in after.body
    assert service.v3_index().etag != before.etag


def test_a_kind_without_a_compiled_message_is_described_as_a_custom_resource() -> None:
    registry = build(descriptors.all_messages())
    service = OpenAPIService(registry)
    assert service.v3("apis/example.com/v1") is None
    configmaps = registry.resource("", "v1", "configmaps")
    assert configmaps is not None
    widgets = dataclasses.replace(
        configmaps,
        gvk=GroupVersionKind("example.com", "v1", "Widget"),
        plural="widgets",
        singular="widget",
        message="",
        list_message="",
    )
    registry.add(widgets)
    served = service.v3("apis/example.com/v1")
    assert served is not None
    document = orjson.loads(served.body)
    widget = _schema(document, "com.example.v1.Widget")
    assert widget["x-kubernetes-preserve-unknown-fields"] is True
    assert widget["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    assert _schema(document, "com.example.v1.WidgetList")["properties"]["items"]["items"] == {
        "$ref": SCHEMAS + "com.example.v1.Widget"
    }
    patch = document["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"]
    assert patch["operationId"] == "patchExampleComV1NamespacedWidget"
    assert "fieldValidation" in _params(patch)
    assert list(patch["responses"]["200"]["content"]) == ["application/json", "application/yaml"]


def test_kubectl_apply_with_default_validation(kubectl: Kubectl, namespace: str) -> None:
    manifest = yaml.safe_dump(deployment("validated"))
    result = kubectl.run("apply", "-n", namespace, "-f", "-", stdin=manifest)
    assert "deployment.apps/validated created" in result.stdout

    typo = deployment("typo")
    typo["spec"]["replicass"] = typo["spec"].pop("replicas")
    failed = kubectl.run("apply", "-n", namespace, "-f", "-", stdin=yaml.safe_dump(typo), check=False)
    assert failed.returncode == 1
    assert 'strict decoding error: unknown field "spec.replicass"' in failed.stderr


def test_kubectl_explain(kubectl: Kubectl) -> None:
    containers = kubectl.run("explain", "pod.spec.containers").stdout
    assert "FIELD: containers <[]Container>" in containers
    assert "List of containers belonging to the pod." in containers
    assert "imagePullPolicy\t<string>" in containers

    recursive = kubectl.run("explain", "deployment", "--recursive").stdout
    assert "Deployment enables declarative updates for Pods and ReplicaSets." in recursive
    assert re.search(r"^\s+maxSurge\t<IntOrString>$", recursive, re.M), recursive

    from_v2 = kubectl.run("explain", "deployment.spec.strategy", "--output=plaintext-openapiv2").stdout
    assert "The deployment strategy to use to replace existing pods with new ones." in from_v2
