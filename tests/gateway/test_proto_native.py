"""Proto-native custom types: the worked example group example.protokube.dev/v1 (proto/dev/protokube/
example/v1/types.proto) served like a built-in kind — kubectl's flows, strategic merge patch by the
proto's merge key, apply, status, scale, Tables from options, OpenAPI from the comments — and a
protobuf round trip with classes built from the .proto file alone, as a client in another language
would build them. Then ``protokube crd-from-proto``: the same kind, and a new one, as CRDs."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc_tools
import httpx
import pytest
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from protokube.gateway.apiextensions.schema import structural_errors

from .helpers import ROOT, GatewayProcess, Kubectl, kubectl_path

EXAMPLE = ROOT / "proto" / "dev" / "protokube" / "example" / "v1" / "types.proto"
GIZMOS = "/apis/example.protokube.dev/v1/namespaces/default/gizmos"
PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
GIZMO = {
    "apiVersion": "example.protokube.dev/v1",
    "kind": "Gizmo",
    "metadata": {"name": "g1"},
    "spec": {
        "replicas": 2,
        "image": "nginx",
        "selector": {"matchLabels": {"app": "g1"}},
        "ports": [{"name": "http", "port": 80}],
        "podLabels": {"app": "g1"},
    },
}


def protoc_set(*files: Path, include: Path | None = None) -> descriptor_pb2.FileDescriptorSet:
    """A descriptor set compiled by protoc from .proto files alone."""
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.binpb"
        argv = [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{well_known}"]
        argv += [f"-I{include}"] if include else []
        subprocess.run([*argv, "--include_imports", f"--descriptor_set_out={out}", *map(str, files)], check=True)
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


@pytest.fixture(scope="module")
def example_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A server of its own: the example group is served only when --runtime-config names it."""
    process = GatewayProcess(
        tmp_path_factory.mktemp("example-gateway"), "--runtime-config", "example.protokube.dev/v1=true"
    ).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def client(example_server: GatewayProcess) -> Any:
    with example_server.client() as c:
        yield c


@pytest.fixture(scope="module")
def kubectl(example_server: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed")
    return Kubectl(example_server.url, Path(tmp_path_factory.mktemp("kubectl-example")))


@pytest.fixture(scope="module")
def classes() -> Any:
    """Message classes from the example .proto and runtime's Unknown, in a pool of their own."""
    files = protoc_set(EXAMPLE, ROOT / "proto" / "k8s" / "io" / "apimachinery" / "pkg" / "runtime" / "types.proto")
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)

    def cls(name: str) -> Any:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    return cls


def test_kubectl_flows(kubectl: Kubectl, client: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "gizmo.yaml").write_text(yaml.safe_dump(GIZMO))
    kubectl.run("create", "-f", str(tmp_path / "gizmo.yaml"))
    table = kubectl.run("get", "gizmos").stdout.splitlines()
    assert table[0].split() == ["NAME", "IMAGE", "REPLICAS", "READY", "AGE"]
    assert table[1].split()[:4] == ["g1", "nginx", "2", "0"]
    assert "gizmo.example.protokube.dev/g1" in kubectl.run("get", "all").stdout
    explained = kubectl.run("explain", "gizmo.spec.ports").stdout
    assert "The ports the gizmo listens on, merged by name in patches and apply." in explained
    assert "name\t<string> -required-" in explained

    kubectl.run("patch", "gz", "g1", "-p", '{"spec":{"ports":[{"name":"https","port":443}]}}')  # strategic
    ports = client.get(f"{GIZMOS}/g1").json()["spec"]["ports"]
    assert ports == [{"name": "https", "port": 443}, {"name": "http", "port": 80}]
    applied = dict(GIZMO, spec={"ports": [{"name": "admin", "port": 9000}]})
    (tmp_path / "ports.yaml").write_text(yaml.safe_dump(applied))
    kubectl.run("apply", "--server-side", "--field-manager=ports", "-f", str(tmp_path / "ports.yaml"))
    names = [p["name"] for p in client.get(f"{GIZMOS}/g1").json()["spec"]["ports"]]
    assert sorted(names) == ["admin", "http", "https"]  # a list map: each port owned on its own

    kubectl.run("scale", "gizmo", "g1", "--replicas=5")
    kubectl.run("patch", "gizmo", "g1", "--subresource=status", "--type=merge", "-p", '{"status":{"readyReplicas":4}}')
    gizmo = client.get(f"{GIZMOS}/g1").json()
    assert gizmo["spec"]["replicas"] == 5 and gizmo["status"] == {"readyReplicas": 4}
    scale = client.get(f"{GIZMOS}/g1/scale").json()
    assert scale["spec"] == {"replicas": 5} and scale["status"]["selector"] == "app=g1"
    assert (
        client.get(GIZMOS, params={"fieldSelector": "spec.image=nginx"}).json()["items"][0]["metadata"]["name"] == "g1"
    )

    cluster_scoped = {"apiVersion": "example.protokube.dev/v1", "kind": "GizmoClass", "metadata": {"name": "fast"}}
    (tmp_path / "class.yaml").write_text(yaml.safe_dump({**cluster_scoped, "defaultImage": "nginx", "isDefault": True}))
    kubectl.run("apply", "-f", str(tmp_path / "class.yaml"))
    assert kubectl.run("get", "gizmoclasses", "fast", "-o", "jsonpath={.defaultImage}").stdout == "nginx"
    kubectl.run("delete", "gizmo", "g1")
    kubectl.run("delete", "gizmoclass", "fast")


def test_protobuf_round_trip_with_classes_from_the_proto_alone(client: httpx.Client, classes: Any) -> None:
    gizmo_class, unknown_class = (
        classes("dev.protokube.example.v1.Gizmo"),
        classes("k8s.io.apimachinery.pkg.runtime.Unknown"),
    )
    made = unknown_class()
    made.typeMeta.apiVersion, made.typeMeta.kind = "example.protokube.dev/v1", "Gizmo"
    gizmo = gizmo_class()
    gizmo.metadata.name = "wire"
    gizmo.spec.image, gizmo.spec.replicas = "busybox", 3
    port = gizmo.spec.ports.add()
    port.name, port.port = "http", 8080
    made.raw = gizmo.SerializeToString()
    created = client.post(
        GIZMOS, content=MAGIC + made.SerializeToString(), headers={"Content-Type": PROTOBUF, "Accept": PROTOBUF}
    )
    assert created.status_code == 201, created.text
    assert created.content.startswith(MAGIC)

    fetched = client.get(f"{GIZMOS}/wire", headers={"Accept": PROTOBUF})
    assert fetched.headers["content-type"] == PROTOBUF and fetched.content.startswith(MAGIC)
    envelope = unknown_class.FromString(fetched.content[len(MAGIC) :])
    assert (envelope.typeMeta.apiVersion, envelope.typeMeta.kind) == ("example.protokube.dev/v1", "Gizmo")
    read = gizmo_class.FromString(envelope.raw)
    assert read.metadata.name == "wire" and read.metadata.uid and read.spec.image == "busybox"
    assert [(p.name, p.port) for p in read.spec.ports] == [("http", 8080)]
    as_json = client.get(f"{GIZMOS}/wire").json()
    assert as_json["spec"] == {"replicas": 3, "image": "busybox", "ports": [{"name": "http", "port": 8080}]}
    client.delete(f"{GIZMOS}/wire")


def crd_from_proto(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "protokube", "crd-from-proto", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_crd_from_proto_of_the_example(kubectl: Kubectl, tmp_path: Path) -> None:
    made = crd_from_proto(str(EXAMPLE), "Gizmo", "-o", "json")
    assert made.returncode == 0, made.stderr
    crd = json.loads(made.stdout)
    version = crd["spec"]["versions"][0]
    props = version["schema"]["openAPIV3Schema"]
    assert structural_errors(props, "spec.versions[0].schema.openAPIV3Schema") == []
    assert props["properties"]["spec"]["properties"]["ports"]["x-kubernetes-list-map-keys"] == ["name"]
    assert props["properties"]["spec"]["description"] == "What the gizmo should be."
    assert version["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["Image", "Replicas", "Ready", "Age"]
    assert crd["spec"]["names"]["shortNames"] == ["gz"] and crd["spec"]["scope"] == "Namespaced"
    (tmp_path / "crd.json").write_text(made.stdout)
    dry = kubectl.run("apply", "--dry-run=server", "-f", str(tmp_path / "crd.json"))  # valid as a CRD
    assert "created (server dry run)" in dry.stdout


NEW_KIND = """
syntax = "proto2";
package acme.tools.v1;
import "k8s/io/apimachinery/pkg/apis/meta/v1/types.proto";
import "k8s/io/apimachinery/pkg/util/intstr/types.proto";
import "protokube/options/v1/options.proto";

// Doohickey is a tool.
message Doohickey {
  option (.protokube.options.v1.kind) = {group: "tools.acme.io", version: "v1"};
  option (.protokube.options.v1.resource) = {
    plural: "doohickeys" scope: SCOPE_CLUSTER
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"]
  };
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  // How big it is.
  optional int32 size = 2;
  // Where it listens.
  optional k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 3;
}

message DoohickeyList {
  option (.protokube.options.v1.kind) = {group: "tools.acme.io", version: "v1"};
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Doohickey items = 2;
}
"""


def test_the_example_group_is_off_unless_named(server: GatewayProcess) -> None:
    with server.client() as default:
        assert default.get("/apis/example.protokube.dev/v1").status_code == 404
        assert "example.protokube.dev" not in [g["name"] for g in default.get("/apis").json()["groups"]]


def test_crd_from_proto_installs_a_new_kind(kubectl: Kubectl, client: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "doohickey.proto").write_text(NEW_KIND)
    made = crd_from_proto(str(tmp_path / "doohickey.proto"), "acme.tools.v1.Doohickey")
    assert made.returncode == 0, made.stderr
    assert yaml.safe_load(made.stdout)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["port"] == {
        "description": "Where it listens.",
        "x-kubernetes-int-or-string": True,
    }
    (tmp_path / "crd.yaml").write_text(made.stdout)
    kubectl.run("apply", "-f", str(tmp_path / "crd.yaml"))
    kubectl.run("wait", "--for", "condition=established", "--timeout=20s", "crd/doohickeys.tools.acme.io")
    path = "/apis/tools.acme.io/v1/doohickeys"
    good = client.post(
        path,
        json={
            "apiVersion": "tools.acme.io/v1",
            "kind": "Doohickey",
            "metadata": {"name": "d"},
            "size": 3,
            "port": "http",
        },
    )
    assert good.status_code == 201, good.text
    bad = client.post(
        path, json={"apiVersion": "tools.acme.io/v1", "kind": "Doohickey", "metadata": {"name": "e"}, "size": "big"}
    )
    assert bad.status_code == 422
    assert 'size: Invalid value: "string": size in body must be of type integer: "string"' in bad.json()["message"]
    kubectl.run("delete", "crd", "doohickeys.tools.acme.io", timeout=60)


def test_crd_from_proto_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    (tmp_path / "broken.proto").write_text("syntax = 'proto2'; message {")
    broken = crd_from_proto(str(tmp_path / "broken.proto"), "X")
    assert broken.returncode == 1 and broken.stderr.startswith("protokube crd-from-proto: ")
    not_a_kind = crd_from_proto(str(EXAMPLE), "GizmoSpec")
    assert not_a_kind.returncode == 1
    assert "GizmoSpec: no message of that name (or kind) has a resource option" in not_a_kind.stderr
