"""Patches of every type (JSON patch, merge patch, strategic merge patch) and server-side apply
bodies, below the HTTP layer: the patched object, or a StatusError the handler sends as a 4xx —
never another exception; a patched object either decodes as the kind or is a DecodeError."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protokube.gateway.codecs import codec_for
from protokube.gateway.errors import StatusError
from protokube.gateway.fieldmanager.manager import FieldManager
from protokube.gateway.handlers.patch import apply_configuration, patch_result
from protokube.gateway.params import WriteOptions
from protokube.schema.jsondecode import DecodeError
from protokube.schema.registry import registry
from protokube.schema.typetree import proto_type

from .strategies import JSON_VALUES, STRINGS, mutated
from .test_bodies import POD

POD_TYPE = proto_type("k8s.io.api.core.v1.Pod")
POD_CODEC = codec_for(registry().resource("", "v1", "pods"))  # type: ignore[arg-type]
CURRENT = copy.deepcopy(POD)
CURRENT["metadata"].update(uid="u", creationTimestamp="2024-01-01T00:00:00Z", namespace="ns")
POINTERS = st.one_of(
    st.sampled_from(
        [
            "",
            "/",
            "/metadata/labels/app",
            "/metadata/labels/new",
            "/spec/containers/0",
            "/spec/containers/-",
            "/spec/containers/0/ports/0/containerPort",
            "/spec/containers/9",
            "/spec/containers/-1",
            "/spec/containers/01",
            "/metadata/finalizers/0",
            "/a~1b/~0",
            "/a~2",
            "metadata",
        ]
    ),
    STRINGS,
)
OPERATIONS = st.lists(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "x"]) | JSON_VALUES},
        optional={"path": POINTERS | JSON_VALUES, "from": POINTERS, "value": JSON_VALUES},
    ),
    max_size=5,
)
DIRECTIVES = st.sampled_from(
    [
        {"$patch": "delete"},
        {"$patch": "replace"},
        {"$patch": "merge"},
        {"$patch": "bogus"},
        {"$retainKeys": ["name"]},
        {"$retainKeys": "x"},
        {"$setElementOrder/containers": [{"name": "c"}]},
        {"$setElementOrder/containers": [1]},
        {"$deleteFromPrimitiveList/finalizers": ["example.com/f"]},
        {"$deleteFromPrimitiveList/finalizers": "x"},
        {"containers": [{"name": "c", "$patch": "delete"}]},
        {"containers": [{"$patch": "replace"}]},
        {"containers": [{"image": "no-merge-key"}]},
        {"containers": {"$patch": "delete"}},
    ]
)


def _body(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass")


def _patch(content_type: str, body: bytes) -> None:
    options = WriteOptions(field_validation="Strict")
    try:
        result = patch_result(content_type, copy.deepcopy(CURRENT), body, POD_TYPE, options, cbor=False)
    except StatusError as err:
        assert 400 <= err.code < 500, err.status
        return
    if isinstance(result.object, dict):
        with contextlib.suppress(DecodeError):
            POD_CODEC.from_dict(result.object)
    result.invalid_value  # noqa: B018 - what a 422 would quote must be computable


@given(ops=st.one_of(OPERATIONS, JSON_VALUES))
def test_json_patches(ops: Any) -> None:
    _patch("application/json-patch+json", _body(ops))


@given(patch=st.one_of(mutated(CURRENT), JSON_VALUES))
def test_merge_patches(patch: Any) -> None:
    _patch("application/merge-patch+json", _body(patch))


@st.composite
def _strategic(draw: st.DrawFn) -> Any:
    patch = draw(mutated({"metadata": {"labels": {"a": None}}, "spec": {"containers": [{"name": "c"}]}}))
    if isinstance(patch, dict):
        spec = patch.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.update(draw(DIRECTIVES))
        else:
            patch.update(draw(DIRECTIVES))
    return patch


@given(patch=st.one_of(_strategic(), JSON_VALUES))
def test_strategic_merge_patches(patch: Any) -> None:
    _patch("application/strategic-merge-patch+json", _body(patch))


@given(
    body=st.binary(max_size=100),
    content_type=st.sampled_from(
        [
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "text/plain",
            "",
        ]
    ),
)
def test_patch_bytes(body: bytes, content_type: str) -> None:
    _patch(content_type, body)


MANAGER = FieldManager(POD_TYPE, "v1", "Pod")


@pytest.mark.parametrize("live", [None, CURRENT], ids=["create", "update"])
@given(applied=mutated({k: v for k, v in CURRENT.items() if k != "status"}), force=st.booleans())
def test_apply_bodies(live: dict | None, applied: Any, force: bool) -> None:
    try:
        configuration = asyncio.run(apply_configuration(_body(applied), WriteOptions(field_validation="Strict"), []))
        merged = MANAGER.apply(copy.deepcopy(live), configuration, "fuzz", force, now="2024-01-01T00:00:01Z")
    except StatusError as err:
        # kube-apiserver's own 500 for an apply body that does not fit the schema (kubernetes#122480)
        assert 400 <= err.code < 500 or err.status.message.startswith("failed to create typed patch object"), err.status
        return
    if isinstance(merged, dict):
        with contextlib.suppress(DecodeError):
            POD_CODEC.from_dict(merged)
