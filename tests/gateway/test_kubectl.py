"""Real kubectl (1.32) against a running server, with its defaults (--validate=strict included)."""

from __future__ import annotations

import json

from .helpers import Kubectl


def test_version_reports_a_1_32_server(kubectl: Kubectl) -> None:
    out = json.loads(kubectl.run("version", "-o", "json").stdout)
    assert out["serverVersion"]["major"] == "1" and out["serverVersion"]["minor"] == "32"


def test_namespace_configmap_lifecycle(kubectl: Kubectl, tmp_path) -> None:
    kubectl.run("create", "namespace", "kc-demo")
    kubectl.run("create", "configmap", "settings", "--from-literal=color=blue", "-n", "kc-demo")
    got = json.loads(kubectl.run("get", "configmap", "settings", "-n", "kc-demo", "-o", "json").stdout)
    assert got["data"] == {"color": "blue"} and got["metadata"]["namespace"] == "kc-demo"

    got["data"]["color"] = "green"
    manifest = tmp_path / "cm.json"
    manifest.write_text(json.dumps(got))
    kubectl.run("replace", "-f", str(manifest))
    replaced = json.loads(kubectl.run("get", "configmap", "settings", "-n", "kc-demo", "-o", "json").stdout)
    assert replaced["data"] == {"color": "green"}
    assert int(replaced["metadata"]["resourceVersion"]) > int(got["metadata"]["resourceVersion"])

    listed = kubectl.run("get", "configmaps", "-n", "kc-demo").stdout
    assert "settings" in listed

    deleted = kubectl.run("delete", "configmap", "settings", "-n", "kc-demo")
    assert 'configmap "settings" deleted' in deleted.stdout
    missing = kubectl.run("get", "configmap", "settings", "-n", "kc-demo", check=False)
    assert missing.returncode != 0
    assert 'configmaps "settings" not found' in missing.stderr

    kubectl.run("delete", "namespace", "kc-demo", "--timeout=30s")
    namespaces = kubectl.run("get", "namespaces", "-o", "name").stdout.split()
    assert "namespace/kc-demo" not in namespaces
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-public", "namespace/kube-node-lease"} <= set(
        namespaces
    )


def test_replace_with_stale_resource_version_conflicts(kubectl: Kubectl, tmp_path) -> None:
    kubectl.run("create", "configmap", "stale", "--from-literal=a=1")
    first = json.loads(kubectl.run("get", "configmap", "stale", "-o", "json").stdout)
    first["data"]["a"] = "2"
    manifest = tmp_path / "first.json"
    manifest.write_text(json.dumps(first))
    kubectl.run("replace", "-f", str(manifest))
    first["data"]["a"] = "3"
    manifest.write_text(json.dumps(first))
    result = kubectl.run("replace", "-f", str(manifest), check=False)
    assert result.returncode != 0
    assert "the object has been modified; please apply your changes to the latest version" in result.stderr
