"""Typed operations, transcribed from structured-merge-diff's typed tests (merge_test.go, symdiff_test.go,
toset_test.go, remove_test.go, validate_test.go) on the same schemas built as Type trees, plus the
same facts on real kinds."""

from __future__ import annotations

import json

import pytest

import protokube.gateway.fieldmanager.typed as typed
from protokube.gateway.fieldmanager.fieldpath import Set, key, value
from protokube.gateway.fieldmanager.values import equals
from protokube.schema.typetree import proto_type

from .helpers import BOOLEAN, NS, NUMERIC, STRING, UNTYPED_T, P, atomic_list, map_list, map_of, set_list, struct

STRING_PAIR = struct(key=STRING, value=UNTYPED_T)
NESTED_MAP = struct(inner=map_of(UNTYPED_T))
NESTED_STRUCT = struct(inner=struct(value=UNTYPED_T))
NESTED_LIST = struct(inner=atomic_list(UNTYPED_T))
GRAB_BAG = struct(
    numeric=NUMERIC,
    string=STRING,
    bool=BOOLEAN,
    setStr=set_list(STRING),
    setBool=set_list(BOOLEAN),
    setNumeric=set_list(NUMERIC),
    color=struct(atomic=True, R=NUMERIC, G=NUMERIC, B=NUMERIC),
    arbitraryWavelengthColor=map_of(NUMERIC, atomic=True),
    args=atomic_list(struct(key=STRING, value=STRING)),
)
ELEMENT = struct(key=STRING, id=NUMERIC, value=map_of(STRING), bv=BOOLEAN, nv=NUMERIC)
ASSOCIATIVE = struct(
    list=map_list(ELEMENT, "key", "id"), atomicList=atomic_list(STRING), atomicMap=map_of(STRING, atomic=True)
)
_NAMED = struct(name=STRING, value=set_list(STRING))
NESTED_TYPES = struct(
    listOfLists=map_list(_NAMED, "name"),
    listOfMaps=map_list(struct(name=STRING, value=map_of(STRING)), "name"),
    mapOfLists=map_of(set_list(STRING)),
    mapOfMaps=map_of(map_of(STRING)),
)

MERGE_CASES = [  # TestMerge: (type, lhs, rhs, out); lhs may hold duplicates
    (STRING_PAIR, '{"key":"foo","value":{}}', '{"key":"foo","value":1}', '{"key":"foo","value":1}'),
    (STRING_PAIR, '{"key":"foo","value":1}', '{"key":"foo","value":{}}', '{"key":"foo","value":{}}'),
    (STRING_PAIR, '{"key":"foo","value":null}', '{"key":"foo","value":{}}', '{"key":"foo","value":{}}'),
    (STRING_PAIR, '{"key":"foo"}', '{"value":true}', '{"key":"foo","value":true}'),
    (NESTED_MAP, "{}", '{"inner":{}}', '{"inner":{}}'),
    (NESTED_MAP, "{}", '{"inner":null}', '{"inner":null}'),
    (NESTED_MAP, '{"inner":null}', '{"inner":{}}', '{"inner":{}}'),
    (NESTED_MAP, '{"inner":{}}', '{"inner":null}', '{"inner":null}'),
    (NESTED_MAP, '{"inner":{}}', '{"inner":{}}', '{"inner":{}}'),
    (NESTED_STRUCT, "{}", '{"inner":{}}', '{"inner":{}}'),
    (NESTED_STRUCT, '{"inner":{}}', '{"inner":null}', '{"inner":null}'),
    (NESTED_LIST, "{}", '{"inner":[]}', '{"inner":[]}'),
    (NESTED_LIST, '{"inner":null}', '{"inner":[]}', '{"inner":[]}'),
    (NESTED_LIST, '{"inner":[]}', '{"inner":null}', '{"inner":null}'),
    (GRAB_BAG, '{"numeric":1}', '{"numeric":3.14159}', '{"numeric":3.14159}'),
    (GRAB_BAG, '{"string":"aoeu"}', '{"bool":true}', '{"string":"aoeu","bool":true}'),
    (GRAB_BAG, '{"setStr":["a","b","c"]}', '{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}'),
    (GRAB_BAG, '{"setStr":["a","b"]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'),
    (GRAB_BAG, '{"setStr":["a","b","c"]}', '{"setStr":[]}', '{"setStr":["a","b","c"]}'),
    (GRAB_BAG, '{"setStr":[]}', '{"setStr":["a","b","c"]}', '{"setStr":["a","b","c"]}'),
    (GRAB_BAG, '{"setStr":["a","b"]}', '{"setStr":["b","a"]}', '{"setStr":["b","a"]}'),
    (GRAB_BAG, '{"setStr":["a","b","c"]}', '{"setStr":["d","e","f"]}', '{"setStr":["a","b","c","d","e","f"]}'),
    (GRAB_BAG, '{"setStr":["a","b","c"]}', '{"setStr":["c","d","e","f"]}', '{"setStr":["a","b","c","d","e","f"]}'),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c","g","f"]}',
        '{"setStr":["c","d","e","f"]}',
        '{"setStr":["a","b","c","g","d","e","f"]}',
    ),
    (GRAB_BAG, '{"setStr":["c","d","e","f"]}', '{"setStr":["a","c","e"]}', '{"setStr":["a","c","d","e","f"]}'),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c","x","y","z"]}',
        '{"setStr":["d","e","f","x","y","z"]}',
        '{"setStr":["a","b","c","d","e","f","x","y","z"]}',
    ),
    (GRAB_BAG, '{"setStr":["c","a","g","f"]}', '{"setStr":["c","f","a","g"]}', '{"setStr":["c","f","a","g"]}'),
    (GRAB_BAG, '{"setStr":["a","b","c","d"]}', '{"setStr":["d","e","f","a"]}', '{"setStr":["b","c","d","e","f","a"]}'),
    (
        GRAB_BAG,
        '{"setStr":["c","d","e","f","g","h","i","j"]}',
        '{"setStr":["2","h","3","e","4","k","l"]}',
        '{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}',
    ),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c","d","e","f","g","h","i","j"]}',
        '{"setStr":["1","b","2","h","3","e","4","k","l"]}',
        '{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}',
    ),
    (GRAB_BAG, '{"setStr":["a","b","b"]}', '{"setStr":["c"]}', '{"setStr":["a","b","b","c"]}'),
    (GRAB_BAG, '{"setStr":["a","b","b"]}', '{"setStr":["b"]}', '{"setStr":["a","b"]}'),
    (GRAB_BAG, '{"setStr":["a","b","b"]}', '{"setStr":["a"]}', '{"setStr":["a","b","b"]}'),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c","d","e","c"]}',
        '{"setStr":["1","b","2","e","d"]}',
        '{"setStr":["a","1","b","c","2","e","c","d"]}',
    ),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c","d","e","c"]}',
        '{"setStr":["1","b","2","c","e","d"]}',
        '{"setStr":["a","1","b","2","c","e","d"]}',
    ),
    (GRAB_BAG, '{"setStr":["a","a","b","b"]}', '{"setStr":["b","c","d"]}', '{"setStr":["a","a","b","c","d"]}'),
    (GRAB_BAG, '{"setStr":["a","a","b","b"]}', '{"setStr":[]}', '{"setStr":["a","a","b","b"]}'),
    (GRAB_BAG, '{"setBool":[true]}', '{"setBool":[false]}', '{"setBool":[true, false]}'),
    (GRAB_BAG, '{"setNumeric":[1,2,3.14159]}', '{"setNumeric":[1,2,3]}', '{"setNumeric":[1,2,3.14159,3]}'),
    (GRAB_BAG, '{"setStr":["c","a","g","f","c","a"]}', '{"setStr":["c","f","a","g"]}', '{"setStr":["c","f","a","g"]}'),
    (GRAB_BAG, '{"setNumeric":[1,2,3.14159,1,2]}', '{"setNumeric":[1,2,3]}', '{"setNumeric":[1,2,3.14159,3]}'),
    (GRAB_BAG, '{"setBool":[true,false,true]}', '{"setBool":[false]}', '{"setBool":[true,false,true]}'),
    (GRAB_BAG, '{"setBool":[true,false,true]}', '{"setBool":[true]}', '{"setBool":[true, false]}'),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"b","id":1}]}',
        '{"list":[{"key":"a","id":1},{"key":"a","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"c","id":3},{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}',
        '{"list":[{"key":"c","id":3},{"key":"a","id":1}]}',
        '{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}',
    ),
    (ASSOCIATIVE, '{"atomicList":["a","a","a"]}', '{"atomicList":null}', '{"atomicList":null}'),
    (ASSOCIATIVE, '{"atomicList":["a","b","c"]}', '{"atomicList":[]}', '{"atomicList":[]}'),
    (ASSOCIATIVE, '{"atomicList":["a","a","a"]}', '{"atomicList":["a","a"]}', '{"atomicList":["a","a"]}'),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}',
        '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
        '{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
        '{"list":[]}',
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
        "{}",
        '{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}',
    ),
]


@pytest.mark.parametrize(("t", "lhs", "rhs", "out"), MERGE_CASES)
def test_merge(t, lhs, rhs, out):
    lhs, rhs, out = json.loads(lhs), json.loads(rhs), json.loads(out)
    typed.validate(lhs, t, allow_duplicates=True)
    typed.validate(rhs, t)
    merged = typed.merge(lhs, rhs, t)
    assert equals(merged, out), merged
    assert merged == out  # order included


def _kbf(**kw):
    return key(**kw)


A1 = _kbf(key="a", id=1)
A2 = _kbf(key="a", id=2)
B1 = _kbf(key="b", id=1)

COMPARE_CASES = [  # TestSymdiff: (type, lhs, rhs, removed, modified, added)
    (STRING_PAIR, '{"key":"foo","value":1}', '{"key":"foo","value":1}', NS(), NS(), NS()),
    (STRING_PAIR, '{"key":"foo","value":{}}', '{"key":"foo","value":1}', NS(), NS(P("value")), NS()),
    (STRING_PAIR, '{"key":"foo","value":null}', '{"key":"foo","value":{}}', NS(), NS(P("value")), NS()),
    (STRING_PAIR, '{"key":"foo"}', '{"value":true}', NS(P("key")), NS(), NS(P("value"))),
    (STRING_PAIR, '{"key":"foot"}', '{"key":"foo","value":true}', NS(), NS(P("key")), NS(P("value"))),
    (NESTED_MAP, "{}", '{"inner":{}}', NS(), NS(), NS(P("inner"))),
    (NESTED_MAP, "{}", '{"inner":null}', NS(), NS(), NS(P("inner"))),
    (NESTED_MAP, '{"inner":null}', '{"inner":{}}', NS(), NS(P("inner")), NS()),
    (NESTED_MAP, '{"inner":{}}', '{"inner":{}}', NS(), NS(), NS()),
    (NESTED_LIST, '{"inner":[]}', '{"inner":null}', NS(), NS(P("inner")), NS()),
    (GRAB_BAG, '{"setStr":["a"]}', '{"setStr":["a","b","b"]}', NS(), NS(), NS(P("setStr", value("b")))),
    (
        GRAB_BAG,
        '{"setStr":["a","b"]}',
        '{"setStr":["a","b","b"]}',
        NS(P("setStr", value("b"))),
        NS(),
        NS(P("setStr", value("b"))),
    ),
    (
        GRAB_BAG,
        '{"setStr":["a","b","c"]}',
        '{"setStr":[]}',
        NS(P("setStr", value("a")), P("setStr", value("b")), P("setStr", value("c"))),
        NS(),
        NS(),
    ),
    (
        GRAB_BAG,
        '{"setNumeric":[1,2,3.14159]}',
        '{"setNumeric":[1,2,3]}',
        NS(P("setNumeric", value(3.14159))),
        NS(),
        NS(P("setNumeric", value(3))),
    ),
    (
        ASSOCIATIVE,
        "{}",
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        NS(),
        NS(),
        NS(P("list"), P("list", A1), P("list", A1, "key"), P("list", A1, "id"), P("list", A1, "value")).union(
            NS(P("list", A1, "value", "a"))
        ),
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        '{"list":[{"key":"a","id":1,"value":{"a":"b"}}]}',
        NS(),
        NS(P("list", A1, "value", "a")),
        NS(),
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"b","id":1}]}',
        '{"list":[{"key":"a","id":1},{"key":"a","id":2}]}',
        NS(P("list", B1), P("list", B1, "key"), P("list", B1, "id")),
        NS(),
        NS(P("list", A2), P("list", A2, "key"), P("list", A2, "id")),
    ),
    (ASSOCIATIVE, '{"atomicList":["a","b","c"]}', '{"atomicList":[]}', NS(), NS(P("atomicList")), NS()),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"nv":2},{"key":"b","id":1},{"key":"a","id":1,"bv":true}]}',
        '{"list":[{"key":"a","id":1},{"key":"a","id":2}]}',
        NS(P("list", B1), P("list", B1, "key"), P("list", B1, "id"), P("list", A1)),
        NS(),
        NS(P("list", A1), P("list", A1, "key"), P("list", A1, "id"), P("list", A2), P("list", A2, "key")).union(
            NS(P("list", A2, "id"))
        ),
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":1,"bv":true}]}',
        '{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":1,"bv":true,"nv":1}]}',
        NS(),
        NS(P("list", A1)),
        NS(),
    ),
]


@pytest.mark.parametrize(("t", "lhs", "rhs", "removed", "modified", "added"), COMPARE_CASES)
def test_compare(t, lhs, rhs, removed, modified, added):
    lhs, rhs = json.loads(lhs), json.loads(rhs)
    c = typed.compare(lhs, rhs, t)
    assert (c.removed, c.modified, c.added) == (removed, modified, added)
    reverse = typed.compare(rhs, lhs, t)  # the reverse sanity check of symdiff_test.go
    assert (reverse.removed, reverse.added) == (added, removed)


TO_SET_CASES = [  # TestToFieldSet
    (STRING_PAIR, '{"key":"foo","value":1}', NS(P("key"), P("value"))),
    (STRING_PAIR, '{"key":"foo","value":{"a": "b"}}', NS(P("key"), P("value"))),
    (STRING_PAIR, '{"key":"foo","value":null}', NS(P("key"), P("value"))),
    (GRAB_BAG, '{"setStr":["a","b","c","a","b","c","c"]}', NS(*(P("setStr", value(v)) for v in "abc"))),
    (GRAB_BAG, '{"setBool":[true,false,true]}', NS(P("setBool", value(True)), P("setBool", value(False)))),
    (GRAB_BAG, '{"color":{}}', NS(P("color"))),
    (GRAB_BAG, '{"color":null}', NS(P("color"))),
    (GRAB_BAG, '{"color":{"R":255,"G":0,"B":0}}', NS(P("color"))),
    (GRAB_BAG, '{"arbitraryWavelengthColor":{"IR":255}}', NS(P("arbitraryWavelengthColor"))),
    (GRAB_BAG, '{"args":[]}', NS(P("args"))),
    (GRAB_BAG, '{"args":[null]}', NS(P("args"))),
    (GRAB_BAG, '{"args":[{"key":"a","value":"b"},{"key":"c","value":"d"}]}', NS(P("args"))),
    (ASSOCIATIVE, '{"list":[]}', NS()),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}',
        NS(P("list", A1), P("list", A1, "key"), P("list", A1, "id"), P("list", A1, "value", "a")),
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1,"nv":2},{"key":"a","id":2,"nv":3},{"key":"b","id":1},{"key":"a","id":2,"bv":true}]}',
        NS(
            P("list", A1),
            P("list", A1, "key"),
            P("list", A1, "id"),
            P("list", A1, "nv"),
            P("list", A2),
            P("list", B1),
            P("list", B1, "key"),
            P("list", B1, "id"),
        ),
    ),
    (ASSOCIATIVE, '{"atomicList":["a","a","a"]}', NS(P("atomicList"))),
]


@pytest.mark.parametrize(("t", "obj", "expected"), TO_SET_CASES)
def test_to_field_set(t, obj, expected):
    assert typed.to_field_set(json.loads(obj), t) == expected


REMOVE_CASES = [  # TestRemoveItems (the RemoveItems column)
    (STRING_PAIR, '{"key":"foo"}', NS(P("key")), "null"),
    (STRING_PAIR, '{"key":"foo"}', NS(), '{"key":"foo"}'),
    (STRING_PAIR, '{"key":"foo","value":true}', NS(P("key")), '{"value":true}'),
    (STRING_PAIR, '{"key":"foo","value":{"a": "b"}}', NS(P("value")), '{"key":"foo"}'),
    (GRAB_BAG, '{"setBool":[false]}', NS(P("setBool", value(False))), '{"setBool":null}'),
    (GRAB_BAG, '{"setBool":[false]}', NS(P("setBool", value(True))), '{"setBool":[false]}'),
    (GRAB_BAG, '{"setBool":[true,false]}', NS(P("setBool", value(True))), '{"setBool":[false]}'),
    (GRAB_BAG, '{"setBool":[true,false]}', NS(P("setBool")), "null"),
    (
        GRAB_BAG,
        '{"setNumeric":[1,2,3,4.5]}',
        NS(P("setNumeric", value(1)), P("setNumeric", value(4.5))),
        '{"setNumeric":[2,3]}',
    ),
    (
        ASSOCIATIVE,
        '{"list":[{"key":"a","id":1},{"key":"a","id":2},{"key":"b","id":1}]}',
        NS(P("list", A1)),
        '{"list":[{"key":"a","id":2},{"key":"b","id":1}]}',
    ),
    (ASSOCIATIVE, '{"atomicList":["a", "a", "a"]}', NS(P("atomicList")), "null"),
    (ASSOCIATIVE, '{"atomicMap":{"a": "c", "b": "d"}}', NS(P("atomicMap")), "null"),
    (
        NESTED_TYPES,
        '{"listOfLists": [{"name": "a", "value": ["b", "c"]}, {"name": "d"}]}',
        NS(P("listOfLists", key(name="d"))),
        '{"listOfLists": [{"name": "a", "value": ["b", "c"]}]}',
    ),
    (
        NESTED_TYPES,
        '{"listOfLists": [{"name": "a", "value": ["b", "c"]}, {"name": "d"}]}',
        NS(P("listOfLists", key(name="a"), "value", value("b"))),
        '{"listOfLists": [{"name":"a", "value": ["c"]}, {"name": "d"}]}',
    ),
]


@pytest.mark.parametrize(("t", "obj", "items", "out"), REMOVE_CASES)
def test_remove_items(t, obj, items, out):
    assert typed.remove_items(json.loads(obj), t, items) == json.loads(out)


# --- validation (ObjectToTyped) messages ---------------------------------------------------------

POD = proto_type("k8s.io.api.core.v1.Pod")


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"spec": {"foo": 1}}, ".spec.foo: field not declared in schema"),
        ({"spec": {"topologyKeys": []}}, ".spec.topologyKeys: field not declared in schema"),
        (
            {"spec": {"containers": [{"name": "c"}, {"name": "c"}]}},
            '.spec.containers: duplicate entries for key [name="c"]',
        ),
        (
            {"spec": {"containers": [{"image": "x"}]}},
            '.spec.containers: element 0: associative list with keys has an element that omits key field "name" '
            "(and doesn't have default value)",
        ),
        (
            {"spec": {"containers": ["x"]}},
            ".spec.containers: element 0: associative list with keys may not have non-map elements",
        ),
        (
            {"metadata": {"finalizers": [{"a": 1}]}},
            ".metadata.finalizers: element 0: associative list without keys has an element that's a map type",
        ),
        ({"metadata": {"finalizers": ["a", "a"]}}, '.metadata.finalizers: duplicate entries for key [="a"]'),
        ({"spec": {"hostNetwork": "yes"}}, ".spec.hostNetwork: expected boolean, got &{yes}"),
        ({"spec": {"nodeName": 5}}, ".spec.nodeName: expected string, got &value.valueUnstructured{Value:5}"),
        ({"spec": {"priority": "high"}}, ".spec.priority: expected numeric (int or float), got string"),
        ({"spec": {"containers": {}}}, ".spec.containers: expected list, got &{map[]}"),
        ({"spec": "x"}, ".spec: expected map, got &{x}"),
        (
            {"spec": {"containers": [{"name": "c", "command": [1]}]}},
            '.spec.containers[name="c"].command[0]: expected string, got &value.valueUnstructured{Value:1}',
        ),
    ],
)
def test_validation_messages(obj, message):
    with pytest.raises(typed.TypedError) as e:
        typed.validate(obj, POD)
    assert str(e.value) == message


def test_validation_several_errors():
    with pytest.raises(typed.TypedError) as e:
        typed.validate({"spec": {"nodeName": 5, "priority": "x"}}, POD)
    assert str(e.value) == (
        "errors:\n  .spec.nodeName: expected string, got &value.valueUnstructured{Value:5}\n"
        "  .spec.priority: expected numeric (int or float), got string"
    )


def test_duplicates_allowed_in_live_objects():
    typed.validate({"metadata": {"finalizers": ["a", "a"]}}, POD, allow_duplicates=True)


# --- on real kinds ------------------------------------------------------------------------------


def test_container_port_key_uses_the_protocol_default():
    ports = {
        "spec": {
            "containers": [{"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}]
        }
    }
    s = typed.to_field_set(ports, POD)
    c = P("spec", "containers", key(name="c"), "ports")
    assert s.has((*c, key(containerPort=80, protocol="TCP"), *P("containerPort")))
    assert not s.has((*c, key(containerPort=80, protocol="TCP"), *P("protocol")))
    assert s.has((*c, key(containerPort=53, protocol="UDP"), *P("protocol")))


def test_granular_and_atomic_maps_structs_and_sets_on_a_pod():
    pod = {
        "metadata": {"labels": {"a": "1"}, "finalizers": ["f"]},
        "spec": {"nodeSelector": {"disk": "ssd"}, "affinity": {"nodeAffinity": {}}, "tolerations": [{"key": "k"}]},
    }
    s = typed.to_field_set(pod, POD)
    assert s == Set.of(
        P("metadata", "labels", "a"),
        P("metadata", "finalizers", value("f")),
        P("spec", "nodeSelector"),  # +mapType=atomic upstream: owned whole
        P("spec", "affinity", "nodeAffinity"),  # an empty struct is itself a field
        P("spec", "tolerations"),  # atomic list
    )


def test_merge_keeps_live_order_and_appends_new_items():
    live = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}}
    applied = {"spec": {"containers": [{"name": "c", "image": "3"}, {"name": "a", "image": "4"}]}}
    merged = typed.merge(live, applied, POD)
    assert merged["spec"]["containers"] == [
        {"name": "c", "image": "3"},
        {"name": "a", "image": "4"},
        {"name": "b", "image": "2"},
    ]
    applied = {"spec": {"containers": [{"name": "a", "image": "4"}, {"name": "c", "image": "3"}]}}
    merged = typed.merge(live, applied, POD)
    assert [c["name"] for c in merged["spec"]["containers"]] == ["a", "b", "c"]


def test_reconcile_field_set_with_schema():
    # TestReconcileFieldSetWithSchema: owning parts of what is atomic means owning it whole.
    t = struct(atomicList=atomic_list(STRING), atomicMap=map_of(STRING, atomic=True), granular=map_of(STRING))
    s = NS(P("atomicList", 0), P("atomicMap", "a"), P("granular", "a"))
    assert typed.reconcile_field_set(s, t) == NS(P("atomicList"), P("atomicMap"), P("granular", "a"))
    assert typed.reconcile_field_set(NS(P("atomicList"), P("granular", "a")), t) is None
