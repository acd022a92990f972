"""The resource registry is built from descriptor options alone.

Adding a kind is adding a .proto message with options: these tests compile a new .proto file
with protoc and check that the registry built from it serves the new kind, and that malformed
options are refused with an error naming the message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from protokube.schema.registry import GroupVersionKind, registry

ROOT = Path(__file__).parents[2]


def test_built_in_resources() -> None:
    reg = registry()
    pods = reg.resource("", "v1", "pods")
    assert pods is not None and pods.namespaced and pods.kind == "Pod" and pods.list_kind == "PodList"
    assert pods.short_names == ("po",) and "all" in pods.categories
    assert "spec.nodeName" in pods.selectable_fields and pods.selectable_fields[:2] == (
        "metadata.name",
        "metadata.namespace",
    )
    assert pods.subresources["eviction"].gvk == GroupVersionKind("policy", "v1", "Eviction")
    assert [c.name for c in pods.printer_columns][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    nodes = reg.resource("", "v1", "nodes")
    assert nodes is not None and not nodes.namespaced and nodes.storage_prefix == "minions"
    deployments = reg.resource("apps", "v1", "deployments")
    assert deployments is not None and deployments.group_resource == "deployments.apps"
    assert deployments.subresources["scale"].message == "k8s.io.api.autoscaling.v1.Scale"
    assert reg.resource("coordination.k8s.io", "v1", "leases") is not None
    assert set(reg.group_versions()) == {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "example.protokube.dev",  # compiled in; served only when --runtime-config names it
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    }
    assert reg.kinds[GroupVersionKind("", "v1", "PodList")] == "k8s.io.api.core.v1.PodList"


WIDGET = """
syntax = "proto2";
package example.v1;
import "k8s/io/apimachinery/pkg/apis/meta/v1/types.proto";
import "protokube/options/v1/options.proto";

message Widget {
  option (protokube.options.v1.kind) = {group: "example.com", version: "v1"};
  option (protokube.options.v1.resource) = {
    plural: "widgets" singular: "widget" short_names: "wd" scope: %(scope)s
    verbs: ["get", "list", "watch", "create"]
    printer_columns {name: "Size" type: "integer" json_path: ".spec.size" %(extra)s}
  };
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional WidgetSpec spec = 2;
}
message WidgetSpec {
  optional int32 size = 1 [(protokube.options.v1.field).nullable = true];
}
message WidgetList {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Widget items = 2;
}
"""

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import example.v1.widget_pb2 as w
from protokube.schema import registry
try:
    reg = registry.build(list(w.DESCRIPTOR.message_types_by_name.values()))
except registry.RegistryError as err:
    print(json.dumps({"error": str(err)}))
else:
    r = reg.resource("example.com", "v1", "widgets")
    print(json.dumps({"kind": r.kind, "list": r.list_kind, "namespaced": r.namespaced, "short": r.short_names,
                      "columns": [c.name for c in r.printer_columns]}))
"""


def build_widget(tmp_path: Path, scope: str = "SCOPE_NAMESPACED", extra: str = "") -> dict:
    src = tmp_path / "src" / "example" / "v1"
    src.mkdir(parents=True)
    (src / "widget.proto").write_text(WIDGET % {"scope": scope, "extra": extra})
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{ROOT / 'proto'}",
            f"-I{tmp_path / 'src'}",
            f"--python_out={out}",
            "example/v1/widget.proto",
        ],
        check=True,
        timeout=60,
    )
    # its imports of the project's modules under protokube.gen, as make gen's own (tools/genimports.py)
    subprocess.run([sys.executable, "-m", "tools.genimports", str(out)], cwd=ROOT, check=True, timeout=60)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(out)], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(probe.stdout)


def test_a_new_proto_message_with_options_is_a_new_resource(tmp_path: Path) -> None:
    found = build_widget(tmp_path)
    assert found == {
        "kind": "Widget",
        "list": "WidgetList",
        "namespaced": True,
        "short": ["wd"],
        "columns": ["Size"],
    }


@pytest.mark.parametrize(
    ("scope", "extra", "message"),
    [
        ("SCOPE_UNSPECIFIED", "", "example.v1.Widget: resource option needs a scope"),
        ("SCOPE_CLUSTER", 'cell: "age"', "example.v1.Widget: printer column 'Size' needs exactly one of"),
    ],
)
def test_malformed_options_are_named(tmp_path: Path, scope: str, extra: str, message: str) -> None:
    assert build_widget(tmp_path, scope, extra)["error"].startswith(message)
