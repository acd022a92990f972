"""The Kubernetes JSON codec: round trips through protobuf, upstream's omitempty shape, errors.

The manifests are written as kube-apiserver would return them (its Go JSON shape: non-pointer
structs always present, ``creationTimestamp: null`` for a zero time, …), so a faithful codec
returns them unchanged, except that quantities come back in canonical form.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from protokube.schema import envelope, jsondecode, jsonencode, yamldecode
from protokube.schema.descriptors import message_class
from protokube.schema.jsondecode import DecodeError

MANIFESTS = Path(__file__).parent / "manifests"
CASES = {
    "deployment": "k8s.io.api.apps.v1.Deployment",
    "service": "k8s.io.api.core.v1.Service",
    "secret": "k8s.io.api.core.v1.Secret",
    # JSON Schema unions (items, additionalProperties, dependencies), raw JSON (default, enum,
    # example) and a whole float64 written without a fraction (minimum: 1)
    "crd": "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    # ExtraValue: a []string type of its own, written as a JSON array
    "subjectaccessreview": "k8s.io.api.authorization.v1.SubjectAccessReview",
}
CANONICAL = {
    "deployment": [
        (("spec", "template", "spec", "volumes", 1, "emptyDir", "sizeLimit"), "512Mi"),
        (("spec", "template", "spec", "containers", 0, "resources", "limits", "cpu"), "1"),
        (("spec", "template", "spec", "containers", 0, "resources", "requests", "memory"), "256Mi"),
    ],
}


def load(name: str) -> dict:
    return json.loads((MANIFESTS / f"{name}.json").read_text())


def canonical(name: str) -> dict:
    expected = copy.deepcopy(load(name))
    for path, value in CANONICAL.get(name, []):
        target = expected
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return expected


@pytest.mark.parametrize("name", CASES)
def test_json_to_protobuf_to_json_is_unchanged(name: str) -> None:
    source = load(name)
    decoded = jsondecode.decode(source, CASES[name])
    assert decoded.violations == []
    wire = envelope.encode(decoded.message, source["apiVersion"], source["kind"])
    back = envelope.decode(wire, message_class(CASES[name]), source["apiVersion"], source["kind"])
    assert jsonencode.object_to_dict(back, source["kind"], source["apiVersion"]) == canonical(name)


@pytest.mark.parametrize("name", CASES)
def test_protobuf_to_json_to_protobuf_is_byte_identical(name: str) -> None:
    source = load(name)
    first = envelope.encode(jsondecode.decode(source, CASES[name]).message, source["apiVersion"], source["kind"])
    message = envelope.decode(first, message_class(CASES[name]), source["apiVersion"], source["kind"])
    as_json = jsonencode.dumps(jsonencode.object_to_dict(message, source["kind"], source["apiVersion"]))
    second = envelope.encode(
        jsondecode.decode_bytes(as_json, CASES[name]).message, source["apiVersion"], source["kind"]
    )
    assert second == first


def test_json_keys_follow_go_struct_order() -> None:
    decoded = jsondecode.decode(
        {"data": {"b": "2", "a": "1"}, "metadata": {"name": "x"}, "kind": "ConfigMap"}, "k8s.io.api.core.v1.ConfigMap"
    )
    text = jsonencode.dumps(jsonencode.object_to_dict(decoded.message, "ConfigMap", "v1"))
    assert text == (
        b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","creationTimestamp":null},'
        b'"data":{"a":"1","b":"2"}}'
    )


def test_go_escaping_and_int64_as_numbers() -> None:
    decoded = jsondecode.decode(
        {"metadata": {"name": "x", "annotations": {"a": "<b>&"}, "generation": 2**40}}, "k8s.io.api.core.v1.ConfigMap"
    )
    text = jsonencode.dumps(jsonencode.to_dict(decoded.message))
    assert b'"a":"\\u003cb\\u003e\\u0026"' in text and b'"generation":1099511627776' in text


def test_special_forms() -> None:
    lease = jsondecode.decode(
        {"spec": {"acquireTime": "2024-01-02T15:04:05.123456Z", "leaseDurationSeconds": 0}},
        "k8s.io.api.coordination.v1.Lease",
    ).message
    out = jsonencode.to_dict(lease)["spec"]
    assert out == {"acquireTime": "2024-01-02T15:04:05.123456Z", "leaseDurationSeconds": 0}  # pointer: 0 kept
    secret = jsondecode.decode({"data": {"k": "AAEC"}, "stringData": {"s": "x"}}, "k8s.io.api.core.v1.Secret").message
    assert secret.data["k"] == b"\x00\x01\x02"
    assert jsonencode.to_dict(secret)["data"] == {"k": "AAEC"}


def test_unknown_and_duplicate_fields_have_paths() -> None:
    body = (
        b'{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c"},'
        b'{"name":"d","imagePullPolcy":"Always"}],"bogus":1}}'
    )
    decoded = jsondecode.decode_bytes(body, "k8s.io.api.core.v1.Pod")
    assert decoded.violations == [
        'unknown field "spec.containers[1].imagePullPolcy"',
        'unknown field "spec.bogus"',
        'duplicate field "metadata.name"',
    ]
    assert decoded.message.metadata.name == "b"  # the last value wins, as in Go


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"spec": {"replicas": "3"}},
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            {"spec": {"replicas": 1.5}},
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            {"spec": {"replicas": 2**31}},
            "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            {"spec": {"template": {"spec": {"containers": {"name": "x"}}}}},
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers "
            "of type []v1.Container",
        ),
        (
            {"metadata": {"labels": {"a": 1}}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            {"spec": {"paused": "yes"}},
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
        ),
    ],
)
def test_wrong_types_name_the_path(body: dict, message: str) -> None:
    with pytest.raises(DecodeError) as raised:
        jsondecode.decode(body, "k8s.io.api.apps.v1.Deployment")
    assert str(raised.value) == message


def test_bad_quantity_and_time() -> None:
    with pytest.raises(DecodeError, match="quantities must match the regular expression"):
        jsondecode.decode(
            {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}, "k8s.io.api.core.v1.Pod"
        )
    with pytest.raises(DecodeError, match='parsing time "yesterday"'):
        jsondecode.decode({"metadata": {"creationTimestamp": "yesterday"}}, "k8s.io.api.core.v1.Pod")


def test_malformed_json_is_a_decode_error() -> None:
    for body in (b"{", b'{"a":}', b"[" * 100_000):
        with pytest.raises(DecodeError):
            jsondecode.decode_bytes(body, "k8s.io.api.core.v1.Pod")


def test_yaml_goes_through_the_same_path() -> None:
    text = (
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  containers:\n  - name: c\n    image: x\n"
    )
    document = yamldecode.parse(text)
    decoded = jsondecode.decode(document.value, "k8s.io.api.core.v1.Pod")
    assert decoded.message.spec.containers[0].image == "x"
    assert document.duplicates == ['line 5: key "name" already set in map']
    with pytest.raises(DecodeError):
        yamldecode.parse(b"a: [1, 2\nb: c")
