"""The admission chain's flags as kube-apiserver's: plugins added and removed by name, unknown or
missing ones refused at start, an AdmissionConfiguration read (servers of their own)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import ROOT, GatewayProcess

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


@pytest.fixture(scope="module")
def provisioning(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """NamespaceAutoProvision on; Priority (default on) off."""
    process = GatewayProcess(
        tmp_path_factory.mktemp("provisioning"),
        "--enable-admission-plugins",
        "NamespaceAutoProvision",
        "--disable-admission-plugins=Priority",
    ).start()
    yield process
    process.kill()


def test_auto_provision_creates_the_missing_namespace(provisioning: GatewayProcess) -> None:
    with provisioning.client() as client:
        created = client.post(
            "/api/v1/namespaces/made-on-demand/configmaps", json={"metadata": {"name": "c"}, "data": {"a": "b"}}
        )
        assert created.status_code == 201, created.text
        namespace = client.get("/api/v1/namespaces/made-on-demand")
        assert namespace.status_code == 200
        assert namespace.json()["status"]["phase"] == "Active"
        dry = client.post("/api/v1/namespaces/not-on-dry-run/configmaps?dryRun=All", json={"metadata": {"name": "c"}})
        assert dry.status_code == 404  # a dry run makes nothing: NamespaceLifecycle finds no namespace
        assert dry.json()["message"] == 'namespaces "not-on-dry-run" not found'
        assert client.get("/api/v1/namespaces/not-on-dry-run").status_code == 404


def test_a_disabled_default_plugin_does_not_run(provisioning: GatewayProcess) -> None:
    with provisioning.client() as client:
        pod = client.post("/api/v1/namespaces/default/pods", json=POD)
        assert pod.status_code == 201, pod.text
        assert "priority" not in pod.json()["spec"]  # Priority would set 0
        assert pod.json()["spec"]["tolerations"][0]["tolerationSeconds"] == 300  # DefaultTolerationSeconds ran


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--enable-admission-plugins=Foo"], 'admission plugin "Foo" is unknown'),
        (["--disable-admission-plugins=Priority,Bar"], 'admission plugin "Bar" is unknown'),
        (["--enable-admission-plugins=AlwaysPullImages"], "not implemented by protokube: AlwaysPullImages"),
        (["--enable-admission-plugins=AlwaysDeny"], "not implemented by protokube: AlwaysDeny"),
        (["--admission-control-config-file=/nonexistent.yaml"], "unable to read admission control configuration"),
    ],
)
def test_wrong_flags_stop_the_start(tmp_path: Path, flags: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "protokube", "serve", "--data-dir", str(tmp_path), *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr


def test_configuration_file_is_read(tmp_path: Path) -> None:
    config = tmp_path / "admission.yaml"
    config.write_text(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
        "plugins:\n- name: PodSecurity\n  path: missing.yaml\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "protokube",
            "serve",
            "--data-dir",
            str(tmp_path / "d"),
            f"--admission-control-config-file={config}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "couldn't read admission plugin configuration" in result.stderr and "missing.yaml" in result.stderr
