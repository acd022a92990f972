"""tools/protogen: the Go facts it reads, the options it derives, the files it writes.

The unit tests run on small Go and proto snippets. The last test regenerates proto/k8s from the
upstream repositories (when their git mirrors are on this machine) and checks that the committed
files are exactly what the tool writes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.protogen.existing import kept_options
from tools.protogen.facts import FieldFacts, MessageFacts, Universe
from tools.protogen.goparse import parse_package
from tools.protogen.render import render
from tools.protogen.upstream_proto import ProtoField, ProtoFile, ProtoMessage

ROOT = Path(__file__).parents[2]

GO_SOURCE = """\
package demo

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient

// Widget is a demo kind.
// +k8s:prerelease-lifecycle-gen:introduced=1.0
type Widget struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// mode of the widget.
	// +optional
	// +default=ref(ModeFast)
	Mode *Mode `json:"mode,omitempty" protobuf:"bytes,2,opt,name=mode,casttype=Mode"`

	// ports are listed by name.
	// +listType=map
	// +listMapKey=name
	// +listMapKey=protocol
	Ports []Port `json:"ports" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,3,rep,name=ports"`

	Count int32 `json:"count,omitempty" protobuf:"varint,4,opt,name=count"` // a trailing comment
	Ref string `json:"$ref,omitempty" protobuf:"bytes,5,opt,name=ref"`

	// +required
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,6,rep,name=labels"`
	Inner `json:",inline" protobuf:"bytes,7,opt,name=inner"`
	Hidden []byte `json:"-" protobuf:"bytes,8,opt,name=hidden"`
}

// Inner is inlined.
// +structType=atomic
type Inner struct {
	Note string `json:"note" protobuf:"bytes,1,opt,name=note"`
}

// Port is a port.
type Port struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,2,opt,name=protocol"`
}

// Mode says how fast.
// +enum
type Mode string

const (
	// ModeFast runs fast,
	// really fast.
	ModeFast Mode = "Fast"
	// ModeSlow is slow.
	ModeSlow Mode = "Slow"
	// ModeSlowToo is another name of the same value, with a longer comment.
	ModeSlowToo Mode = ModeSlow
	ModeNone Mode = ""
)

// Stamp writes its own JSON.
type Stamp struct {
	Seconds int64 `json:"seconds" protobuf:"varint,1,opt,name=seconds"`
}

func (s Stamp) MarshalJSON() ([]byte, error) { return nil, nil }
"""

VARIANT_SOURCE = """\
//go:build fancy

package demo

type Stamp struct {
	Fancy bool
}
"""


def _field(name: str, number: int, *, repeated: bool = False) -> ProtoField:
    return ProtoField(name, number, repeated, "string", False, None, None, False, [" doc"])


@pytest.fixture(scope="module")
def universe(tmp_path_factory: pytest.TempPathFactory) -> Universe:
    directory = tmp_path_factory.mktemp("demo")
    (directory / "types.go").write_text(GO_SOURCE)
    (directory / "variant.go").write_text(VARIANT_SOURCE)  # not built without the "fancy" tag
    return Universe({"example.com/demo": parse_package(directory, "example.com/demo")})


def _facts(universe: Universe, message: str, fields: list[ProtoField]) -> MessageFacts:
    package = universe.packages["example.com/demo"]
    return universe.message_facts(package, ProtoMessage(message, tuple(fields), []))


def test_doc_comments_are_attached_as_gengo_attaches_them(universe: Universe) -> None:
    package = universe.packages["example.com/demo"]
    widget = package.structs["Widget"]
    assert widget.doc == ["Widget is a demo kind.", "+k8s:prerelease-lifecycle-gen:introduced=1.0"]
    assert widget.detached_doc == ["+genclient"]
    fields = {f.name: f for f in widget.fields}
    assert fields["ObjectMeta"].embedded and fields["ObjectMeta"].type == "metav1.ObjectMeta"
    # A trailing comment ends on the line before the next field: gengo takes it as that field's doc.
    assert fields["Ref"].doc == ["a trailing comment"]
    assert fields["Hidden"].doc == []
    assert package.structs["Stamp"].fields[0].name == "Seconds"  # the //go:build fancy file is skipped
    assert package.custom_json == {"Stamp"}


def test_constants_and_enums(universe: Universe) -> None:
    package = universe.packages["example.com/demo"]
    assert package.consts["ModeSlowToo"].value == "Slow"  # const A T = B
    enum = universe.enums[("example.com/demo", "Mode")]
    assert enum.values == ("", "Fast", "Slow")
    assert enum.description == (
        "",
        "Possible enum values:",
        ' - `""`',
        ' - `"Fast"` runs fast, really fast.',
        ' - `"Slow"` is another name of the same value, with a longer comment.',
    )


def test_field_options_follow_the_go_facts(universe: Universe) -> None:
    names = ["metadata", "mode", "ports", "count", "ref", "labels", "inner", "hidden"]
    facts = _facts(universe, "Widget", [_field(n, i + 1) for i, n in enumerate(names)]).fields
    assert facts["metadata"] == FieldFacts()  # embedded with a JSON name: not inlined; +optional
    mode = facts["mode"]
    assert mode.nullable and not mode.emit_empty and not mode.required
    assert mode.default_json == '"Fast"' and mode.enum == ("", "Fast", "Slow")
    assert mode.enum_doc[1] == "Possible enum values:"
    ports = facts["ports"]
    assert ports.emit_empty and ports.required and ports.patch_strategy == "merge" and ports.patch_merge_key == "name"
    assert ports.list_type == "map" and ports.list_map_keys == ("name", "protocol")
    assert facts["count"] == FieldFacts()
    assert facts["ref"].json_name == "$ref"
    assert facts["labels"].required and not facts["labels"].emit_empty  # +required wins over omitempty
    assert facts["inner"].inline and not facts["inner"].emit_empty and not facts["inner"].required
    assert facts["hidden"] == FieldFacts()  # json:"-"
    assert _facts(universe, "Inner", [_field("note", 1)]).atomic
    # A type with its own MarshalJSON: its tags say nothing about its JSON.
    assert _facts(universe, "Stamp", [_field("seconds", 1)]).fields["seconds"] == FieldFacts()


def test_a_rewrite_keeps_the_hand_maintained_options(tmp_path: Path) -> None:
    existing = tmp_path / "types.proto"
    existing.write_text(
        """\
message Widget {
  // Verbs as upstream's registry serves them.
  option (protokube.options.v1.kind) = {group: "demo", version: "v1"};
  option (protokube.options.v1.resource) = {
    plural: "widgets"
    printer_columns {name: "Name" type: "string" json_path: ".metadata.name" description: "a } in text"}
  };
  option (protokube.options.v1.atomic) = true;

  // Old comment.
  optional string mode = 2;
}
"""
    )
    kept = kept_options(existing)
    assert kept["Widget"][0] == "  // Verbs as upstream's registry serves them."
    assert kept["Widget"][-1] == "  };" and not any("atomic" in line for line in kept["Widget"])
    proto = ProtoFile("demo.v1", "example.com/demo", (ProtoMessage("Widget", (_field("mode", 2),), [" A widget."]),))
    facts = {"Widget": MessageFacts(fields={"mode": FieldFacts(nullable=True, enum=("A", "B"))})}
    text = render(proto, facts, kept, ["// header"], [])
    assert "\n".join(kept["Widget"]) in text
    assert 'import "protokube/options/v1/options.proto";' in text
    assert "// A widget.\nmessage Widget {\n  // Verbs" in text
    assert "  optional string mode = 2 [(protokube.options.v1.field) = {\n    nullable: true\n" in text
    assert '    enum: ["A", "B"]\n  }];\n}\n' in text


MIRRORS = Path("/work/.mirror")


@pytest.mark.skipif(not (MIRRORS / "kubernetes+api" / "repo").is_dir(), reason="upstream git mirrors not present")
def test_committed_protos_are_what_the_tool_writes() -> None:
    def mirror(repo: str, tag: str) -> str:
        return f"{MIRRORS / ('kubernetes+' + repo) / 'repo'}@{tag}"

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.protogen",
            "--check",
            "--api",
            mirror("api", "v0.36.3"),
            "--apimachinery",
            mirror("apimachinery", "v0.36.3"),
            "--apiextensions-apiserver",
            mirror("apiextensions-apiserver", "v0.36.3"),
            "--kube-aggregator",
            mirror("kube-aggregator", "v0.36.2"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
