"""The Updater (ownership on update, merge/prune/conflicts on apply), transcribed from
structured-merge-diff's merge tests (leaf_test.go, set_test.go, key_test.go, nested_test.go,
multiple_appliers_test.go, atomic maps) on the same schemas. Manager names are plain strings here,
as in those tests; the live object starts as null like the fixture's."""

from __future__ import annotations

import pytest

from protokube.gateway.fieldmanager.fieldpath import key, value
from protokube.gateway.fieldmanager.merge import Conflicts

from .helpers import BOOLEAN, NS, NUMERIC, STRING, P, State, map_list, map_of, set_list, struct, y

LEAF = struct(numeric=NUMERIC, string=STRING, bool=BOOLEAN)
SETS = struct(list=set_list(STRING))
ASSOC = struct(list=map_list(struct(name=STRING, value=NUMERIC), "name"))
NESTED = struct(listOfLists=map_list(struct(name=STRING, value=set_list(STRING)), "name"))
STRUCTS = struct(
    struct=struct(name=STRING, scalarField_v1=STRING, complexField_v1=struct(name=STRING)),
    version=STRING,
)
ATOMIC_MAP = struct(atomicMap=map_of(STRING, atomic=True), granularMap=map_of(STRING))


# --- leaf_test.go --------------------------------------------------------------------------------


def test_apply_update_apply_with_conflict():  # "apply_update_apply_with_conflict"
    s = State(LEAF)
    s.apply('numeric: 1\nstring: "string"', "default")
    s.update('numeric: 1\nstring: "controller string"\nbool: true', "controller")
    assert s.conflicts('numeric: 2\nstring: "user string"', "default") == [("controller", P("string"))]
    s.force_apply('numeric: 2\nstring: "user string"', "default")
    assert s.live == y('numeric: 2\nstring: "user string"\nbool: true')
    assert s.managed() == {"default": (NS(P("numeric"), P("string")), "v1"), "controller": (NS(P("bool")), "v1")}


def test_apply_update_apply_no_conflict():  # "apply_update_apply_no_conflict"
    s = State(LEAF)
    s.apply('numeric: 1\nstring: "string"', "default")
    s.update('numeric: 1\nstring: "string"\nbool: true', "controller")
    s.apply('numeric: 2\nstring: "string"', "default")
    assert s.live == y('numeric: 2\nstring: "string"\nbool: true')
    assert s.managed() == {"default": (NS(P("numeric"), P("string")), "v1"), "controller": (NS(P("bool")), "v1")}


def test_apply_twice_remove():  # "apply_twice_remove"
    s = State(LEAF)
    s.apply('numeric: 1\nstring: "string"\nbool: false', "default")
    s.apply('string: "new string"', "default")
    assert s.live == {"string": "new string"}
    assert s.managed() == {"default": (NS(P("string")), "v1")}


def test_update_apply_omits():  # "update_apply_omits": the updater keeps what it took over
    s = State(LEAF)
    s.apply("numeric: 2", "default")
    s.update("numeric: 1", "controller")
    s.apply("", "default")
    assert s.live == {"numeric": 1}
    assert s.managed() == {"controller": (NS(P("numeric")), "v1")}


def test_update_remove_empty_set():  # "update_remove_empty_set"
    s = State(LEAF)
    s.apply('string: "string"', "default")
    s.update('string: "new string"', "controller")
    assert s.managed() == {"controller": (NS(P("string")), "v1")}


def test_apply_remove_empty_set():  # "apply_remove_empty_set"
    s = State(LEAF)
    s.apply('string: "string"', "default")
    s.apply("", "default")
    assert s.live is None
    assert s.managed() == {}


# --- set_test.go ---------------------------------------------------------------------------------


def test_set_apply_twice():  # TestUpdateSet "apply_twice"
    s = State(SETS)
    s.apply("list: [a, c]", "default")
    s.apply("list: [a, b, c, d]", "default")
    assert s.live == {"list": ["a", "b", "c", "d"]}
    assert s.managed() == {"default": (NS(*(P("list", value(v)) for v in "abcd")), "v1")}


def test_set_apply_update_apply_no_overlap():  # TestUpdateSet "apply_update_apply_no_overlap"
    s = State(SETS)
    s.apply("list: [a, c]", "default")
    s.update("list: [a, b, c, d]", "controller")
    s.apply("list: [a, aprime, c, cprime]", "default")
    assert s.live == {"list": ["a", "b", "aprime", "c", "d", "cprime"]}
    assert s.managed() == {
        "default": (NS(*(P("list", value(v)) for v in ("a", "aprime", "c", "cprime"))), "v1"),
        "controller": (NS(P("list", value("b")), P("list", value("d"))), "v1"),
    }


def test_set_apply_update_apply_with_overlap():  # TestUpdateSet "apply_update_apply_with_overlap"
    s = State(SETS)
    s.apply("list: [a, c]", "default")
    s.update("list: [a, b, c, d]", "controller")
    s.apply("list: [a, b, c]", "default")
    assert s.live == {"list": ["a", "b", "c", "d"]}
    assert s.managed() == {
        "default": (NS(P("list", value("a")), P("list", value("b")), P("list", value("c"))), "v1"),
        "controller": (NS(P("list", value("b")), P("list", value("d"))), "v1"),
    }


# --- key_test.go / multiple_appliers_test.go: map lists --------------------------------------------


def test_removing_obsolete_applied_structs():  # TestUpdateAssociativeLists "removing_obsolete_applied_structs"
    s = State(ASSOC)
    s.apply("list:\n- name: a\n  value: 1", "default")
    s.apply("list:\n- name: b\n  value: 2", "default")
    assert s.live == y("list:\n- name: b\n  value: 2")
    b = key(name="b")
    assert s.managed() == {"default": (NS(P("list", b), P("list", b, "name"), P("list", b, "value")), "v1")}


def test_remove_one():  # TestMultipleAppliersSet "remove_one"
    s = State(ASSOC)
    s.apply("list:\n- name: a\n- name: b", "apply-one")
    s.apply("list:\n- name: c", "apply-two", "v2")
    s.apply("list:\n- name: a", "apply-one", "v3")
    assert s.live == y("list:\n- name: a\n- name: c")
    a, c = key(name="a"), key(name="c")
    assert s.managed() == {
        "apply-one": (NS(P("list", a), P("list", a, "name")), "v3"),
        "apply-two": (NS(P("list", c), P("list", c, "name")), "v2"),
    }


def test_same_value_no_conflict():  # "same_value_no_conflict": both own the item and its fields
    s = State(ASSOC)
    s.apply("list:\n- name: a\n  value: 0", "apply-one")
    s.apply("list:\n- name: a\n  value: 0", "apply-two", "v2")
    a = key(name="a")
    owned = NS(P("list", a), P("list", a, "name"), P("list", a, "value"))
    assert s.managed() == {"apply-one": (owned, "v1"), "apply-two": (owned, "v2")}


def test_change_value_yes_conflict():  # "change_value_yes_conflict"
    s = State(ASSOC)
    s.apply("list:\n- name: a\n  value: 0", "apply-one")
    assert s.conflicts("list:\n- name: a\n  value: 1", "apply-two", "v2") == [
        ("apply-one", P("list", key(name="a"), "value"))
    ]
    assert s.live == y("list:\n- name: a\n  value: 0")
    assert list(s.managed()) == ["apply-one"]


def test_remove_one_keep_one():  # "remove_one_keep_one"
    s = State(ASSOC)
    s.apply("list:\n- name: a\n- name: b\n- name: c", "apply-one")
    s.apply("list:\n- name: c\n- name: d", "apply-two", "v2")
    s.apply("list:\n- name: a", "apply-one", "v3")
    assert s.live == y("list:\n- name: a\n- name: c\n- name: d")


# --- nested types --------------------------------------------------------------------------------


def test_remove_one_keep_one_with_dangling_subitem():  # TestMultipleAppliersNestedType
    s = State(NESTED)
    s.apply("listOfLists:\n- name: a\n- name: b\n  value: [c]", "apply-one")
    s.apply("listOfLists:\n- name: b\n  value: [d]", "apply-two", "v2")
    s.update("listOfLists:\n- name: a\n- name: b\n  value: [c, d, e]", "controller", "v2")
    s.apply("listOfLists:\n- name: a", "apply-one", "v3")
    assert s.live == y("listOfLists:\n- name: a\n- name: b\n  value: [d, e]")
    a, b = key(name="a"), key(name="b")
    assert s.managed() == {
        "apply-one": (NS(P("listOfLists", a), P("listOfLists", a, "name")), "v3"),
        "apply-two": (
            NS(P("listOfLists", b), P("listOfLists", b, "name"), P("listOfLists", b, "value", value("d"))),
            "v2",
        ),
        "controller": (NS(P("listOfLists", b, "value", value("e"))), "v2"),
    }


def test_remove_one_with_dangling_subitem_keep_one():  # the item goes, with what an updater added to it
    s = State(NESTED)
    s.apply("listOfLists:\n- name: a\n- name: b\n  value: [c]", "apply-one")
    s.apply("listOfLists:\n- name: a\n  value: [b]", "apply-two", "v2")
    s.update("listOfLists:\n- name: a\n  value: [b]\n- name: b\n  value: [c, d]", "controller", "v2")
    s.apply("listOfLists:\n- name: a", "apply-one", "v3")
    assert s.live == y("listOfLists:\n- name: a\n  value: [b]")
    a = key(name="a")
    assert s.managed() == {
        "apply-one": (NS(P("listOfLists", a), P("listOfLists", a, "name")), "v3"),
        "apply-two": (
            NS(P("listOfLists", a), P("listOfLists", a, "name"), P("listOfLists", a, "value", value("b"))),
            "v2",
        ),
    }


# --- structs (multiple_appliers_test.go TestMultipleAppliersFieldUnsetting, v1-v1-v1) -------------


def test_unset_scalar_sole_owner():
    s = State(STRUCTS)
    s.apply("struct:\n  name: a\n  scalarField_v1: a", "apply-one")
    s.apply("struct:\n  name: a", "apply-one")
    assert s.live == {"struct": {"name": "a"}}
    assert s.managed() == {"apply-one": (NS(P("struct", "name")), "v1")}


def test_unset_scalar_shared_with_applier():
    s = State(STRUCTS)
    s.apply("struct:\n  name: a\n  scalarField_v1: a", "apply-one")
    s.apply("struct:\n  scalarField_v1: a", "apply-two")
    s.apply("struct:\n  name: a", "apply-one")
    assert s.live == {"struct": {"name": "a", "scalarField_v1": "a"}}
    assert s.managed() == {
        "apply-one": (NS(P("struct", "name")), "v1"),
        "apply-two": (NS(P("struct", "scalarField_v1")), "v1"),
    }


def test_unset_scalar_shared_with_updater():
    s = State(STRUCTS)
    s.update("struct:\n  name: a\n  scalarField_v1: a", "updater")
    s.apply("struct:\n  name: a\n  scalarField_v1: a", "applier")
    s.apply("struct:\n  name: a", "applier")
    assert s.live == {"struct": {"name": "a", "scalarField_v1": "a"}}
    assert s.managed() == {
        "updater": (NS(P("struct"), P("struct", "name"), P("struct", "scalarField_v1")), "v1"),
        "applier": (NS(P("struct", "name")), "v1"),
    }


def test_updater_claims_field():
    s = State(STRUCTS)
    s.apply("struct:\n  name: a\n  scalarField_v1: a", "applier")
    s.update("struct:\n  name: a\n  scalarField_v1: b", "updater")
    assert s.managed() == {
        "updater": (NS(P("struct", "scalarField_v1")), "v1"),
        "applier": (NS(P("struct", "name")), "v1"),
    }


def test_unset_complex_sole_owner_and_shared():
    s = State(STRUCTS)
    s.apply("struct:\n  name: a\n  complexField_v1:\n    name: b", "apply-one")
    s.apply("struct:\n  name: a", "apply-one")
    assert s.live == {"struct": {"name": "a"}}

    s = State(STRUCTS)
    s.apply("struct:\n  name: a\n  complexField_v1:\n    name: b", "apply-one")
    s.apply("struct:\n  complexField_v1:\n    name: b", "apply-two")
    s.apply("struct:\n  name: a", "apply-one")
    assert s.live == {"struct": {"name": "a", "complexField_v1": {"name": "b"}}}
    assert s.managed() == {
        "apply-one": (NS(P("struct", "name")), "v1"),
        "apply-two": (NS(P("struct", "complexField_v1", "name")), "v1"),
    }


# --- atomic maps (TestMultipleApplierAtomicMaps) ----------------------------------------------------


def test_atomic_map_is_owned_and_replaced_whole():
    s = State(ATOMIC_MAP)
    s.apply("atomicMap:\n  a: x\n  b: y", "one")
    # Another applier sending the map with one key different conflicts on the whole map.
    assert s.conflicts("atomicMap:\n  a: x", "two") == [("one", P("atomicMap"))]
    s.force_apply("atomicMap:\n  c: z", "two")
    assert s.live == {"atomicMap": {"c": "z"}}
    assert s.managed() == {"two": (NS(P("atomicMap")), "v1")}


def test_granular_map_keys_are_owned_separately():
    s = State(ATOMIC_MAP)
    s.apply("granularMap:\n  a: x", "one")
    s.apply("granularMap:\n  b: y", "two")
    assert s.live == {"granularMap": {"a": "x", "b": "y"}}
    assert s.managed() == {"one": (NS(P("granularMap", "a")), "v1"), "two": (NS(P("granularMap", "b")), "v1")}


# --- conflicts ------------------------------------------------------------------------------------


def test_conflicts_are_grouped_by_manager_in_order():
    s = State(LEAF)
    s.update("numeric: 1", "b-updater")
    s.update("numeric: 1\nstring: x\nbool: true", "a-updater")
    with pytest.raises(Conflicts) as e:
        s.apply("numeric: 2\nstring: y\nbool: false", "applier")
    assert e.value.conflicts == [("a-updater", P("bool")), ("a-updater", P("string")), ("b-updater", P("numeric"))]


def test_reset_fields_are_never_owned():
    # upstream's IgnoreFilter: e.g. the main resource of a kind with a status subresource.
    t = struct(spec=struct(a=STRING), status=struct(b=STRING))
    s = State(t, reset=NS(P("status")))
    s.update("spec:\n  a: x\nstatus:\n  b: y", "m")
    assert s.managed() == {"m": (NS(P("spec"), P("spec", "a")), "v1")}
    s.apply("spec:\n  a: x\nstatus:\n  b: z", "applier")
    assert s.managed()["applier"] == (NS(P("spec", "a")), "v1")
