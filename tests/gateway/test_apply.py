"""Server-side apply and managedFields against a running server (Kubernetes API Concepts: "Server-side apply"):
ownership as managers apply and update, conflicts and force, fields a manager stops applying,
shared ownership, no-op applies; then kubectl's client-side and server-side apply, label,
annotate, patch, set image, edit and diff, and the official Python client."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx
import pytest
import yaml

from .helpers import Kubectl

APPLY = {"Content-Type": "application/apply-patch+yaml"}


def config(name: str, **data: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})


def owners(obj: dict) -> dict[str, dict]:
    return {f"{e['manager']}/{e['operation']}": e.get("fieldsV1", {}) for e in obj["metadata"]["managedFields"]}


def test_apply_ownership_transitions(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/owned"

    def apply(manager: str, body: str, **params: str) -> httpx.Response:
        return client.patch(path, content=body.encode(), headers=APPLY, params={"fieldManager": manager, **params})

    created = apply("alpha", config("owned", shared="one", mine="a"))
    assert created.status_code == 201
    assert owners(created.json()) == {"alpha/Apply": {"f:data": {"f:mine": {}, "f:shared": {}}}}

    # a second manager changing a field alpha owns: 409 naming each conflict
    conflict = apply("beta", config("owned", shared="two"))
    assert conflict.status_code == 409
    status = conflict.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alpha": .data.shared'
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alpha"', "field": ".data.shared"}
    ]
    forced = apply("beta", config("owned", shared="two"), force="true")
    assert forced.status_code == 200 and forced.json()["data"] == {"mine": "a", "shared": "two"}
    assert owners(forced.json()) == {
        "alpha/Apply": {"f:data": {"f:mine": {}}},
        "beta/Apply": {"f:data": {"f:shared": {}}},
    }

    # applying the same value as another manager shares the field
    shared = apply("alpha", config("owned", shared="two", mine="a"))
    assert owners(shared.json())["alpha/Apply"] == {"f:data": {"f:mine": {}, "f:shared": {}}}

    # alpha stops applying "mine": it goes; "shared" stays, beta still owns it
    dropped = apply("alpha", config("owned", shared="two"))
    assert dropped.json()["data"] == {"shared": "two"}

    # an Update by another manager takes over what it changes
    client.patch(
        path,
        params={"fieldManager": "editor"},
        json={"data": {"shared": "three"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    after = client.get(path).json()
    assert owners(after)["editor/Update"] == {"f:data": {"f:shared": {}}}
    assert "beta/Apply" not in owners(after) and "alpha/Apply" not in owners(after)  # empty entries go

    # an apply that changes nothing writes nothing
    again = apply("alpha", config("owned"))
    same = apply("alpha", config("owned"))
    assert same.json()["metadata"]["resourceVersion"] == again.json()["metadata"]["resourceVersion"]


def test_apply_errors(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/bad"
    missing_manager = client.patch(path, content=config("bad").encode(), headers=APPLY)
    assert missing_manager.status_code == 422 and missing_manager.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )
    not_yaml = client.patch(path, content=b"{: [", headers=APPLY, params={"fieldManager": "m"})
    assert not_yaml.status_code == 400 and not_yaml.json()["message"].startswith("error decoding YAML: ")
    other_kind = config("bad").replace("ConfigMap", "Secret")
    wrong = client.patch(path, content=other_kind.encode(), headers=APPLY, params={"fieldManager": "m"})
    assert wrong.status_code == 400 and wrong.json()["message"] == "invalid object type: /v1, Kind=Secret"
    for body, kind in (
        (b"[1]", "array"),
        (b"- a", "array"),
        (b'"text"', "string"),
        (b"3", "number"),
        (b"true", "bool"),
    ):
        not_object = client.patch(path, content=body, headers=APPLY, params={"fieldManager": "m"})
        assert (not_object.status_code, not_object.json()["message"]) == (
            400,
            f"error decoding YAML: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}",
        )
    assert client.get(path).status_code == 404  # nothing stored
    # An apply creates a missing object, but not through a subresource (upstream's status storage
    # updates with forceAllowCreate=false).
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nowhere"}, "status": {}}
    status = client.patch(
        f"/api/v1/namespaces/{namespace}/services/nowhere/status",
        content=json.dumps(service).encode(),
        headers=APPLY,
        params={"fieldManager": "m"},
    )
    assert status.status_code == 404 and status.json()["message"] == 'services "nowhere" not found'
    assert client.get(f"/api/v1/namespaces/{namespace}/services/nowhere").status_code == 404


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


def test_kubectl_update_commands(kubectl: Kubectl, namespace: str, workdir: Path) -> None:
    ns = ["-n", namespace]
    kubectl.run("create", "configmap", "cfg", "--from-literal=a=1", *ns)
    kubectl.run("label", "configmap", "cfg", "tier=web", *ns)
    kubectl.run("label", "configmap", "cfg", "tier=db", "--overwrite", *ns)
    kubectl.run("annotate", "configmap", "cfg", "note=hi", *ns)
    kubectl.run("label", "configmap", "cfg", "tier-", *ns)
    kubectl.run("patch", "configmap", "cfg", "--type", "merge", "-p", '{"data":{"b":"2"}}', *ns)
    kubectl.run("patch", "configmap", "cfg", "--type", "json", "-p", '[{"op":"add","path":"/data/c","value":"3"}]', *ns)
    kubectl.run("patch", "configmap", "cfg", "--type", "strategic", "-p", '{"data":{"d":"4"}}', *ns)
    got = json.loads(kubectl.run("get", "configmap", "cfg", "-o", "json", *ns).stdout)
    assert got["data"] == {"a": "1", "b": "2", "c": "3", "d": "4"}
    assert got["metadata"]["annotations"] == {"note": "hi"} and "labels" not in got["metadata"]

    kubectl.run("create", "deployment", "web", "--image=nginx:1.26", *ns)
    kubectl.run("set", "image", "deployment/web", "nginx=nginx:1.27", *ns)
    image = kubectl.run("get", "deployment", "web", *ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.stdout == "nginx:1.27"

    editor = workdir / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i \'s/a: "1"/a: "edited"/\' "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    kubectl.env["KUBE_EDITOR"] = str(editor)
    try:
        kubectl.run("edit", "configmap", "cfg", *ns)
    finally:
        del kubectl.env["KUBE_EDITOR"]
    assert json.loads(kubectl.run("get", "configmap", "cfg", "-o", "json", *ns).stdout)["data"]["a"] == "edited"


MULTI = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: app-config}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: nginx:1.26
        env: [{name: MODE, value: one}, {name: DEBUG, value: "false"}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: app}
  ports: [{port: 80, targetPort: 8080}]
"""


def test_kubectl_client_side_apply_twice_and_diff(kubectl: Kubectl, namespace: str, workdir: Path) -> None:
    manifest = workdir / "app.yaml"
    manifest.write_text(MULTI)
    first = kubectl.run("apply", "-f", str(manifest), "-n", namespace).stdout
    assert first.split("\n")[:3] == [
        "configmap/app-config created",
        "deployment.apps/app created",
        "service/app created",
    ]
    changed = MULTI.replace("color: blue", "color: green").replace("nginx:1.26", "nginx:1.27")
    changed = changed.replace(', {name: DEBUG, value: "false"}', "")  # drop an env var
    manifest.write_text(changed)
    diff = kubectl.run("diff", "-f", str(manifest), "-n", namespace, check=False)
    assert diff.returncode == 1 and "+  color: green" in diff.stdout and "-  color: blue" in diff.stdout
    second = kubectl.run("apply", "-f", str(manifest), "-n", namespace).stdout
    assert "configmap/app-config configured" in second and "service/app unchanged" in second
    deploy = json.loads(kubectl.run("get", "deployment", "app", "-n", namespace, "-o", "json").stdout)
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.27" and container["env"] == [{"name": "MODE", "value": "one"}]
    assert "kubectl.kubernetes.io/last-applied-configuration" in deploy["metadata"]["annotations"]
    assert kubectl.run("diff", "-f", str(manifest), "-n", namespace, check=False).returncode == 0


def test_kubectl_server_side_apply_conflicts_and_force(kubectl: Kubectl, namespace: str, workdir: Path) -> None:
    manifest = workdir / "cm.yaml"
    manifest.write_text(config("ssa", shared="one", mine="a"))
    ns = ["-n", namespace, "--server-side"]
    kubectl.run("apply", "-f", str(manifest), "--field-manager=alpha", *ns)
    manifest.write_text(config("ssa", shared="two"))
    refused = kubectl.run("apply", "-f", str(manifest), "--field-manager=beta", *ns, check=False)
    assert refused.returncode != 0 and 'conflict with "alpha": .data.shared' in refused.stderr
    kubectl.run("apply", "-f", str(manifest), "--field-manager=beta", "--force-conflicts", *ns)
    got = json.loads(kubectl.run("get", "configmap", "ssa", "-n", namespace, "-o", "json").stdout)
    assert got["data"] == {"mine": "a", "shared": "two"}


def test_python_client_patches_and_create_from_yaml(server, namespace: str, workdir: Path) -> None:
    from kubernetes import client as k8s
    from kubernetes import utils

    configuration = k8s.Configuration()
    configuration.host = server.url
    api_client = k8s.ApiClient(configuration)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "py"}, "data": {"a": "1"}})
    patched = core.patch_namespaced_config_map("py", namespace, {"data": {"b": "2"}})  # a dict: strategic
    assert patched.data == {"a": "1", "b": "2"}
    patched = core.patch_namespaced_config_map("py", namespace, [{"op": "remove", "path": "/data/a"}])  # JSON patch
    assert patched.data == {"b": "2"}
    manifest = workdir / "objects.yaml"
    manifest.write_text(MULTI)
    for _ in range(2):
        utils.create_from_yaml(api_client, str(manifest), namespace=namespace, apply=True)
    assert core.read_namespaced_config_map("app-config", namespace).data == {"color": "blue"}
