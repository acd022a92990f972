"""CustomResourceDefinitions against a running server (Kubernetes API Concepts: custom resources;
apiextensions-apiserver 1.32): kubectl's whole flow, the official Python client, waiting for Established with a watch,
schemas that prune, default and validate, versions, subresources, patches, lifecycle, bad CRDs.

The module has a server of its own: the CRDs it installs would otherwise show in other modules'
discovery and OpenAPI documents."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import httpx
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import dynamic

from .helpers import GatewayProcess, Kubectl, eventually, kubectl_path, namespaced_crd

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRONTABS = "/apis/stable.example.com/v1/namespaces/default/crontabs"

CRONTAB_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "crontabs",
            "singular": "crontab",
            "kind": "CronTab",
            "shortNames": ["ct"],
            "categories": ["all"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "What the cron job runs.",
                                "properties": {
                                    "cronSpec": {
                                        "type": "string",
                                        "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$",
                                    },
                                    "image": {"type": "string"},
                                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"replicas": {"type": "integer"}, "labelSelector": {"type": "string"}},
                            },
                        },
                    }
                },
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.labelSelector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }
        ],
    },
}

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Cluster",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1beta1",
                "served": True,
                "storage": False,
                "deprecated": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            },
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "selectableFields": [{"jsonPath": ".spec.color"}],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "color": {"type": "string", "enum": ["red", "blue"]},
                                    "size": {
                                        "type": "integer",
                                        "x-kubernetes-validations": [{"rule": "self < 100", "message": "too big"}],
                                    },
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                                        },
                                    },
                                },
                            },
                            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                        },
                    }
                },
            },
        ],
    },
}


def condition(crd: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in (crd.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def install(client: httpx.Client, crd: dict[str, Any]) -> dict[str, Any]:
    made = client.post(CRDS, json=crd)
    assert made.status_code == 201, made.text
    name = crd["metadata"]["name"]
    established = eventually(
        lambda: condition(client.get(f"{CRDS}/{name}").json(), "Established").get("status") == "True"
    )
    assert established, client.get(f"{CRDS}/{name}").text
    return client.get(f"{CRDS}/{name}").json()


def uninstall(client: httpx.Client, name: str) -> None:
    client.delete(f"{CRDS}/{name}")
    assert eventually(lambda: client.get(f"{CRDS}/{name}").status_code == 404)


@pytest.fixture(scope="module")
def crd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    gate = ("--feature-gates", "CBORServingAndStorage=true")  # custom objects in CBOR too (Kubernetes API Concepts)
    process = GatewayProcess(tmp_path_factory.mktemp("crd-gateway"), *gate).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def api(crd_server: GatewayProcess) -> Iterator[httpx.Client]:
    with crd_server.client() as c:
        yield c


@pytest.fixture(scope="module")
def crontabs(api: httpx.Client) -> dict[str, Any]:
    return install(api, CRONTAB_CRD)


@pytest.fixture(scope="module")
def widgets(api: httpx.Client) -> dict[str, Any]:
    return install(api, WIDGET_CRD)


@pytest.fixture(scope="module")
def kubectl(crd_server: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed")
    return Kubectl(crd_server.url, Path(tmp_path_factory.mktemp("kubectl-crd")))


def test_conditions_and_accepted_names(crontabs: dict[str, Any]) -> None:
    status = crontabs["status"]
    assert status["acceptedNames"] == {
        "plural": "crontabs",
        "singular": "crontab",
        "shortNames": ["ct"],
        "kind": "CronTab",
        "listKind": "CronTabList",
        "categories": ["all"],
    }
    assert status["storedVersions"] == ["v1"]
    names = condition(crontabs, "NamesAccepted")
    assert (names["status"], names["reason"], names["message"]) == ("True", "NoConflicts", "no conflicts found")
    established = condition(crontabs, "Established")
    assert (established["status"], established["reason"]) == ("True", "InitialNamesAccepted")
    assert "finalizers" not in crontabs["metadata"]  # added by the first delete, as upstream's


def test_kubectl_flow(kubectl: Kubectl, api: httpx.Client, crontabs: dict[str, Any], tmp_path: Path) -> None:
    """The CronTab walk-through of the CustomResourceDefinition documentation with kubectl: apply,
    wait, get with columns, explain, unknown fields under each validation level, status, scale, and
    deletion of the CRD. It starts from the module's CronTab CRD (``crontabs``, which apply updates)
    and installs it again at the end, so the tests around it find it in any order."""
    crd = dict(CRONTAB_CRD, metadata={"name": "crontabs.stable.example.com"})
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(crd))
    kubectl.run("apply", "-f", str(tmp_path / "crd.yaml"))
    kubectl.run("wait", "--for", "condition=established", "--timeout=20s", "crd/crontabs.stable.example.com")
    cron = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "extra": 1},
    }
    (tmp_path / "ct.yaml").write_text(yaml.safe_dump(cron))
    strict = kubectl.run("apply", "-f", str(tmp_path / "ct.yaml"), check=False)
    assert strict.returncode != 0
    assert (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"'
        in strict.stderr
    )
    warned = kubectl.run("apply", "--validate=warn", "-f", str(tmp_path / "ct.yaml"))
    assert 'Warning: unknown field "spec.extra"' in warned.stderr
    stored = api.get(f"{CRONTABS}/my-new-cron-object").json()
    assert stored["spec"] == {
        "cronSpec": "* * * * */5",
        "image": "my-awesome-cron-image",
        "replicas": 1,
    }  # pruned, defaulted
    kubectl.run("delete", "ct", "my-new-cron-object")
    ignored = kubectl.run("apply", "--validate=false", "-f", str(tmp_path / "ct.yaml"))
    assert "Warning" not in ignored.stderr

    table = kubectl.run("get", "crontabs").stdout.splitlines()
    assert table[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert table[1].split()[:6] == ["my-new-cron-object", "*", "*", "*", "*", "*/5"]
    assert table[1].split()[6] == "1" and table[1].split()[7].endswith("s")
    assert "crontab.stable.example.com/my-new-cron-object" in kubectl.run("get", "all").stdout
    assert "my-new-cron-object" in kubectl.run("get", "ct").stdout
    explained = kubectl.run("explain", "crontab.spec").stdout
    assert "What the cron job runs." in explained and "cronSpec\t<string>" in explained

    kubectl.run("scale", "crontab", "my-new-cron-object", "--replicas=3")
    assert api.get(f"{CRONTABS}/my-new-cron-object").json()["spec"]["replicas"] == 3
    scale = api.get(f"{CRONTABS}/my-new-cron-object/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"] == {"replicas": 3}
    kubectl.run(
        "patch", "crontab", "my-new-cron-object", "--subresource=status", "--type=merge",
        "-p", '{"status":{"replicas":3,"labelSelector":"app=cron"}}',
    )  # fmt: skip
    scale = api.get(f"{CRONTABS}/my-new-cron-object/scale").json()
    assert scale["status"] == {"replicas": 3, "selector": "app=cron"}
    scaled = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "my-new-cron-object"}}
    applied = api.patch(
        f"{CRONTABS}/my-new-cron-object/scale",
        content=json.dumps({**scaled, "spec": {"replicas": 4}}),
        headers={"Content-Type": "application/apply-patch+yaml"},
        params={"fieldManager": "autoscaler", "force": "true"},
    )
    assert applied.status_code == 200 and applied.json()["spec"]["replicas"] == 4  # specReplicasPath
    assert api.get(f"{CRONTABS}/my-new-cron-object").json()["spec"]["replicas"] == 4

    kubectl.run("delete", "crd", "crontabs.stable.example.com", timeout=60)
    assert api.get("/apis/stable.example.com/v1").status_code == 404
    install(api, CRONTAB_CRD)  # the objects went with it: a new CRD of the same name finds none
    assert api.get(CRONTABS).json()["items"] == []


def test_python_client(crd_server: GatewayProcess, crontabs: dict[str, Any]) -> None:
    api_client = k8s.ApiClient(k8s.Configuration(host=crd_server.url))
    custom = k8s.CustomObjectsApi(api_client)
    body = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "py"},
        "spec": {"image": "x"},
    }
    created = custom.create_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs", body)
    assert created["spec"] == {"image": "x", "replicas": 1}
    listed = custom.list_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs")
    assert "py" in [item["metadata"]["name"] for item in listed["items"]]
    patched = custom.patch_namespaced_custom_object(
        "stable.example.com", "v1", "default", "crontabs", "py", {"spec": {"replicas": 2}}
    )
    assert patched["spec"]["replicas"] == 2
    resources = dynamic.DynamicClient(api_client).resources.get(api_version="stable.example.com/v1", kind="CronTab")
    assert resources.get(name="py", namespace="default").spec.replicas == 2
    resources.delete(name="py", namespace="default")
    assert custom.list_namespaced_custom_object("stable.example.com", "v1", "default", "crontabs")["items"] == []


def test_watch_until_established(api: httpx.Client, crd_server: GatewayProcess) -> None:
    """How clients wait: a watch on the CRD by name, without a resourceVersion."""
    crd = json.loads(json.dumps(CRONTAB_CRD).replace("crontab", "gadget").replace("CronTab", "Gadget"))
    crd["spec"]["names"]["shortNames"], crd["spec"]["names"]["categories"] = ["gd"], []
    name = crd["metadata"]["name"]
    seen: list[str] = []
    watching = threading.Event()

    def watch() -> None:
        params = {"watch": "true", "fieldSelector": f"metadata.name={name}", "timeoutSeconds": "15"}
        with crd_server.client() as watcher, watcher.stream("GET", CRDS, params=params) as stream:
            watching.set()  # the server has answered: the watch is registered
            for line in stream.iter_lines():
                event = json.loads(line)
                seen.append(f"{event['type']}:{condition(event['object'], 'Established').get('status', '-')}")
                if seen[-1].endswith("True"):
                    return

    thread = threading.Thread(target=watch)
    thread.start()
    assert watching.wait(20), "the watch was not answered"
    assert api.post(CRDS, json=crd).status_code == 201
    thread.join(20)
    assert seen[0] == "ADDED:-" and seen[-1] == "MODIFIED:True", seen
    assert api.get("/apis/stable.example.com/v1/namespaces/default/gadgets").status_code == 200
    uninstall(api, name)


def test_schema_prunes_defaults_and_validates(api: httpx.Client, crontabs: dict[str, Any]) -> None:
    bad = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "bad"},
        "spec": {"cronSpec": "nope", "replicas": 0, "image": 7},
    }
    answer = api.post(CRONTABS, json=bad)
    assert answer.status_code == 422
    status = answer.json()
    assert status["reason"] == "Invalid" and status["details"]["kind"] == "CronTab"
    assert sorted(c["message"] for c in status["details"]["causes"]) == sorted(
        [
            'Invalid value: "nope": spec.cronSpec in body should match '
            "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
            'Invalid value: "integer": spec.image in body must be of type string: "integer"',
            "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
        ]
    )
    assert api.get(f"{CRONTABS}/bad").status_code == 404  # nothing stored
    unknown = dict(bad, metadata={"name": "good"}, spec={"image": "x", "junk": 1}, extra=True)
    strict = api.post(CRONTABS, params={"fieldValidation": "Strict"}, json=unknown)
    assert strict.status_code == 400
    assert strict.json()["message"] == (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: '
        'unknown field "extra", unknown field "spec.junk"'
    )
    warned = api.post(CRONTABS, json=unknown)
    assert warned.status_code == 201
    assert warned.headers.get_list("warning") == [
        '299 - "unknown field \\"extra\\""',
        '299 - "unknown field \\"spec.junk\\""',
    ]
    assert warned.json()["spec"] == {"image": "x", "replicas": 1} and "extra" not in warned.json()
    # protobuf: 406 unless JSON is acceptable too (Kubernetes API Concepts)
    assert api.get(f"{CRONTABS}/good", headers={"Accept": "application/vnd.kubernetes.protobuf"}).status_code == 406
    both = api.get(f"{CRONTABS}/good", headers={"Accept": "application/vnd.kubernetes.protobuf, application/json"})
    assert both.status_code == 200 and both.headers["content-type"] == "application/json"
    as_cbor = api.get(f"{CRONTABS}/good", headers={"Accept": "application/cbor"})
    assert as_cbor.status_code == 200 and as_cbor.headers["content-type"] == "application/cbor"
    assert cbor2.loads(as_cbor.content)[b"spec"] == {b"image": b"x", b"replicas": 1}  # strings as byte strings
    posted = api.post(
        CRONTABS,
        content=cbor2.dumps({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "c"}}),
        headers={"Content-Type": "application/cbor"},
    )
    assert posted.status_code == 201, posted.text
    assert posted.json()["metadata"]["name"] == "c" and "spec" not in posted.json()
    api.delete(f"{CRONTABS}/c")
    api.delete(f"{CRONTABS}/good")


def test_embedded_resources_are_validated_as_objects(api: httpx.Client) -> None:
    """x-kubernetes-embedded-resource: apiVersion and kind required and well-formed, metadata as
    ObjectMeta (apiextensions-apiserver's validateEmbeddedResource)."""
    crd = copy.deepcopy(CRONTAB_CRD)
    crd["metadata"]["name"] = "podsets.embedded.example.com"
    crd["spec"] |= {
        "group": "embedded.example.com",
        "names": {"plural": "podsets", "singular": "podset", "kind": "PodSet"},
        "scope": "Cluster",
    }
    (version,) = crd["spec"]["versions"] = [copy.deepcopy(crd["spec"]["versions"][0])]
    version.pop("subresources", None)
    version.pop("additionalPrinterColumns", None)
    template = {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}
    version["schema"]["openAPIV3Schema"]["properties"]["spec"] = {
        "type": "object",
        "properties": {"template": template},
    }
    install(api, crd)
    podsets = "/apis/embedded.example.com/v1/podsets"

    def create(name: str, embedded: dict[str, Any]) -> httpx.Response:
        body = {"apiVersion": "embedded.example.com/v1", "kind": "PodSet", "metadata": {"name": name}}
        return api.post(podsets, json={**body, "spec": {"template": embedded}})

    bad = create(
        "bad",
        {
            "apiVersion": "a/b/c",
            "kind": "Not_A_Kind",
            "metadata": {"name": "x/y", "labels": {"bad key!": "v"}, "namespace": "Upper"},
        },
    )
    assert bad.status_code == 422, bad.text
    causes = [(c["field"], c["message"]) for c in bad.json()["details"]["causes"]]
    fields = [field for field, _ in causes]
    assert fields[:2] == ["spec.template.apiVersion", "spec.template.kind"]
    assert causes[0][1] == 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'
    assert causes[1][1].startswith('Invalid value: "Not_A_Kind": may have mixed case, but should otherwise match: ')
    assert "spec.template.metadata.name" in fields and "spec.template.metadata.namespace" in fields
    assert "spec.template.metadata.labels" in fields
    assert dict(causes)["spec.template.metadata.name"] == "Invalid value: \"x/y\": may not contain '/'"
    missing = create("missing", {"metadata": {}})
    assert missing.status_code == 422
    assert [(c["field"], c["message"]) for c in missing.json()["details"]["causes"]] == [
        ("spec.template.apiVersion", "Required value: must not be empty"),
        ("spec.template.kind", "Required value: must not be empty"),
    ]
    not_meta = create("notmeta", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n", "annotations": 5}})
    assert [c["message"] for c in not_meta.json()["details"]["causes"]] == [
        'Invalid value: map[string]interface {}{"annotations":5, "name":"n"}: '
        "json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string"
    ]
    good = create("good", {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "x"}}})
    assert good.status_code == 201, good.text  # a name is not required
    uninstall(api, "podsets.embedded.example.com")


def test_transition_rules_of_map_list_items_see_the_old_item_with_their_keys(api: httpx.Client) -> None:
    crd = copy.deepcopy(CRONTAB_CRD)
    crd["metadata"]["name"] = "disksets.lists.example.com"
    crd["spec"] |= {"group": "lists.example.com", "names": {"plural": "disksets", "kind": "DiskSet"}}
    (version,) = crd["spec"]["versions"] = [copy.deepcopy(crd["spec"]["versions"][0])]
    version.pop("subresources", None)
    version.pop("additionalPrinterColumns", None)
    disk = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
        "required": ["name"],
        "x-kubernetes-validations": [{"rule": "self.size == oldSelf.size", "message": "size is immutable"}],
    }
    disks = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": disk}
    version["schema"]["openAPIV3Schema"]["properties"]["spec"] = {"type": "object", "properties": {"disks": disks}}
    install(api, crd)
    path = "/apis/lists.example.com/v1/namespaces/default/disksets"
    body = {"apiVersion": "lists.example.com/v1", "kind": "DiskSet", "metadata": {"name": "d"}}
    created = api.post(path, json={**body, "spec": {"disks": [{"name": "a", "size": 1}, {"name": "b", "size": 2}]}})
    assert created.status_code == 201, created.text

    def put(items: list[dict[str, Any]]) -> httpx.Response:
        return api.put(f"{path}/d", json={**body, "spec": {"disks": items}})

    reordered = put([{"name": "b", "size": 2}, {"name": "a", "size": 1}, {"name": "c", "size": 9}])
    assert reordered.status_code == 200, reordered.text  # matched by name, not index; "c" is new
    changed = put([{"name": "b", "size": 3}])
    assert changed.status_code == 422
    assert [(c["field"], c["message"]) for c in changed.json()["details"]["causes"]] == [
        ("spec.disks[0]", 'Invalid value: "object": size is immutable')
    ]
    uninstall(api, "disksets.lists.example.com")


def test_versions_patches_and_apply(api: httpx.Client, widgets: dict[str, Any]) -> None:
    base = "/apis/example.com/v1/widgets"
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"color": "red", "size": 3, "ports": [{"name": "a", "port": 1}]},
        "status": {"ready": True},
    }
    created = api.post(base, json=widget)
    assert created.status_code == 201 and "status" not in created.json()  # status has its own endpoint
    assert created.json()["metadata"]["generation"] == 1

    old = api.get("/apis/example.com/v1beta1/widgets/w1")  # conversion None: only apiVersion differs
    assert old.json()["apiVersion"] == "example.com/v1beta1" and old.json()["spec"]["color"] == "red"
    assert old.headers["warning"] == '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"'

    invalid = api.post(
        base,
        json=dict(
            widget,
            metadata={"name": "w2"},
            spec={"color": "green", "size": 300, "ports": [{"name": "a"}, {"name": "a"}]},
        ),
    )
    assert invalid.status_code == 422
    assert [f"{c['field']}: {c['message']}" for c in invalid.json()["details"]["causes"]] == [
        'spec.color: Unsupported value: "green": supported values: "red", "blue"',
        'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}',
        # an unsupported value keeps the CEL rules from running (upstream's hasBlockingErr)
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
        "correct the existing errors to complete validation",
    ]
    spec = {"color": "red", "size": 300, "ports": [{"name": "a"}, {"name": "a"}]}
    invalid = api.post(base, json=dict(widget, metadata={"name": "w2"}, spec=spec))
    assert [f"{c['field']}: {c['message']}" for c in invalid.json()["details"]["causes"]] == [
        'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}',  # not blocking: the rules run
        'spec.size: Invalid value: "integer": too big',
    ]

    smp = api.patch(
        f"{base}/w1", content=b'{"spec":{"size":4}}', headers={"Content-Type": "application/strategic-merge-patch+json"}
    )
    assert smp.status_code == 415
    assert smp.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
        "application/apply-patch+cbor"  # the CBOR feature gate is on for this module's server
    )
    merged = api.patch(
        f"{base}/w1", content=b'{"spec":{"size":4}}', headers={"Content-Type": "application/merge-patch+json"}
    )
    assert merged.json()["spec"]["size"] == 4 and merged.json()["metadata"]["generation"] == 2
    patched = api.patch(
        f"{base}/w1",
        content=b'[{"op":"replace","path":"/spec/color","value":"blue"}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert patched.json()["spec"]["color"] == "blue"
    applied = api.patch(
        f"{base}/w1",
        params={"fieldManager": "tool", "force": "true"},
        content=json.dumps(
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w1"},
                "spec": {"ports": [{"name": "b", "port": 2}]},
            }
        ).encode(),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 200, applied.text
    assert applied.json()["spec"]["ports"] == [{"name": "a", "port": 1}, {"name": "b", "port": 2}]  # a list map merges
    assert "tool" in [m["manager"] for m in applied.json()["metadata"]["managedFields"]]

    status = dict(applied.json(), status={"ready": True})
    written = api.put(f"{base}/w1/status", json=status)
    generation = applied.json()["metadata"]["generation"]
    assert written.json()["status"] == {"ready": True} and written.json()["metadata"]["generation"] == generation
    assert api.get(base, params={"fieldSelector": "spec.color=blue"}).json()["items"][0]["metadata"]["name"] == "w1"
    assert api.get(base, params={"fieldSelector": "spec.color=red"}).json()["items"] == []
    openapi = api.get("/openapi/v3/apis/example.com/v1").json()
    schema = openapi["components"]["schemas"]["com.example.v1.Widget"]
    assert schema["properties"]["spec"]["properties"]["color"]["enum"] == ["red", "blue"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "example.com", "kind": "Widget", "version": "v1"}]
    api.delete(f"{base}/w1")


def test_namespaces_and_owners_take_custom_objects_along(api: httpx.Client, crontabs: dict[str, Any]) -> None:
    assert api.post("/api/v1/namespaces", json={"metadata": {"name": "crons"}}).status_code == 201
    path = "/apis/stable.example.com/v1/namespaces/crons/crontabs"
    assert (
        api.post(
            path, json={"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "c"}}
        ).status_code
        == 201
    )
    owner = api.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "owner"}}).json()
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    owned = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "owned", "ownerReferences": [reference]},
    }
    assert api.post(CRONTABS, json=owned).status_code == 201
    api.delete("/api/v1/namespaces/crons")
    api.delete("/api/v1/namespaces/default/configmaps/owner")
    assert eventually(lambda: api.get(f"{path}/c").status_code == 404, 20)
    assert eventually(lambda: api.get(f"{CRONTABS}/owned").status_code == 404, 20)


def test_watchers_of_a_deleted_crd_end_cleanly(api: httpx.Client, crd_server: GatewayProcess) -> None:
    crd = json.loads(json.dumps(WIDGET_CRD).replace("widget", "sprocket").replace("Widget", "Sprocket"))
    install(api, crd)
    base = "/apis/example.com/v1/sprockets"
    assert (
        api.post(base, json={"apiVersion": "example.com/v1", "kind": "Sprocket", "metadata": {"name": "s"}}).status_code
        == 201
    )
    events: list[str] = []
    watching = threading.Event()

    def watch() -> None:
        with (
            crd_server.client() as watcher,
            watcher.stream("GET", base, params={"watch": "true", "timeoutSeconds": "30"}) as stream,
        ):
            watching.set()  # the server has answered: the watch is registered
            events.extend(json.loads(line)["type"] for line in stream.iter_lines())

    thread = threading.Thread(target=watch)
    thread.start()
    assert watching.wait(20), "the watch was not answered"
    started = time.monotonic()
    api.delete(f"{CRDS}/{crd['metadata']['name']}")
    thread.join(20)
    assert not thread.is_alive() and time.monotonic() - started < 15
    assert events[:2] == ["ADDED", "DELETED"], events
    assert eventually(lambda: api.get(f"{CRDS}/{crd['metadata']['name']}").status_code == 404)
    assert api.get("/api/v1/namespaces").status_code == 200  # the rest keeps serving


def _one_version(schema: dict[str, Any], storage: bool = True) -> dict[str, Any]:
    """A CRD change with one version v1 of this schema."""
    version = {"name": "v1", "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}
    return {"spec": {"versions": [version]}}


BAD_CRDS = [
    (
        _one_version({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}),
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: "
        "must not be empty for specified object fields",
    ),
    (
        {"spec": {"conversion": {"strategy": "Webhook"}}},
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
    ),
    (
        {"metadata": {"name": "things.apps"}, "spec": {"group": "apps"}},
        'spec.group: Invalid value: "apps": should be a domain with at least one dot',
    ),
    (
        {"metadata": {"name": "things.rbac.authorization.k8s.io"}, "spec": {"group": "rbac.authorization.k8s.io"}},
        "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval "
        'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ),
    (
        _one_version({"type": "object", "x-kubernetes-validations": [{"rule": "self.x.reverse()"}]}),
        "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: "
        'Invalid value: "self.x.reverse()": compilation failed: ERROR: <input>:1:8: '
        "undeclared reference to 'reverse' (in container '')",
    ),
    (
        _one_version({"type": "object"}, storage=False),
        "spec.versions: Invalid value: [v1]: must have exactly one version marked as storage version",
    ),
]


def _things(change: dict[str, Any]) -> dict[str, Any]:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.org"},
        "spec": {
            "group": "example.org",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
            ],
        },
    }
    crd["metadata"].update(change.get("metadata", {}))
    crd["spec"].update(change.get("spec", {}))
    return crd


@pytest.mark.parametrize(("change", "message"), BAD_CRDS)
def test_bad_crds_are_refused(api: httpx.Client, change: dict[str, Any], message: str) -> None:
    answer = api.post(CRDS, json=_things(change))
    assert answer.status_code == 422, answer.text
    assert message in answer.json()["message"]
    assert answer.json()["message"].startswith(
        f'CustomResourceDefinition.apiextensions.k8s.io "{_things(change)["metadata"]["name"]}" is invalid: '
    )


def test_conflicting_names_are_not_accepted(api: httpx.Client, crontabs: dict[str, Any]) -> None:
    clash = _things(
        {
            "metadata": {"name": "cronjobs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "names": {"plural": "cronjobs", "singular": "cronjob", "kind": "CronTab"},
            },
        }
    )
    assert api.post(CRDS, json=clash).status_code == 201
    names = eventually(lambda: condition(api.get(f"{CRDS}/cronjobs.stable.example.com").json(), "NamesAccepted"))
    assert (names["status"], names["reason"], names["message"]) == (
        "False",
        "KindConflict",
        '"CronTab" is already in use',
    )
    established = condition(api.get(f"{CRDS}/cronjobs.stable.example.com").json(), "Established")
    assert (established["status"], established["reason"]) == ("False", "NotAccepted")
    assert api.get("/apis/stable.example.com/v1/namespaces/default/cronjobs").status_code == 404
    uninstall(api, "cronjobs.stable.example.com")


def test_a_terminating_crd_waits_for_its_objects_and_takes_no_new_ones(api: httpx.Client) -> None:
    crd = json.loads(json.dumps(WIDGET_CRD).replace("widget", "gear").replace("Widget", "Gear"))
    name = crd["metadata"]["name"]
    install(api, crd)
    base = "/apis/example.com/v1/gears"
    held = {
        "apiVersion": "example.com/v1",
        "kind": "Gear",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
    }
    assert api.post(base, json=held).status_code == 201
    marked = api.delete(f"{CRDS}/{name}").json()  # the CRD marked, as upstream's first delete answers
    assert marked["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert marked["metadata"]["deletionTimestamp"]
    assert condition(marked, "Terminating")["reason"] in ("InstanceDeletionPending", "InstanceDeletionInProgress")
    in_progress = eventually(  # the controller takes over: it deletes the objects
        lambda: (
            condition(api.get(f"{CRDS}/{name}").json(), "Terminating").get("reason") == "InstanceDeletionInProgress"
            and "deletionTimestamp" in api.get(f"{base}/held").json()["metadata"]
        )
    )
    assert in_progress
    refused = eventually(lambda: api.post(base, json=dict(held, metadata={"name": "new"})).status_code == 405)
    assert refused
    answer = api.post(base, json=dict(held, metadata={"name": "new"}))
    assert answer.json()["message"] == "create not allowed while custom resource definition is terminating"
    assert api.get(f"{base}/held").json()["metadata"]["deletionTimestamp"]  # deleted, held by its finalizer
    released = api.patch(
        f"{base}/held",
        content=b'{"metadata":{"finalizers":null}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert released.status_code == 200, released.text
    assert eventually(lambda: api.get(f"{CRDS}/{name}").status_code == 404, 60)  # slow under load


def test_schema_errors_that_block_cel_columns_and_protobuf_are_answered_as_upstream(api: httpx.Client) -> None:
    """Three differences make anchor-diff found against kube-apiserver: an enum (or required, too long,
    too many, wrongly typed) error keeps a CRD's CEL rules from running, in their place one error says
    so (hasBlockingErr); a printer column without a description gets tableconvertor's; and an Accept
    a custom resource cannot be encoded in is the handler's 406, naming every serializer it has."""
    spec = {
        "type": "object",
        "properties": {"size": {"type": "integer"}, "color": {"type": "string", "enum": ["red", "blue"]}},
        "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "size is at most 10"}],
    }
    crd = namespaced_crd("blocking.example.com", "gizmos", spec)
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
    ]
    install(api, crd)
    path = "/apis/blocking.example.com/v1/namespaces/default/gizmos"
    try:
        gizmo = {"apiVersion": "blocking.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
        refused = api.post(path, json={**gizmo, "spec": {"color": "green"}})
        assert refused.status_code == 422, refused.text
        not_checked = (
            "some validation rules were not checked because the object was invalid; correct the existing "
            "errors to complete validation"
        )
        assert refused.json()["message"] == (
            'Gizmo.blocking.example.com "g" is invalid: [spec.color: Unsupported value: "green": supported values: '
            f'"red", "blue", <nil>: Invalid value: null: {not_checked}]'
        )
        assert refused.json()["details"]["causes"][1] == {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: null: {not_checked}",
            "field": "<nil>",
        }
        wrong_type = api.post(path, json={**gizmo, "spec": {"size": "big"}}).json()["details"]["causes"]
        assert [c["reason"] for c in wrong_type] == ["FieldValueTypeInvalid", "FieldValueInvalid"]
        too_big = api.post(path, json={**gizmo, "spec": {"size": 11}}).json()["details"]["causes"]
        assert [c["message"] for c in too_big] == ['Invalid value: "object": size is at most 10']
        assert api.post(path, json={**gizmo, "spec": {"size": 2}}).status_code == 201
        table = api.get(path, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
        size = next(c for c in table["columnDefinitions"] if c["name"] == "Size")
        assert size["description"] == "Custom resource definition column (in JSONPath format): .spec.size"
        for where in (path, f"{path}/g"):
            response = api.get(where, headers={"Accept": "application/vnd.kubernetes.protobuf"})
            assert response.status_code == 406  # the Status itself in protobuf, as asked
            assert response.headers["content-type"] == "application/vnd.kubernetes.protobuf"
            assert (
                b"only the following media types are accepted: application/json, application/yaml, "
                b"application/vnd.kubernetes.protobuf, application/cbor"  # this server's CBOR gate is on
            ) in response.content
    finally:
        uninstall(api, crd["metadata"]["name"])
