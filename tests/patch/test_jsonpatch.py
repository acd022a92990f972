"""JSON patch (application/json-patch+json) as kube-apiserver 1.32 applies it.

Expected results come from RFC 6902 appendix A, from the test tables of gopkg.in/evanphx/json-patch.v4
v4.12.0 (patch_test.go: Cases, BadCases, TestCases, EqualityCases — the library kube-apiserver uses),
and from k8s.io/apiserver/pkg/endpoints/handlers/patch.go for the HTTP answers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import protokube.gateway.patch.jsonpatch as jsonpatch
from protokube.gateway.errors import StatusError
from protokube.gateway.patch.dispatch import JSON_PATCH, apply_patch
from protokube.gateway.patch.gofmt import ServerPanic
from protokube.gateway.patch.lazynode import Node, marshal, to_value
from protokube.schema.jsonencode import to_dict

GENERIC_422 = "the server rejected our request due to an error in our request"


def run(doc: Any, patch: str) -> Any:
    """Apply with the library directly (documents may be arrays, as in upstream's tables)."""
    return to_value(jsonpatch.apply(doc, jsonpatch.decode(patch.encode())))


def status(excinfo: pytest.ExceptionInfo[StatusError]) -> dict[str, Any]:
    return to_dict(excinfo.value.status)


# RFC 6902 appendix A: (document, patch, result or None for an error).
RFC_6902 = [
    # A.1 Adding an Object Member
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz", "value": "qux"}]', {"baz": "qux", "foo": "bar"}),
    # A.2 Adding an Array Element
    ({"foo": ["bar", "baz"]}, '[{"op": "add", "path": "/foo/1", "value": "qux"}]', {"foo": ["bar", "qux", "baz"]}),
    # A.3 Removing an Object Member
    ({"baz": "qux", "foo": "bar"}, '[{"op": "remove", "path": "/baz"}]', {"foo": "bar"}),
    # A.4 Removing an Array Element
    ({"foo": ["bar", "qux", "baz"]}, '[{"op": "remove", "path": "/foo/1"}]', {"foo": ["bar", "baz"]}),
    # A.5 Replacing a Value
    ({"baz": "qux", "foo": "bar"}, '[{"op": "replace", "path": "/baz", "value": "boo"}]', {"baz": "boo", "foo": "bar"}),
    # A.6 Moving a Value
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        '[{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]',
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    # A.7 Moving an Array Element
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        '[{"op": "move", "from": "/foo/1", "path": "/foo/3"}]',
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    # A.8 Testing a Value: Success
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        '[{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}]',
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    # A.9 Testing a Value: Error
    ({"baz": "qux"}, '[{"op": "test", "path": "/baz", "value": "bar"}]', None),
    # A.10 Adding a Nested Member Object
    (
        {"foo": "bar"},
        '[{"op": "add", "path": "/child", "value": {"grandchild": {}}}]',
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    # A.11 Ignoring Unrecognized Elements
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]', {"foo": "bar", "baz": "qux"}),
    # A.12 Adding to a Nonexistent Target
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz/bat", "value": "qux"}]', None),
    # A.13 Invalid JSON Patch Document: Go keeps the last "op" (remove), which fails on the missing /baz
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz", "value": "qux", "op": "remove"}]', None),
    # A.14 ~ Escape Ordering
    ({"/": 9, "~1": 10}, '[{"op": "test", "path": "/~01", "value": 10}]', {"/": 9, "~1": 10}),
    # A.15 Comparing Strings and Numbers
    ({"/": 9, "~1": 10}, '[{"op": "test", "path": "/~01", "value": "10"}]', None),
    # A.16 Adding an Array Value
    ({"foo": ["bar"]}, '[{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]', {"foo": ["bar", ["abc", "def"]]}),
]


@pytest.mark.parametrize(("doc", "patch", "result"), RFC_6902)
def test_rfc6902_appendix_a(doc: Any, patch: str, result: Any) -> None:
    if result is None:
        with pytest.raises(jsonpatch.PatchFailed):
            run(doc, patch)
    else:
        assert run(doc, patch) == result


# evanphx/json-patch v4.12.0 patch_test.go Cases (those with a non-empty document).
EVANPHX_CASES = [
    ({"foo": ["bar", "baz"]}, '[{"op": "add", "path": "/foo/-1", "value": "qux"}]', {"foo": ["bar", "baz", "qux"]}),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        '[{"op": "move", "from": "/foo/1", "path": "/foo/2"}]',
        {"foo": ["all", "cows", "grass", "eat"]},
    ),
    (
        {"foo": "bar", "qux": {"baz": 1, "bar": None}},
        '[{"op": "remove", "path": "/qux/bar"}]',
        {"foo": "bar", "qux": {"baz": 1}},
    ),
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz", "value": null}]', {"baz": None, "foo": "bar"}),
    ({"foo": ["bar"]}, '[{"op": "replace", "path": "/foo/0", "value": "baz"}]', {"foo": ["baz"]}),
    (
        {"foo": ["bar", "qux", "baz"]},
        '[{"op": "replace", "path": "/foo/1", "value": "bum"}]',
        {"foo": ["bar", "bum", "baz"]},
    ),
    (
        [{"foo": ["bar", "qux", "baz"]}],
        '[{"op": "replace", "path": "/0/foo/0", "value": "bum"}]',
        [{"foo": ["bum", "qux", "baz"]}],
    ),
    (
        [{"foo": ["bar", "qux", "baz"], "bar": ["qux", "baz"]}],
        '[{"op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}]',
        [{"foo": ["bar", "qux", "baz"], "bar": ["bar", "qux", "baz"]}],
    ),
    (
        [{"foo": ["bar", "qux", "baz"], "bar": ["qux", "baz"]}],
        '[{"op": "copy", "from": "/0/foo/0", "path": "/0/bar"}]',
        [{"foo": ["bar", "qux", "baz"], "bar": "bar"}],
    ),
    (
        [{"foo": {"bar": ["qux", "baz"]}, "baz": {"qux": "bum"}}],
        '[{"op": "copy", "from": "/0/foo/bar", "path": "/0/baz/bar"}]',
        [{"baz": {"bar": ["qux", "baz"], "qux": "bum"}, "foo": {"bar": ["qux", "baz"]}}],
    ),
    ({"foo": ["bar"]}, '[{"op": "copy", "path": "/foo/0", "from": "/foo"}]', {"foo": [["bar"], "bar"]}),
    ({"foo": ["bar", "qux", "baz"]}, '[{"op": "remove", "path": "/foo/-2"}]', {"foo": ["bar", "baz"]}),
    ({"foo": []}, '[{"op": "add", "path": "/foo/-1", "value": "qux"}]', {"foo": ["qux"]}),
    ({"bar": [{"baz": None}]}, '[{"op": "replace", "path": "/bar/0/baz", "value": 1}]', {"bar": [{"baz": 1}]}),
    ({"bar": [{"baz": 1}]}, '[{"op": "replace", "path": "/bar/0/baz", "value": null}]', {"bar": [{"baz": None}]}),
    ({"bar": [None]}, '[{"op": "replace", "path": "/bar/0", "value": 1}]', {"bar": [1]}),
    ({"bar": [1]}, '[{"op": "replace", "path": "/bar/0", "value": null}]', {"bar": [None]}),
    (
        {"id": "0", "parentID": "0"},
        '[{"op": "test", "path": "", "value": {"id": "0", "parentID": "0"}},'
        ' {"op": "replace", "path": "", "value": {"id": "7", "originalID": "bar", "parentID": "0"}}]',
        {"id": "7", "originalID": "bar", "parentID": "0"},
    ),
]


@pytest.mark.parametrize(("doc", "patch", "result"), EVANPHX_CASES)
def test_evanphx_cases(doc: Any, patch: str, result: Any) -> None:
    assert run(doc, patch) == result


# evanphx/json-patch v4.12.0 patch_test.go BadCases: each fails to apply.
EVANPHX_BAD_CASES = [
    ({"foo": "bar"}, '[{"op": "add", "path": "/baz/bat", "value": "qux"}]'),
    ({"a": {"b": {"d": 1}}}, '[{"op": "remove", "path": "/a/b/c"}]'),
    ({"a": {"b": {"d": 1}}}, '[{"op": "move", "from": "/a/b/c", "path": "/a/b/e"}]'),
    ({"a": {"b": [1]}}, '[{"op": "remove", "path": "/a/b/1"}]'),
    ({"a": {"b": [1]}}, '[{"op": "move", "from": "/a/b/1", "path": "/a/b/2"}]'),
    ({"foo": "bar"}, '[{"op": "add", "pathz": "/baz", "value": "qux"}]'),
    ({"foo": "bar"}, '[{"op": "add", "path": "", "value": "qux"}]'),
    ({"foo": ["bar", "baz"]}, '[{"op": "replace", "path": "/foo/2", "value": "bum"}]'),
    ({"foo": ["bar", "baz"]}, '[{"op": "add", "path": "/foo/-4", "value": "bum"}]'),
    ({"name": {"foo": "bat", "qux": "bum"}}, '[{"op": "replace", "path": "/foo/bar", "value": "baz"}]'),
    ({"foo": ["bar"]}, '[{"op": "add", "path": "/foo/2", "value": "bum"}]'),
    ({"foo": []}, '[{"op": "remove", "path": "/foo/-"}]'),
    ({"foo": []}, '[{"op": "remove", "path": "/foo/-1"}]'),
    ({"foo": ["bar"]}, '[{"op": "remove", "path": "/foo/-2"}]'),
    ({}, '[{"op": null, "path": ""}]'),
    ({}, '[{"op": "add", "path": null}]'),
    ({}, '[{"op": "copy", "from": null}]'),
    ({"foo": ["bar"]}, '[{"op": "copy", "path": "/foo/6666666666", "from": "/"}]'),
    ({"foo": ["bar"]}, '[{"op": "copy", "path": "/foo/2", "from": "/foo/0"}]'),
    ({"foo": ["all", "grass", "cows", "eat"]}, '[{"op": "move", "from": "/foo/1", "path": "/foo/4"}]'),
]


@pytest.mark.parametrize(("doc", "patch"), EVANPHX_BAD_CASES)
def test_evanphx_bad_cases(doc: Any, patch: str) -> None:
    with pytest.raises(jsonpatch.PatchFailed):
        run(doc, patch)


def test_evanphx_accumulated_copy_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """patch_test.go with AccumulatedCopySizeLimit 100: two copies of a 50-byte string fit, of 51 not."""
    monkeypatch.setattr(jsonpatch, "COPY_SIZE_LIMIT", 100)
    copies = '[{"op": "copy", "path": "/foo/-", "from": "/foo/1"}, {"op": "copy", "path": "/foo/-", "from": "/foo/1"}]'
    assert run({"foo": ["A", "A" * 48]}, copies) == {"foo": ["A", "A" * 48, "A" * 48, "A" * 48]}
    with pytest.raises(
        jsonpatch.PatchFailed, match="accumulated size increase of copy is 102, exceeding the limit 100"
    ):
        run({"foo": ["A", "A" * 49]}, copies)


# evanphx/json-patch v4.12.0 patch_test.go TestCases: (doc, patch, passes, failed path).
EVANPHX_TEST_OPS = [
    ({"baz": "qux", "foo": ["a", 2, "c"]}, '[{"op": "test", "path": "/foo/1", "value": 2}]', True, ""),
    ({"baz": "qux"}, '[{"op": "test", "path": "/baz", "value": "bar"}]', False, "/baz"),
    ({"baz": "qux", "foo": ["a", 2, "c"]}, '[{"op": "test", "path": "/foo/1", "value": "c"}]', False, "/foo/1"),
    ({"baz": "qux"}, '[{"op": "test", "path": "/foo", "value": 42}]', False, "/foo"),
    ({"baz": "qux"}, '[{"op": "test", "path": "/foo", "value": null}]', True, ""),
    ({"foo": None}, '[{"op": "test", "path": "/foo", "value": null}]', True, ""),
    ({"foo": {}}, '[{"op": "test", "path": "/foo", "value": null}]', False, "/foo"),
    ({"foo": []}, '[{"op": "test", "path": "/foo", "value": null}]', False, "/foo"),
    ({"baz/foo": "qux"}, '[{"op": "test", "path": "/baz~1foo", "value": "qux"}]', True, ""),
    ({"foo": []}, '[{"op": "test", "path": "/foo"}]', False, "/foo"),
]


@pytest.mark.parametrize(("doc", "patch", "passes", "failed_path"), EVANPHX_TEST_OPS)
def test_evanphx_test_operation(doc: Any, patch: str, passes: bool, failed_path: str) -> None:
    if passes:
        assert run(doc, patch) == doc
    else:
        with pytest.raises(jsonpatch.PatchFailed) as excinfo:
            run(doc, patch)
        assert str(excinfo.value) == f"testing value {failed_path} failed: test failed"


# evanphx/json-patch v4.12.0 patch_test.go EqualityCases (Equal compares raw JSON, both ways).
EQUALITY = [
    ('{"foo": "bar"}', '{"foo": "bar", "baz": "qux"}', False),
    ('{\n\t"foo": "bar",\n\t"baz": "qux"\n}', '{"foo": "bar", "baz": "qux"}', True),
    ('{"baz": "qux", "foo": "bar"}', '{"foo": "bar", "baz": "qux"}', True),
    ('{"foo": null}', '{"foo": "bar"}', False),
    ('{"foo": null}', '{"foo": null}', True),
    ('["foo", "bar", "baz"]', '["bar", "baz", "foo"]', False),
    ('["foo", "bar", "baz"]', '["foo", "bar", "baz"]', True),
    (
        '{"int": 6, "bool": true, "float": 7.0, "string": "s", "null": null}',
        '{"int": 6, "bool": true, "float": 7.0, "string": "s", "null": null}',
        True,
    ),
    ('{"foo": ["an", "array"], "bar": {"an": "object"}}', '{"foo": null, "bar": null}', False),
    ('"foo"', "null", False),
    ("6", "null", False),
    ("6.01", "null", False),
    ("false", "null", False),
]


@pytest.mark.parametrize(("a", "b", "equal"), EQUALITY)
def test_evanphx_equality(a: str, b: str, equal: bool) -> None:
    assert Node(a).equal(Node(b)) is equal
    assert Node(b).equal(Node(a)) is equal


# -- Upstream readings that differ from the RFC --------------------------------------------------


def test_replace_of_a_missing_member_adds_it() -> None:
    """partialDoc.get never fails, so replace only checks array indexes."""
    assert run({"a": 1}, '[{"op": "replace", "path": "/b", "value": 2}]') == {"a": 1, "b": 2}


def test_copy_from_a_missing_member_copies_null() -> None:
    assert run({"a": 1}, '[{"op": "copy", "from": "/nope", "path": "/b"}]') == {"a": 1, "b": None}


def test_value_left_out_is_null() -> None:
    assert run({"a": 1}, '[{"op": "add", "path": "/b"}, {"op": "replace", "path": "/a"}]') == {"a": None, "b": None}


def test_negative_index_for_add_counts_from_one_past_the_end() -> None:
    assert run({"l": [1, 2, 3]}, '[{"op": "add", "path": "/l/-1", "value": 9}]') == {"l": [1, 2, 3, 9]}
    assert run({"l": [1, 2, 3]}, '[{"op": "add", "path": "/l/-4", "value": 9}]') == {"l": [9, 1, 2, 3]}
    assert run({"l": [1, 2, 3]}, '[{"op": "remove", "path": "/l/-1"}]') == {"l": [1, 2]}


def test_indexes_are_go_atoi() -> None:
    assert run({"l": [1, 2, 3]}, '[{"op": "remove", "path": "/l/+1"}]') == {"l": [1, 3]}
    assert run({"l": [1, 2, 3]}, '[{"op": "remove", "path": "/l/01"}]') == {"l": [1, 3]}
    for bad in ("1_0", " 1", "1.0", ""):
        with pytest.raises(jsonpatch.PatchFailed):
            run({"l": [1, 2, 3]}, json.dumps([{"op": "remove", "path": f"/l/{bad}"}]))


def test_path_without_leading_slash_ignores_its_first_segment() -> None:
    assert run({"a": 1}, '[{"op": "add", "path": "x/b", "value": 2}]') == {"a": 1, "b": 2}
    with pytest.raises(jsonpatch.PatchFailed):
        run({"a": 1}, '[{"op": "add", "path": "b", "value": 2}]')


def test_replace_whole_document_with_a_scalar_does_nothing() -> None:
    assert run({"a": 1}, '[{"op": "replace", "path": "", "value": 5}]') == {"a": 1}
    assert run({"a": 1}, '[{"op": "replace", "path": "", "value": {"b": 2}}]') == {"b": 2}


def test_move_into_its_own_child_fails() -> None:
    with pytest.raises(jsonpatch.PatchFailed):
        run({"a": {"b": 1}}, '[{"op": "move", "from": "/a", "path": "/a/c"}]')


def test_move_to_itself_keeps_the_value() -> None:
    assert run({"a": {"b": 1}}, '[{"op": "move", "from": "/a", "path": "/a"}]') == {"a": {"b": 1}}


def test_test_compares_number_text() -> None:
    """Scalars compare by compacted raw JSON: 1 is not 1.0 (the server wrote 1)."""
    assert run({"n": 1}, '[{"op": "test", "path": "/n", "value": 1}]') == {"n": 1}
    with pytest.raises(jsonpatch.PatchFailed):
        run({"n": 1}, '[{"op": "test", "path": "/n", "value": 1.0}]')
    # a value the patch itself wrote compares with the patch's text
    assert run({}, '[{"op": "add", "path": "/n", "value": 1.0}, {"op": "test", "path": "/n", "value": 1.0}]') == {
        "n": 1.0
    }


def test_test_compares_strings_as_go_wrote_them() -> None:
    """The current object's JSON is Go's encoding: "<" is written \\u003c, so only that text matches."""
    with pytest.raises(jsonpatch.PatchFailed):
        run({"s": "a<b"}, '[{"op": "test", "path": "/s", "value": "a<b"}]')
    assert run({"s": "a<b"}, '[{"op": "test", "path": "/s", "value": "a\\u003cb"}]') == {"s": "a<b"}


def test_test_without_value_on_a_missing_member_panics() -> None:
    """op.value().raw dereferences a nil node: upstream's handler panics (plain-text 500)."""
    with pytest.raises(ServerPanic) as excinfo:
        run({"a": 1}, '[{"op": "test", "path": "/nope"}]')
    assert excinfo.value.code == 500


def test_patched_json_is_go_encoding_with_untouched_objects_in_their_order() -> None:
    """Objects the patch traversed are written with sorted keys, others as they were (a struct in
    field order: name before labels)."""
    current = {
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"a": "2", "b": "1"}},
        "data": {"z": "<", "y": "1"},
    }
    root = jsonpatch.apply(current, jsonpatch.decode(b'[{"op": "add", "path": "/data/x", "value": 1.50}]'))
    assert marshal(root) == (
        '{"data":{"x":1.50,"y":"1","z":"\\u003c"},"kind":"ConfigMap",'
        '"metadata":{"name":"x","labels":{"a":"2","b":"1"}}}'
    )


# -- Through the entry point: kube-apiserver's answers ---------------------------------------------


def patch(body: str | bytes, current: dict[str, Any] | None = None, validation: str = "Warn") -> Any:
    data = body.encode() if isinstance(body, str) else body
    return apply_patch(JSON_PATCH, current or {"a": 1}, data, None, field_validation=validation)


def test_every_operation_on_a_configmap() -> None:
    current = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    body = json.dumps(
        [
            {"op": "test", "path": "/data/a", "value": "1"},
            {"op": "add", "path": "/metadata/labels", "value": {"app": "web"}},
            {"op": "replace", "path": "/data/a", "value": "one"},
            {"op": "copy", "from": "/data/a", "path": "/data/c"},
            {"op": "move", "from": "/data/b", "path": "/data/d"},
            {"op": "remove", "path": "/data/c"},
        ]
    )
    result = patch(body, current)
    assert result.object == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app": "web"}},
        "data": {"a": "one", "d": "2"},
    }
    assert result.strict_errors == []
    assert current["data"] == {"a": "1", "b": "2"}  # the current object is not changed


def test_failed_operation_is_422_with_the_generic_message() -> None:
    """patch.go: NewGenericServerResponse(http.StatusUnprocessableEntity, ...): reason Invalid,
    fixed message, empty details; the library's text does not reach the client."""
    with pytest.raises(StatusError) as excinfo:
        patch('[{"op": "test", "path": "/a", "value": 2}]')
    assert status(excinfo) == {
        "metadata": {},
        "status": "Failure",
        "message": GENERIC_422,
        "reason": "Invalid",
        "details": {},
        "code": 422,
    }


def test_unknown_operation_is_422() -> None:
    with pytest.raises(StatusError) as excinfo:
        patch('[{"op": "merge", "path": "/a", "value": 2}]')
    assert (excinfo.value.code, excinfo.value.status.message) == (422, GENERIC_422)
    assert str(excinfo.value.__cause__) == "Unexpected kind: merge"


def test_too_many_operations_is_413() -> None:
    """patch.go: maxJSONPatchOperations = 10000, NewRequestEntityTooLargeError."""
    ops = [{"op": "test", "path": "/a", "value": 1}] * 10001
    with pytest.raises(StatusError) as excinfo:
        patch(json.dumps(ops))
    assert status(excinfo) == {
        "metadata": {},
        "status": "Failure",
        "message": "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
        "reason": "RequestEntityTooLarge",
        "code": 413,
    }
    assert patch(json.dumps(ops[:10000])).object == {"a": 1}


# Decoding errors: fieldValidation Ignore runs jsonpatch.DecodePatch (encoding/json into
# jsonpatch.Patch); Warn (the default) and Strict first run sigs.k8s.io/json's UnmarshalStrict into
# []handlers.jsonPatchOp and prefix "error decoding patch: ".
DECODE_ERRORS = [
    ("", "unexpected end of JSON input", "unexpected end of JSON input"),
    ("[{", "unexpected end of JSON input", "unexpected end of JSON input"),
    ("nope", "invalid character 'o' in literal null (expecting 'u')", None),
    ("[1,]", "invalid character ']' looking for beginning of value", None),
    (
        '{"op": "add"}',
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
    ),
    (
        '"x"',
        "json: cannot unmarshal string into Go value of type jsonpatch.Patch",
        "json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp",
    ),
    (
        "[1]",
        "json: cannot unmarshal number into Go value of type jsonpatch.Operation",
        "json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
    ),
    (
        '[["add"]]',
        "json: cannot unmarshal array into Go value of type jsonpatch.Operation",
        "json: cannot unmarshal array into Go value of type handlers.jsonPatchOp",
    ),
]


@pytest.mark.parametrize(("body", "ignore", "warn"), DECODE_ERRORS)
def test_decoding_errors_are_400(body: str, ignore: str, warn: str | None) -> None:
    for validation, message in (("Ignore", ignore), ("Warn", f"error decoding patch: {warn or ignore}")):
        with pytest.raises(StatusError) as excinfo:
            patch(body, validation=validation)
        assert status(excinfo) == {
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "BadRequest",
            "code": 400,
        }


def test_operation_field_of_the_wrong_type() -> None:
    """jsonPatchOp.op is a Go string: strict decoding fails (400); without it the operation is "unknown" (422)."""
    with pytest.raises(StatusError) as excinfo:
        patch('[{"op": 1, "path": "/a"}]', validation="Strict")
    assert excinfo.value.status.message == (
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"
    )
    with pytest.raises(StatusError) as excinfo:
        patch('[{"op": 1, "path": "/a"}]', validation="Ignore")
    assert excinfo.value.code == 422


def test_strict_errors_are_reported_with_their_paths() -> None:
    result = patch('[{"op": "add", "path": "/b", "value": {"x": 1, "x": 2}, "extra": 1, "op": "add"}]')
    assert result.object == {"a": 1, "b": {"x": 2}}
    assert result.strict_errors == [
        'json patch duplicate field "[0].value.x"',
        'json patch unknown field "[0].extra"',
        'json patch duplicate field "[0].op"',
    ]
    assert patch('[{"op": "add", "path": "/b", "value": 1, "extra": 1}]', validation="Ignore").strict_errors == []


def test_strict_error_is_422_with_the_patched_json() -> None:
    """patch.go under Strict: NewInvalid(GroupKind{}, "", patch: Invalid value: <patched JSON>)."""
    result = patch('[{"op": "add", "path": "/b", "value": 2, "extra": 1}]', validation="Strict")
    with pytest.raises(StatusError) as excinfo:
        raise result.strict_error()
    body = status(excinfo)
    detail = 'strict decoding error: json patch unknown field "[0].extra"'
    assert body["code"] == 422 and body["reason"] == "Invalid"
    assert body["message"] == f' "" is invalid: patch: Invalid value: "{{\\"a\\":1,\\"b\\":2}}": {detail}'
    assert body["details"] == {
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": f'Invalid value: "{{\\"a\\":1,\\"b\\":2}}": {detail}',
                "field": "patch",
            }
        ]
    }


def test_null_patch_is_no_operation() -> None:
    assert patch("null").object == {"a": 1}
    assert patch("[]").object == {"a": 1}
