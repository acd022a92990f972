"""protokube-types (issue 33): the betterproto2 dataclasses `make types` generates for every file of
proto/ (types/generate.py), built into a wheel as `pip install ./types` builds it, and used from that
wheel: every module imports, a Pod built from the dataclasses is the Pod our gen/ classes read and
write, proto2's zero values are sent, and examples/clients/python-betterproto reads a Pod, a PodList
and watch frames and creates a ConfigMap against a started server."""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from protokube.gen.k8s.io.api.apps.v1 import types_pb2 as apps_pb2
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core_pb2

from .helpers import ROOT, GatewayProcess

TYPES = ROOT / "types"
CLIENT = ROOT / "examples" / "clients" / "python-betterproto" / "client.py"
PROTOS = sorted(ROOT.glob("proto/**/*.proto"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """types/generate.py's package, built into a wheel from a copy of types/ (as `make types` then
    `pip install ./types` would)."""
    source = tmp_path_factory.mktemp("types-source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(TYPES / name, source / name)
    generate = [sys.executable, str(TYPES / "generate.py"), str(source / "protokube_types")]
    done = subprocess.run(generate, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    dist = tmp_path_factory.mktemp("types-dist")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist)]
    done = subprocess.run([*build, str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (built,) = dist.glob("protokube_types-0.1.0-py3-none-any.whl")
    return built


@pytest.fixture
def types_on_path(wheel: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The wheel itself on sys.path (a pure-Python wheel is a zip the import system reads)."""
    monkeypatch.syspath_prepend(str(wheel))
    return wheel


def module(name: str) -> ModuleType:
    return importlib.import_module(f"protokube_types.{name}")


def test_the_wheel_has_a_module_for_every_proto_file(types_on_path: Path) -> None:
    names = zipfile.ZipFile(types_on_path).namelist()
    assert "protokube_types/py.typed" in names
    for proto in PROTOS:  # k8s/io/api/core/v1/types.proto: package k8s.io.api.core.v1
        package = next(
            line.split()[1].rstrip(";") for line in proto.read_text().splitlines() if line.startswith("package ")
        )
        assert f"protokube_types/{package.replace('.', '/')}/__init__.py" in names, proto
    root = importlib.import_module("protokube_types")
    imported = [importlib.import_module(m.name) for m in pkgutil.walk_packages(root.__path__, "protokube_types.")]
    assert len(imported) >= len(PROTOS)
    # meta/v1 defines a message named List (betterproto 2.0.0b7's modules failed at import on it).
    meta = module("k8s.io.apimachinery.pkg.apis.meta.v1")
    assert meta.List(items=[]).items == []


def test_a_pod_from_the_dataclasses_is_the_pod_gen_reads_and_writes(types_on_path: Path) -> None:
    core = module("k8s.io.api.core.v1")
    meta = module("k8s.io.apimachinery.pkg.apis.meta.v1")
    resource = module("k8s.io.apimachinery.pkg.api.resource")
    intstr = module("k8s.io.apimachinery.pkg.util.intstr")
    pod = core.Pod(
        metadata=meta.ObjectMeta(
            name="web",
            namespace="default",
            labels={"app": "web", "tier": "front"},
            creation_timestamp=meta.Time(seconds=1_700_000_000, nanos=0),
            owner_references=[meta.OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="u1")],
        ),
        spec=core.PodSpec(
            containers=[
                core.Container(
                    name="c",
                    image="nginx:1.27",
                    args=["-g", "daemon off;"],
                    resources=core.ResourceRequirements(limits={"cpu": resource.Quantity(string="100m")}),
                    readiness_probe=core.Probe(
                        handler=core.ProbeHandler(
                            http_get=core.HttpGetAction(path="/", port=intstr.IntOrString(type=1, str_val="http"))
                        ),
                        period_seconds=5,
                    ),
                )
            ],
            termination_grace_period_seconds=0,
            host_network=False,
        ),
    )
    expected = core_pb2.Pod()
    expected.metadata.name, expected.metadata.namespace = "web", "default"
    expected.metadata.labels.update({"app": "web", "tier": "front"})
    expected.metadata.creationTimestamp.seconds, expected.metadata.creationTimestamp.nanos = 1_700_000_000, 0
    expected.metadata.ownerReferences.add(apiVersion="apps/v1", kind="ReplicaSet", name="rs", uid="u1")
    container = expected.spec.containers.add(name="c", image="nginx:1.27", args=["-g", "daemon off;"])
    container.resources.limits["cpu"].string = "100m"
    container.readinessProbe.handler.httpGet.path = "/"
    container.readinessProbe.handler.httpGet.port.type, container.readinessProbe.handler.httpGet.port.strVal = 1, "http"
    container.readinessProbe.periodSeconds = 5
    expected.spec.terminationGracePeriodSeconds, expected.spec.hostNetwork = 0, False

    data = bytes(pod)
    assert core_pb2.Pod.FromString(data) == expected
    assert core.Pod.parse(expected.SerializeToString(deterministic=True)) == pod
    # Not the same bytes: an OwnerReference's fields go out in the .proto's order (apiVersion, field
    # 5, first), where Go and gen/ write them by number; both read either.
    assert data != expected.SerializeToString(deterministic=True)
    # proto2's presence: the zeros set above are sent; fields left unset are None, not zero.
    decoded = core_pb2.Pod.FromString(data)
    assert decoded.spec.HasField("terminationGracePeriodSeconds") and decoded.spec.HasField("hostNetwork")
    assert decoded.metadata.creationTimestamp.HasField("nanos")
    assert core.Pod.parse(data).spec.active_deadline_seconds is None
    assert not decoded.spec.HasField("activeDeadlineSeconds")


def test_zero_replicas_and_repeated_numbers_reach_gen(types_on_path: Path) -> None:
    apps = module("k8s.io.api.apps.v1")
    core = module("k8s.io.api.core.v1")
    deployment = apps.Deployment(spec=apps.DeploymentSpec(replicas=0, paused=False))
    decoded = apps_pb2.Deployment.FromString(bytes(deployment))
    assert decoded.spec.HasField("replicas") and decoded.spec.replicas == 0
    assert decoded.spec.HasField("paused") and not decoded.spec.HasField("minReadySeconds")
    assert apps.Deployment.parse(decoded.SerializeToString()) == deployment
    # Repeated numbers go out packed (Go writes them one by one): each side reads the other's form.
    context = core.PodSecurityContext(supplemental_groups=[1000, 2000])
    go_form = core_pb2.PodSecurityContext(supplementalGroups=[1000, 2000]).SerializeToString()
    assert bytes(context) != go_form
    assert list(core_pb2.PodSecurityContext.FromString(bytes(context)).supplementalGroups) == [1000, 2000]
    assert core.PodSecurityContext.parse(go_form) == context


def test_the_example_client(server: GatewayProcess, client: httpx.Client, namespace: str, wheel: Path) -> None:
    for name in ("web", "web2", "web3"):
        pod = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
        assert client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod).status_code == 201
    argv = [sys.executable, str(CLIENT), server.url, namespace]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(wheel)})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:5] == [
        "pod web image nginx:1.27",
        "pods 3",
        "event ADDED Pod web",
        "event ADDED Pod web2",
        "event ADDED Pod web3",
    ]
    stored = client.get(f"/api/v1/namespaces/{namespace}/configmaps/from-python-betterproto")
    assert stored.status_code == 200 and stored.json()["data"] == {"language": "python-betterproto"}
    assert lines[5:] == [f"created 201 from-python-betterproto uid {stored.json()['metadata']['uid']}"]
    # Again: the server's 409 arrives as an enveloped metav1.Status, which the client prints.
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(wheel)})
    assert again.returncode == 1
    assert again.stderr.strip() == '409 AlreadyExists: configmaps "from-python-betterproto" already exists'
