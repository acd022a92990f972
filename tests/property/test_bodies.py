"""Request bodies in every media type (JSON, YAML, CBOR, protobuf) through decode_body and the
decoders under it: a decoded object, or a StatusError with a 4xx code — never another exception.
Whatever decodes must also encode again in every format the server answers in."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protokube.gateway.codecs import codec_for
from protokube.gateway.errors import StatusError
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.bodies import decode_body
from protokube.gateway.objects.codec import Codec
from protokube.gateway.objects.protobuf import ProtoCodec
from protokube.gateway.objects.unstructured import JSONCodec
from protokube.gen.k8s.io.apimachinery.pkg.runtime import types_pb2 as runtime_pb2
from protokube.schema import envelope, jsondecode, yamlcodec
from protokube.schema.jsondecode import DecodeError, without_lone_surrogates
from protokube.schema.registry import GroupVersionKind, registry

from .strategies import JSON_VALUES, deep, json_bytes, mutated

MANIFESTS = Path(__file__).parents[1] / "schema" / "manifests"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "x"}, "annotations": {"a": "b"}, "finalizers": ["example.com/f"]},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                "env": [{"name": "A", "value": "1"}],
            }
        ],
        "terminationGracePeriodSeconds": 30,
    },
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}


def _codec(group: str, version: str, plural: str) -> Codec:
    resource = registry().resource(group, version, plural)
    assert resource is not None
    return codec_for(resource)


CASES: list[tuple[Codec, dict[str, Any]]] = [
    (_codec("", "v1", "pods"), POD),
    (_codec("", "v1", "configmaps"), CONFIGMAP),
    (_codec("", "v1", "secrets"), json.loads((MANIFESTS / "secret.json").read_text())),
    (_codec("apps", "v1", "deployments"), json.loads((MANIFESTS / "deployment.json").read_text())),
    (_codec("", "v1", "services"), json.loads((MANIFESTS / "service.json").read_text())),
    (
        _codec("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        json.loads((MANIFESTS / "crd.json").read_text()),
    ),
    (
        JSONCodec(GroupVersionKind("example.com", "v1", "Widget"), GroupVersionKind("example.com", "v1", "WidgetList")),
        WIDGET,
    ),
]
IDS = [codec.gvk.kind for codec, _ in CASES]
TEXT_TYPES = [mediatypes.JSON, mediatypes.YAML, mediatypes.CBOR]


def _encodes_everywhere(codec: Codec, obj: Any) -> None:
    """What the server does with an accepted object: normalize, store, answer in every format."""
    obj = codec.normalize(obj)
    stored = codec.encode(obj)
    again = codec.decode(stored)
    codec.json_object(codec.json_item(again))
    codec.cbor_object(again)
    codec.to_dict(again)
    if codec.protobuf:
        codec.protobuf_raw(again)


def _decode(body: bytes, media_type: str, codec: Codec) -> None:
    try:
        decoded = decode_body(body, media_type, codec, registry())
    except StatusError as err:
        assert 400 <= err.code < 500, err.status
        assert err.status.message
        return
    _encodes_everywhere(codec, decoded.obj)


def _as(media_type: str, value: Any) -> bytes:
    if media_type == mediatypes.CBOR:  # CBOR text is UTF-8: lone surrogates cannot be written
        return cbor2.dumps(without_lone_surrogates(copy.deepcopy(value)))
    if media_type == mediatypes.YAML:
        return yamlcodec.dump(value) if _yaml_safe(value) else json.dumps(value).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode()


def _yaml_safe(value: Any) -> bool:
    try:
        json.dumps(value).encode("utf-8")
        yamlcodec.dump(value)
    except (UnicodeEncodeError, ValueError, TypeError):
        return False
    return True


@pytest.mark.parametrize(("codec", "base"), CASES, ids=IDS)
@pytest.mark.parametrize("media_type", TEXT_TYPES)
@given(data=st.data())
def test_mutated_objects_decode_or_answer_4xx(codec: Codec, base: dict, media_type: str, data: st.DataObject) -> None:
    value = data.draw(mutated(base))
    _decode(_as(media_type, value), media_type, codec)


@pytest.mark.parametrize(("codec", "base"), CASES[:3], ids=IDS[:3])
@given(data=st.data())
def test_json_text_with_changed_bytes(codec: Codec, base: dict, data: st.DataObject) -> None:
    _decode(data.draw(json_bytes(mutated(base))), mediatypes.JSON, codec)


@pytest.mark.parametrize("media_type", [*TEXT_TYPES, mediatypes.PROTOBUF])
@given(body=st.binary(max_size=200))
def test_arbitrary_bytes(media_type: str, body: bytes) -> None:
    _decode(body, media_type, CASES[0][0])


@given(text=st.text(max_size=300))
def test_arbitrary_yaml_text(text: str) -> None:
    _decode(text.encode(), mediatypes.YAML, CASES[1][0])


@pytest.mark.parametrize("media_type", TEXT_TYPES)
@pytest.mark.parametrize("depth", [10, 1000, 20000])
def test_deep_nesting_answers_4xx_or_decodes(media_type: str, depth: int) -> None:
    body = dict(CONFIGMAP, metadata={"name": "c", "annotations": {"x": "y"}}, extra=None)
    if media_type == mediatypes.YAML:
        nested = "[" * depth + "]" * depth
        raw = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\nextra: {nested}\n".encode()
    elif media_type == mediatypes.CBOR:
        raw = b"\xa4" + b"".join(cbor2.dumps(k) + cbor2.dumps(v) for k, v in list(body.items())[:3])
        raw += cbor2.dumps("extra") + b"\x81" * depth + b"\x01"
    else:
        raw = json.dumps(body).encode()[:-5] + b"[" * depth + b"]" * depth + b"}"
    _decode(raw, media_type, CASES[1][0])
    for codec, _ in CASES[-1:]:
        _decode(raw, media_type, codec)
    assert deep(3) == [{"a": [1]}]


@st.composite
def _protobuf_bodies(draw: st.DrawFn) -> bytes:
    """Envelopes with arbitrary type meta around a ConfigMap, a ConfigMap with bytes changed, or
    anything; sometimes with invalid UTF-8 in a string of the envelope or the object."""
    codec = CASES[1][0]
    assert isinstance(codec, ProtoCodec)
    obj = codec.new()
    obj.metadata.name = draw(st.text(max_size=10)) + "\u00e9"
    for key, value in draw(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3)).items():
        obj.data[key] = value
    raw = obj.SerializeToString()
    choice = draw(st.integers(0, 2))
    if choice == 1:
        index = draw(st.integers(0, len(raw) - 1))
        raw = raw[:index] + draw(st.binary(max_size=3)) + raw[index + 1 :]
    elif choice == 2:
        raw = draw(st.binary(max_size=60))
    unknown = runtime_pb2.Unknown(
        typeMeta=runtime_pb2.TypeMeta(
            apiVersion=draw(st.sampled_from(["v1", "apps/v1", "", "x/y/z"])),
            kind=draw(st.sampled_from(["ConfigMap", "Pod", "", "Nope"])),
        ),
        raw=raw,
    )
    data = envelope.MAGIC + unknown.SerializeToString()
    if draw(st.booleans()):  # same lengths, so every length prefix stays right
        data = data.replace(b"\xc3\xa9", b"\xff\xfe").replace(b"ConfigMap", b"Config\xffap")
    return data


@given(body=_protobuf_bodies())
def test_protobuf_envelopes(body: bytes) -> None:
    _decode(body, mediatypes.PROTOBUF, CASES[1][0])


@given(value=JSON_VALUES)
def test_parse_json_of_any_value(value: Any) -> None:
    for ensure_ascii in (True, False):
        text = json.dumps(value, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")
        try:
            parsed = jsondecode.parse_json(text)
        except DecodeError:
            continue
        json.dumps(parsed, ensure_ascii=False).encode()  # valid text all the way down


@pytest.mark.parametrize("text", [b"NaN", b"Infinity", b"-Infinity", b'{"a": NaN}', b"[1e999]", b"-1e400"])
def test_json_numbers_go_refuses(text: bytes) -> None:
    with pytest.raises(DecodeError):
        jsondecode.parse_json(text)


def test_custom_resource_integer_beyond_int64_becomes_float() -> None:
    """Regression: 2**64 in a custom resource reached the JSON encoder (500); Go reads it as float64."""
    codec = CASES[-1][0]
    decoded = decode_body(
        b'{"spec": {"size": 18446744073709551616, "n": -9223372036854775809}}', mediatypes.JSON, codec, registry()
    )
    assert decoded.obj.content["spec"] == {"size": 1.8446744073709552e19, "n": -9.223372036854776e18}
    _encodes_everywhere(codec, decoded.obj)
    with pytest.raises(StatusError) as err:  # beyond float64 as well (CBOR bignum)
        decode_body(cbor2.dumps({"spec": {"size": 10**400}}), mediatypes.CBOR, codec, registry())
    assert err.value.code == 400


def test_yaml_with_control_characters_is_400() -> None:
    """Regression: a NUL byte in a YAML body raised PyYAML's ReaderError outside the handled errors."""
    with pytest.raises(StatusError) as err:
        decode_body(b"kind: ConfigMap\x00", mediatypes.YAML, CASES[1][0], registry())
    assert err.value.code == 400
    assert "control characters are not allowed" in err.value.status.message


@st.composite
def _tagged(draw: st.DrawFn) -> Any:
    """A JSON value with CBOR tags (times, bignums, decimals, sets, unknown tags) mixed in."""
    value = draw(JSON_VALUES)
    tag = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 21, 24, 32, 55799, 258, 1000, 2**32]))
    return {"metadata": {"name": "x"}, "spec": cbor2.CBORTag(tag, without_lone_surrogates(value)), "data": value}


@pytest.mark.parametrize(("codec", "base"), [CASES[0], CASES[1], CASES[-1]], ids=["Pod", "ConfigMap", "Widget"])
@given(value=_tagged())
def test_cbor_tags(codec: Codec, base: dict, value: Any) -> None:
    try:
        body = cbor2.dumps(without_lone_surrogates(value))
    except (ValueError, TypeError, cbor2.CBOREncodeError):
        return
    _decode(body, mediatypes.CBOR, codec)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (cbor2.CBORTag(1000, "x"), "x"),  # an unrecognized tag stands for its content
        (cbor2.CBORTag(0, "2024-01-01T00:00:00Z"), "2024-01-01T00:00:00Z"),
        (cbor2.CBORTag(1, 1.5), "1970-01-01T00:00:01.5Z"),
        (cbor2.CBORTag(4, [-1, 15]), None),  # a decimal fraction: no JSON value
        (cbor2.CBORTag(258, [1]), None),  # a set
        (float("nan"), None),
        (float("inf"), None),
        (2**64, None),
        (cbor2.undefined, None),
        (b"ab\xff", "ab\ufffd"),  # a byte string is a string (found by atheris: bytes reached the encoder)
    ],
)
def test_cbor_values_as_upstream_decodes_them(value: Any, expected: Any) -> None:
    """Regression: tags, sets, decimals and NaN reached the codecs as Python objects (500)."""
    body = cbor2.dumps({"metadata": {"name": "w"}, "spec": value})
    if expected is None:
        with pytest.raises(StatusError) as err:
            decode_body(body, mediatypes.CBOR, CASES[-1][0], registry())
        assert err.value.code == 400
    else:
        decoded = decode_body(body, mediatypes.CBOR, CASES[-1][0], registry())
        assert decoded.obj.content["spec"] == expected
