"""JSON merge patch (application/merge-patch+json) as kube-apiserver 1.32 applies it.

Expected results come from RFC 7386 appendix A, from gopkg.in/evanphx/json-patch.v4 v4.12.0's
merge_test.go (the library kube-apiserver uses), and from k8s.io/apiserver/pkg/endpoints/handlers/
patch.go for the HTTP answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import protokube.gateway.patch.mergepatch as mergepatch
from protokube.gateway.errors import StatusError
from protokube.gateway.patch.dispatch import MERGE_PATCH, apply_patch
from protokube.gateway.patch.lazynode import marshal, to_value
from protokube.schema.jsonencode import to_dict


def run(doc: Any, patch: str) -> Any:
    return to_value(mergepatch.apply(doc, patch.encode()))


# RFC 7386 appendix A (as evanphx's rfcTests has them; the two it rejects are below).
RFC_7386 = [
    ({"a": "b"}, '{"a":"c"}', {"a": "c"}),
    ({"a": "b"}, '{"b":"c"}', {"a": "b", "b": "c"}),
    ({"a": "b"}, '{"a":null}', {}),
    ({"a": "b", "b": "c"}, '{"a":null}', {"b": "c"}),
    ({"a": ["b"]}, '{"a":"c"}', {"a": "c"}),
    ({"a": "c"}, '{"a":["b"]}', {"a": ["b"]}),
    ({"a": {"b": "c"}}, '{"a": {"b": "d", "c": null}}', {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, '{"a":[1]}', {"a": [1]}),
    (["a", "b"], '["c","d"]', ["c", "d"]),
    ({"a": "b"}, '["c"]', ["c"]),
    ({"e": None}, '{"a":1}', {"a": 1, "e": None}),
    ([1, 2], '{"a":"b","c":null}', {"a": "b"}),
    ({}, '{"a":{"bb":{"ccc":null}}}', {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("doc", "patch", "result"), RFC_7386)
def test_rfc7386_appendix_a(doc: Any, patch: str, result: Any) -> None:
    assert run(doc, patch) == result


@pytest.mark.parametrize("patch", ["null", '"bar"', "1", "true"])
def test_rfc7386_null_and_scalar_patches_are_rejected(patch: str) -> None:
    """evanphx TestMergePatchFailRFCCases: ErrBadJSONPatch, which patch.go answers with 400."""
    with pytest.raises(StatusError) as excinfo:
        apply_patch(MERGE_PATCH, {"a": "foo"}, patch.encode(), None, field_validation="Ignore")
    assert to_dict(excinfo.value.status) == {
        "metadata": {},
        "status": "Failure",
        "message": "Invalid JSON Patch",
        "reason": "BadRequest",
        "code": 400,
    }


# evanphx merge_test.go: TestMergePatchNilArray, TestMergePatchReplacesNonObjectsWholesale,
# TestMergePatchNilDoc, TestMergePatchReturnsEmptyArrayOnEmptyArray, TestMergePatchReplaceKeyNotEscaping.
EVANPHX_MERGE = [
    ({"a": [{"b": "c"}]}, '{"a": [1]}', {"a": [1]}),
    ({"a": [{"b": "c"}]}, '{"a": [null, 1]}', {"a": [None, 1]}),
    (["a", None], "[null]", [None]),
    (["a", "b"], '["a", null]', ["a", None]),
    ({"a": ["b"]}, '{"a": ["b", null]}', {"a": ["b", None]}),
    ({"a": []}, '{"a": ["b", null, null, "a"]}', {"a": ["b", None, None, "a"]}),
    ({"a": 1}, "[2]", [2]),
    ({"a": 1, "b": 1}, '{ "a": 2 }', {"a": 2, "b": 1}),
    ({"title": None}, '{ "title": {"foo": "bar"} }', {"title": {"foo": "bar"}}),
    ({"array": ["one", "two"]}, '{ "array": [] }', {"array": []}),
    (
        {"obj": {"title/escaped": "hello"}},
        '{ "obj": { "title/escaped": "goodbye" } }',
        {"obj": {"title/escaped": "goodbye"}},
    ),
    (
        {"person": {"title": "hello", "age": 18}},
        '{ "person": { "title": "goodbye" } }',
        {"person": {"title": "goodbye", "age": 18}},
    ),
]


@pytest.mark.parametrize(("doc", "patch", "result"), EVANPHX_MERGE)
def test_evanphx_merge_cases(doc: Any, patch: str, result: Any) -> None:
    assert run(doc, patch) == result


def test_nulls_are_pruned_from_added_values_also_inside_arrays() -> None:
    """pruneNulls: null members go recursively; arrays keep null elements."""
    assert run({}, '{"a": {"x": null, "y": [{"z": null, "k": 1}, null]}}') == {"a": {"y": [{"k": 1}, None]}}
    assert run({"a": "s"}, '{"a": {"x": null, "y": 1}}') == {"a": {"y": 1}}


def test_an_object_replaced_by_a_non_object_keeps_its_nulls() -> None:
    """merge(): when the patch value is not an object, it is returned without pruning."""
    assert run({"a": {"b": 1}}, '{"a": [{"x": null}]}') == {"a": [{"x": None}]}
    assert run({"a": [1]}, '{"a": [{"x": null}]}') == {"a": [{}]}


def test_result_keeps_the_patch_number_text() -> None:
    node = mergepatch.apply({"spec": {"replicas": 1}, "kind": "Deployment"}, b'{"spec": {"replicas": 2.0}}')
    assert marshal(node) == '{"kind":"Deployment","spec":{"replicas":2.0}}'
    assert to_value(node) == {"kind": "Deployment", "spec": {"replicas": 2.0}}


# -- Through the entry point: kube-apiserver's answers ---------------------------------------------


def test_labels_on_a_deployment() -> None:
    current = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    }
    body = {
        "metadata": {"labels": {"tier": None, "env": "prod"}},
        "spec": {"template": {"spec": {"containers": [{"name": "x"}]}}},
    }
    result = apply_patch(MERGE_PATCH, current, json.dumps(body).encode(), None)
    assert result.object == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "env": "prod"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "x"}]}}},  # lists replace
    }
    assert current["metadata"]["labels"] == {"app": "web", "tier": "front"}


# Warn (the default) and Strict decode with sigs.k8s.io/json into map[string]interface{} first
# ("error decoding patch: ..."); Ignore goes straight to MergePatch (any syntax error: "Invalid JSON Patch").
DECODE_ERRORS = [
    ("", "error decoding patch: unexpected end of JSON input", "Invalid JSON Patch"),
    ('{"a": }', "error decoding patch: invalid character '}' looking for beginning of value", "Invalid JSON Patch"),
    ("null", None, "Invalid JSON Patch"),
    (
        '"x"',
        "error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}",
        "Invalid JSON Patch",
    ),
    ("[1]", "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}", None),
    ('{"a": 1e400}', "error decoding patch: json: cannot unmarshal number 1e400 into Go value of type float64", None),
]


@pytest.mark.parametrize(("body", "warn", "ignore"), DECODE_ERRORS)
def test_decoding_errors(body: str, warn: str | None, ignore: str | None) -> None:
    for validation, message in (("Warn", warn or "Invalid JSON Patch"), ("Ignore", ignore)):
        if message is None:
            apply_patch(MERGE_PATCH, {"a": 1}, body.encode(), None, field_validation=validation)
            continue
        with pytest.raises(StatusError) as excinfo:
            apply_patch(MERGE_PATCH, {"a": 1}, body.encode(), None, field_validation=validation)
        assert (excinfo.value.code, excinfo.value.status.reason, excinfo.value.status.message) == (
            400,
            "BadRequest",
            message,
        )


def test_array_patch_without_strict_decoding_becomes_the_document() -> None:
    """Under Ignore an array patch is not an error in MergePatch; the handler's decoding then fails."""
    result = apply_patch(MERGE_PATCH, {"a": 1}, b'[1, {"b": null}]', None, field_validation="Ignore")
    assert result.object == [1, {}]


def test_duplicate_fields_are_strict_errors() -> None:
    body = b'{"metadata": {"labels": {"a": "1", "a": "2"}}, "x": 1, "x": 2}'
    result = apply_patch(MERGE_PATCH, {}, body, None)
    assert result.object == {"metadata": {"labels": {"a": "2"}}, "x": 2}
    assert result.strict_errors == ['duplicate field "metadata.labels.a"', 'duplicate field "x"']
    assert result.invalid_value == '{"metadata":{"labels":{"a":"2"}},"x":2}'
    assert apply_patch(MERGE_PATCH, {}, body, None, field_validation="Ignore").strict_errors == []
