"""Our hand-written etcd protos against the fact table taken from etcd's own rpc.proto/kv.proto.

Every message, enum and service method we define must match etcd exactly (names, numbers,
types, labels, type names, oneofs, streaming), or real etcd clients would misread our bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.gen.mvccpb import kv_pb2

FACTS = json.loads((Path(__file__).resolve().parents[2] / "wirefacts" / "etcd-fields.json").read_text())
FILES = [kv_pb2.DESCRIPTOR, rpc_pb2.DESCRIPTOR]
TYPE_NAMES = {v: k for k, v in descriptor_pb2.FieldDescriptorProto.Type.items()}
LABEL_NAMES = {v: k for k, v in descriptor_pb2.FieldDescriptorProto.Label.items()}


def _messages(descriptors) -> list:
    """All messages (nested included) under the given descriptors."""
    found = []
    for d in descriptors:
        found.append(d)
        found += _messages(d.nested_types)
    return found


def _all_messages():
    return [m for f in FILES for m in _messages(f.message_types_by_name.values())]


def _all_enums():
    enums = [e for f in FILES for e in f.enum_types_by_name.values()]
    enums += [e for m in _all_messages() for e in m.enum_types]
    return enums


def _field_facts(field) -> dict:
    fact = {
        "name": field.name,
        "number": field.number,
        "type": TYPE_NAMES[field.type],
        "label": LABEL_NAMES[
            descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
            if field.is_repeated
            else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
        ],
    }
    if field.message_type is not None:
        fact["type_name"] = field.message_type.full_name
    elif field.enum_type is not None:
        fact["type_name"] = field.enum_type.full_name
    if field.containing_oneof is not None and not field.containing_oneof.name.startswith("_"):
        fact["oneof"] = field.containing_oneof.name
    return fact


KEYS = ("name", "number", "type", "label", "type_name", "oneof")


@pytest.mark.parametrize("message", _all_messages(), ids=lambda m: m.full_name)
def test_message_matches_etcd(message):
    assert message.full_name in FACTS, f"{message.full_name} is not an etcd message"
    expected = sorted(({k: f[k] for k in KEYS if k in f} for f in FACTS[message.full_name]), key=lambda f: f["number"])
    ours = sorted((_field_facts(f) for f in message.fields), key=lambda f: f["number"])
    assert ours == expected


@pytest.mark.parametrize("enum", _all_enums(), ids=lambda e: e.full_name)
def test_enum_matches_etcd(enum):
    facts = FACTS["_enums"]
    assert enum.full_name in facts, f"{enum.full_name} is not an etcd enum"
    expected = [(v["name"], v["number"]) for v in facts[enum.full_name]["values"]]
    assert [(v.name, v.number) for v in enum.values] == expected


SERVICES = list(rpc_pb2.DESCRIPTOR.services_by_name.values())


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.full_name)
def test_service_methods_match_etcd(service):
    facts = {m["name"]: m for m in FACTS["_services"][service.full_name]}
    for method in service.methods:
        assert method.name in facts, f"{service.full_name}.{method.name} is not an etcd method"
        fact = facts[method.name]
        assert method.input_type.full_name == fact["input_type"]
        assert method.output_type.full_name == fact["output_type"]
        assert method.client_streaming == fact["client_streaming"]
        assert method.server_streaming == fact["server_streaming"]


def test_files_declare_etcd_packages():
    assert kv_pb2.DESCRIPTOR.package == "mvccpb"
    assert rpc_pb2.DESCRIPTOR.package == "etcdserverpb"
    assert list(rpc_pb2.DESCRIPTOR.dependencies) == [kv_pb2.DESCRIPTOR]
    for file in FILES:
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        assert proto.syntax == "proto3"


def test_required_methods_are_defined():
    """The methods the storage service serves must all be declared."""
    defined = {(s.name, m.name) for s in SERVICES for m in s.methods}
    required = {("KV", n) for n in ("Range", "Put", "DeleteRange", "Txn", "Compact")} | {
        ("Watch", "Watch"),
        ("Maintenance", "Status"),
    }
    required |= {
        ("Lease", n) for n in ("LeaseGrant", "LeaseRevoke", "LeaseKeepAlive", "LeaseTimeToLive", "LeaseLeases")
    }
    assert required <= defined
