"""The structural-schema library on its own (k8s.io/apiextensions-apiserver pkg/apiserver/schema):
structural checks, pruning, defaulting, validation messages as upstream words them, CEL rules."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from protokube.gateway.apiextensions.schema import Structural, structural_errors

ROOT = "spec.versions[0].schema.openAPIV3Schema"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 2, "maxLength": 5},
                "count": {"type": "integer", "format": "int32", "default": 3, "exclusiveMinimum": True, "minimum": 0},
                "ratio": {"type": "number", "maximum": 1, "multipleOf": 0.25},
                "when": {"type": "string", "format": "date-time"},
                "port": {"x-kubernetes-int-or-string": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "x-kubernetes-list-type": "set"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "maybe": {"type": "string", "nullable": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                },
            },
            "x-kubernetes-validations": [
                {"rule": "!has(self.ratio) || self.ratio <= 0.5", "messageExpression": "'ratio ' + string(self.ratio)"},
            ],
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string", "enum": ["A", "B"]}}},
    },
}


def errors_of(obj: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> list[str]:
    return [str(e) for e in Structural.from_props(schema).validate(obj)]


def test_a_structural_schema_passes() -> None:
    assert structural_errors(SCHEMA, ROOT) == []


def test_what_is_not_structural() -> None:
    bad = {
        "properties": {
            "a": {"properties": {}},
            "b": {"type": "array"},
            "c": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            },
            "d": {"type": "string", "x-kubernetes-int-or-string": True},
            "e": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map"},
            "f": {"$ref": "#/definitions/x", "type": "string"},
        }
    }
    assert [str(e) for e in structural_errors(bad, ROOT)] == [
        f"{ROOT}.type: Required value: must not be empty at the root",
        f"{ROOT}.properties[a].type: Required value: must not be empty for specified object fields",
        f"{ROOT}.properties[b].items: Required value: must be specified",
        f"{ROOT}.properties[c].additionalProperties: Forbidden: "
        "additionalProperties and properties are mutual exclusive",
        f"{ROOT}.properties[d].type: Forbidden: must be empty if x-kubernetes-int-or-string is true",
        f"{ROOT}.properties[e].x-kubernetes-list-map-keys: Required value: must not be empty if "
        "x-kubernetes-list-type is map",
        f"{ROOT}.properties[f].$ref: Forbidden: $ref is not supported",
    ]
    defaulted = {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}
    assert [str(e) for e in structural_errors(defaulted, ROOT)] == [
        f'{ROOT}.properties[n].default: Invalid value: "string": {ROOT}.properties[n].default in body '
        'must be of type integer: "string"'
    ]


def test_prune_and_default() -> None:
    obj = {
        "apiVersion": "x/v1",
        "kind": "K",
        "metadata": {"name": "n"},
        "spec": {
            "name": "abc",
            "zz": 1,
            "free": {"any": {"thing": 1}},
            "template": {"apiVersion": "v1", "kind": "P", "metadata": {"a": 1}, "spec": {"x": 1, "y": 2}},
        },
        "top": True,
    }
    schema = Structural.from_props(SCHEMA)
    assert schema.prune(obj) == ["spec.template.spec.y", "spec.zz", "top"]
    schema.default(obj)
    assert obj["spec"]["count"] == 3 and obj["spec"]["free"] == {"any": {"thing": 1}}
    assert obj["spec"]["template"]["metadata"] == {"a": 1}  # embedded resources keep their metadata


def test_messages_as_upstream_words_them() -> None:
    obj = {
        "spec": {
            "name": "a",
            "count": 0,
            "ratio": 0.7,
            "when": "yesterday",
            "port": 1.5,
            "labels": {"a": "1", "b": "2", "c": 3},
            "tags": ["x", "x", "y"],
            "maybe": None,
            "template": {"spec": {}},
        },
        "status": {"phase": "C"},
    }
    assert errors_of(obj) == [
        'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',
        "spec.count: Invalid value: 0: spec.count in body should be greater than 0",
        "spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.25",
        'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
        'spec.port: Invalid value: "number": spec.port in body must be of type integer or string: "number"',
        "spec.labels: Too many: 3: must have at most 2 items",
        'spec.labels.c: Invalid value: "integer": spec.labels.c in body must be of type string: "integer"',
        "spec.tags: Too many: 3: must have at most 2 items",
        'spec.tags[1]: Duplicate value: "x"',
        "spec.template.apiVersion: Required value: must not be empty",
        "spec.template.kind: Required value: must not be empty",
        'status.phase: Unsupported value: "C": supported values: "A", "B"',
        'spec: Invalid value: "object": ratio 0.7',
    ]
    assert errors_of({"spec": {}}) == ["spec.name: Required value"]
    assert errors_of({"spec": {"name": "toolong"}}) == ["spec.name: Too long: may not be more than 5 bytes"]


def test_rules_use_the_kubernetes_cel_libraries() -> None:
    schema = {
        "type": "object",
        "properties": {"url": {"type": "string"}, "memory": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "!has(self.url) || isURL(self.url)", "message": "not a URL"},
            {"rule": "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))"},
        ],
    }
    structural = Structural.from_props(schema)
    assert structural.validate({"url": "https://example.com", "memory": "512Mi"}) == []
    assert [str(e) for e in structural.validate({"url": "example.com", "memory": "2Gi"})] == [
        ': Invalid value: "object": not a URL',
        ': Invalid value: "object": failed rule: '
        "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))",
    ]


def test_transition_rules_see_the_old_value() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "mode": {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "self == oldSelf", "message": "is immutable", "reason": "FieldValueForbidden"}
                        ],
                    }
                },
            }
        },
    }
    structural = Structural.from_props(schema)
    assert structural.validate({"spec": {"mode": "a"}}) == []  # no old value: transition rules wait
    assert [str(e) for e in structural.validate({"spec": {"mode": "b"}}, {"spec": {"mode": "a"}})] == [
        "spec.mode: Forbidden: is immutable"
    ]


def test_transition_rules_of_map_list_items_see_the_item_with_the_same_keys() -> None:
    immutable_size = {"rule": "self.size == oldSelf.size", "message": "size is immutable"}
    item = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
        "x-kubernetes-validations": [immutable_size],
    }
    listed = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": item}
    structural = Structural.from_props({"type": "object", "properties": {"disks": listed}})
    old = {"disks": [{"name": "a", "size": 1}, {"name": "b", "size": 2}]}
    reordered = {"disks": [{"name": "b", "size": 2}, {"name": "a", "size": 1}, {"name": "c", "size": 9}]}
    assert structural.validate(reordered, old) == []  # by key, not by index; a new item has no old self
    changed = {"disks": [{"name": "b", "size": 3}, {"name": "a", "size": 1}]}
    assert [str(e) for e in structural.validate(changed, old)] == [
        'disks[0]: Invalid value: "object": size is immutable'
    ]
    atomic = Structural.from_props(
        {"type": "object", "properties": {"disks": {**listed, "x-kubernetes-list-type": "atomic"}}}
    )
    assert atomic.validate(changed, old) == []  # items of other lists are not correlated: no transition rules


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["spec", "status", "x"]), JSON, max_size=3))
def test_any_json_is_answered_and_pruning_is_idempotent(obj: dict[str, Any]) -> None:
    schema = Structural.from_props(SCHEMA)
    schema.prune(obj)
    schema.default(obj)
    once = copy.deepcopy(obj)
    assert schema.prune(obj) == [] or obj == once
    schema.validate(obj)  # never raises
