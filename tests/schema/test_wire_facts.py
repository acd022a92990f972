"""Every Kubernetes message we define matches upstream's descriptors field for field.

The fact table (wirefacts/k8s-fields.json) was extracted from the public Kubernetes 1.36
generated.proto files; see wirefacts/k8s-README.md. wirefacts/k8s-fields-alpha.json adds the one
alpha group version served (certificates.k8s.io/v1alpha1, from Kubernetes 1.32). Names, numbers,
types, labels, message type names and map shapes must all be equal, so real Kubernetes protobuf
clients and ours agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor

from protokube.schema import descriptors

WIREFACTS = Path(__file__).parents[2] / "wirefacts"
FACTS = json.loads((WIREFACTS / "k8s-fields.json").read_text())
# certificates.k8s.io/v1alpha1 (ClusterTrustBundle), which the GA-only table leaves out.
_ALPHA = json.loads((WIREFACTS / "k8s-fields-alpha.json").read_text())
FACTS = {
    **FACTS,
    **{k: v for k, v in _ALPHA.items() if not k.startswith("_")},
    "_files": {**FACTS["_files"], **_ALPHA["_files"]},
}
TYPE_NAMES = {v: k for k, v in vars(FieldDescriptor).items() if k.startswith("TYPE_")}


def our_messages() -> dict[str, object]:
    found = {}
    for desc in descriptors.all_messages():
        if desc.full_name.startswith("k8s.io.") and not desc.GetOptions().map_entry:
            found[desc.full_name] = desc
    return found


OURS = our_messages()


def describe(fd: FieldDescriptor) -> dict:
    field = {
        "name": fd.name,
        "number": fd.number,
        "type": TYPE_NAMES[fd.type],
        "label": "LABEL_REPEATED" if fd.is_repeated else "LABEL_OPTIONAL",
    }
    entry = fd.message_type
    if entry is not None and entry.GetOptions().map_entry:
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        field["map"] = {
            "key": TYPE_NAMES[key.type],
            "value": value.message_type.full_name if value.message_type else TYPE_NAMES[value.type],
            "value_type": TYPE_NAMES[value.type],
        }
    elif entry is not None:
        field["type_name"] = entry.full_name
    return field


def test_we_define_the_messages_issue_2_names() -> None:
    expected_roots = [
        "k8s.io.api.core.v1." + k
        for k in (
            "Namespace",
            "Pod",
            "ConfigMap",
            "Secret",
            "Service",
            "Node",
            "Event",
            "ServiceAccount",
            "Endpoints",
        )
    ] + ["k8s.io.api.apps.v1.Deployment", "k8s.io.api.coordination.v1.Lease"]
    for root in expected_roots:
        assert root in OURS and root + "List" in OURS
    assert "k8s.io.api.autoscaling.v1.Scale" in OURS
    assert "k8s.io.api.policy.v1.Eviction" in OURS
    assert "k8s.io.apimachinery.pkg.runtime.Unknown" in OURS
    assert len(OURS) >= 230


@pytest.mark.parametrize("name", sorted(OURS))
def test_message_matches_upstream(name: str) -> None:
    assert name in FACTS, f"{name} is not an upstream Kubernetes message"
    ours = [describe(fd) for fd in OURS[name].fields]
    theirs = [
        {k: v for k, v in f.items() if k in ("name", "number", "type", "label", "type_name", "map")}
        for f in FACTS[name]
    ]
    assert sorted(ours, key=lambda f: f["number"]) == sorted(theirs, key=lambda f: f["number"])


@pytest.mark.parametrize("name", sorted(OURS))
def test_declaration_order_is_upstream_order(name: str) -> None:
    """JSON keys follow declaration order, which must be upstream's (Go struct) order."""
    assert [fd.number for fd in OURS[name].fields] == [f["number"] for f in FACTS[name]]


def test_files_are_proto2_in_upstream_packages() -> None:
    """Upstream's files are proto2 (unpacked repeated scalars, explicit presence)."""
    upstream_packages = {f["package"] for f in FACTS["_files"].values()}
    for file_desc in {desc.file for desc in OURS.values()}:
        proto = descriptor_pb2.FileDescriptorProto.FromString(file_desc.serialized_pb)
        assert proto.syntax in ("", "proto2"), file_desc.name
        assert proto.package in upstream_packages, file_desc.name
