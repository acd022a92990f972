"""Field paths, sets and FieldsV1 (structured-merge-diff fieldpath: element_test.go, path_test.go,
set_test.go, serialize_test.go, serialize-pe_test.go; apimachinery internal/pathelement_test.go,
fields_test.go) and real managedFields bytes."""

from __future__ import annotations

import json

import pytest

from protokube.gateway.fieldmanager.fieldpath import (
    FieldsV1Error,
    Set,
    deserialize_element,
    element_string,
    field,
    index,
    key,
    path_string,
    serialize_element,
    value,
)

from .helpers import NS, P

# --- path elements -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lesser", "greater"),
    [  # TestPathElementLess
        (field("anteater"), field("zebra")),
        (field("capybara"), key(dog=3)),
        (field("elephant"), value(4)),
        (field("falcon"), index(5)),
        (key(horse=1), key(horse=2)),
        (key(ibex=1), key(jay=1)),
        (key(kite=1), (1, (("kite", (0, 1)), ("kite-2", (0, 1))))),
        (key(kite=1), value(1)),
        (key(kite=1), index(5)),
        (value(1), value(2)),
        (value(1), index(5)),
        (index(1), index(2)),
        (value(1), value("a")),  # numbers < strings < booleans < lists < maps < null
        (value("a"), value(True)),
        (value(True), value([1])),
        (value([1]), value({"a": 1})),
        (value({"a": 1}), value(None)),
        (value(3), value(3.1415)),
        (value(False), value(True)),
    ],
)
def test_path_element_order(lesser, greater):
    assert lesser < greater
    assert not greater < lesser


def test_path_element_equality_follows_value_equals():
    # value.Equals: numbers compare numerically across int and float; booleans are not numbers.
    assert value(1) == value(1.0)
    assert len({value(1), value(1.0)}) == 1
    assert value(True) != value(1)
    assert key(port=80) == key(port=80.0)


@pytest.mark.parametrize(
    ("path", "text"),
    [  # TestPathString
        (P("foo", 1), ".foo[1]"),
        (P("foo", "bar", 1, "baz"), ".foo.bar[1].baz"),
        (P("foo", key(a="b", c=1, d=1.5, e=True)), '.foo[a="b",c=1,d=1.5,e=true]'),
        (P("foo", value("b"), value(5), value(False), value(3.14159)), '.foo[="b"][=5][=false][=3.14159]'),
        (P("spec", "containers", key(name="nginx"), "image"), '.spec.containers[name="nginx"].image'),
        (P("ports", key(containerPort=80, protocol="TCP")), '.ports[containerPort=80,protocol="TCP"]'),
    ],
)
def test_path_string(path, text):
    assert path_string(path) == text


@pytest.mark.parametrize(
    "text",
    [  # TestPathElementRoundTrip
        "i:0",
        "i:1234",
        "f:",
        "f:spec",
        "f:more-complicated-string",
        'k:{"name":"my-container"}',
        'k:{"port":"8080","protocol":"TCP"}',
        'k:{"optionalField":null}',
        'k:{"jsonField":{"A":1,"B":null,"C":"D","E":{"F":"G"}}}',
        'k:{"listField":["1","2","3"]}',
        "v:null",
        'v:"some-string"',
        "v:1234",
        'v:{"some":"json"}',
    ],
)
def test_path_element_round_trip(text):
    assert serialize_element(deserialize_element(text)) == text


def test_key_fields_are_sorted_by_name():
    pe = deserialize_element('k:{"protocol":"TCP","containerPort":80}')
    assert serialize_element(pe) == 'k:{"containerPort":80,"protocol":"TCP"}'
    assert element_string(pe) == '[containerPort=80,protocol="TCP"]'


@pytest.mark.parametrize(
    "text",
    [  # TestDeserializePathElementError
        "",
        "no-colon",
        "i:index is not a number",
        "i:1.23",
        "i:",
        "v:invalid json",
        "v:",
        "k:invalid json",
        'k:{"name":invalid}',
    ],
)
def test_path_element_errors(text):
    with pytest.raises(FieldsV1Error):
        deserialize_element(text)


def test_unknown_path_element_types_are_dropped():
    # TestPathElementIgnoreUnknown, TestDropUnknown
    assert Set.from_json('{"f:aaa":{},"r:aab":{}}').to_json() == b'{"f:aaa":{}}'


# --- sets --------------------------------------------------------------------------------------


def test_set_insert_has():
    s = NS(P("foo", 0, "bar", "baz"), P("foo", 0, "bar"), P("foo", 0), P("qux", key(name="first")))
    for p in (P("foo", 0, "bar", "baz"), P("foo", 0, "bar"), P("foo", 0), P("qux", key(name="first"))):
        assert s.has(p)
    for p in (P("foo"), P("foo", 1), P("qux"), P("qux", key(name="second")), P("foo", 0, "baz")):
        assert not s.has(p)


def test_set_union():  # TestSetUnion
    s1 = NS(P("foo", 0), P("foo"), P("bar", "baz"), P("qux", key(name="first")), P("parent", "child", "grandchild"))
    s2 = NS(P("foo", 1), P("bar", "baz"), P("bar"), P("qux", key(name="second")), P("parent", "child"))
    expected = NS(
        P("foo", 0),
        P("foo", 1),
        P("foo"),
        P("bar", "baz"),
        P("bar"),
        P("qux", key(name="first")),
        P("qux", key(name="second")),
        P("parent", "child"),
        P("parent", "child", "grandchild"),
    )
    assert s1.union(s2) == expected


def test_set_intersection_and_difference():  # TestSetIntersectionDifference
    first = key(name="first")
    s1 = NS(P("a0"), P("a1"), P("foo", 0), P("foo", 1), P("b0", first), P("b1", first), P("bar", "c0"))
    s1.insert(P("cp", first, "child"))
    s2 = NS(P("a1"), P("a2"), P("foo", 1), P("foo", 2), P("b1", first), P("b2", first), P("bar", "c2"))
    s2.insert(P("cp", first))
    both = NS(P("a1"), P("foo", 1), P("b1", first))
    assert s1.intersection(s2) == both
    assert s1.difference(s2) == NS(P("a0"), P("foo", 0), P("b0", first), P("bar", "c0"), P("cp", first, "child"))
    assert s2.difference(s1) == NS(P("a2"), P("foo", 2), P("b2", first), P("bar", "c2"), P("cp", first))
    assert s1.union(s2).difference(s2.difference(s1).union(s1.difference(s2))) == both


@pytest.mark.parametrize(
    ("a", "b", "difference", "recursive"),
    [  # TestSetDifference
        (NS(P("a")), NS(P("a")), NS(), NS()),
        (NS(P("a", "b", "c")), NS(P("a", "b", "c")), NS(), NS()),
        (NS(P("a", "b", "c"), P("b", "b", "c")), NS(P("a", "b", "c")), NS(P("b", "b", "c")), NS(P("b", "b", "c"))),
        (NS(P("a")), NS(P("a", "aa")), NS(P("a")), NS(P("a"))),
        (NS(P("a", "b", "c")), NS(P("a")), NS(P("a", "b", "c")), NS()),
        (
            NS(P("a", "aa", "aab"), P("a", "ab", "aba")),
            NS(P("a", "aa")),
            NS(P("a", "aa", "aab"), P("a", "ab", "aba")),
            NS(P("a", "ab", "aba")),
        ),
        (NS(P("a", "aa", "aab"), P("a", "ab", "aba")), NS(P("a")), NS(P("a", "aa", "aab"), P("a", "ab", "aba")), NS()),
    ],
)
def test_set_difference(a, b, difference, recursive):
    assert a.difference(b) == difference
    assert a.recursive_difference(b) == recursive


def test_set_leaves():  # TestSetLeaves "all-in-one"
    a, p = key(name="a"), key(name="p")
    s = NS(
        P("root"),
        P("root", a),
        P("root", a, "name"),
        P("root", a, "value", "b"),
        P("root", a, "value", "b", "c"),
        P("root", a, "value", "d"),
        P("root", a, "value", "e"),
        P("root", "x"),
        P("root", "x", "y"),
        P("root", "x", "z"),
        P("root", p),
        P("root", p, "name"),
        P("root", p, "value", "q"),
    )
    expected = NS(
        P("root", a, "name"),
        P("root", a, "value", "b", "c"),
        P("root", a, "value", "d"),
        P("root", a, "value", "e"),
        P("root", "x", "y"),
        P("root", "x", "z"),
        P("root", p, "name"),
        P("root", p, "value", "q"),
    )
    assert s.leaves() == expected


def test_set_emptiness_size_and_iteration_order():
    assert NS().empty()
    s = NS(P("b"), P("a", "x"), P("a"), P("a", key(name="n")), P("a", 0))
    assert not s.empty()
    assert s.size() == 5
    # Members of a node first (sorted), then its children (sorted), depth first.
    assert [path_string(p) for p in s] == [".a", ".b", ".a.x", '.a[name="n"]', ".a[0]"]


# --- FieldsV1 ----------------------------------------------------------------------------------

GOLDEN = [  # TestSerializeV1GoldenData
    '{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},'
    '"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},'
    '"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},"v:\\"ab\\"":{},'
    '"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}',
    '{"f:aaa":{"k:{\\"name\\":\\"second\\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},'
    '"f:aaf":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},'
    '"k:{\\"name\\":\\"first\\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\\"name\\":\\"second\\"}":{}}},'
    '"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\\"name\\":\\"first\\"}":{"k:{\\"name\\":\\"first\\"}":{}}},'
    '"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":'
    '{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},'
    '"i:3":{}},"k:{\\"name\\":\\"first\\"}":{"f:aad":{"f:aaf":{}}},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":'
    '{"f:aaa":{"f:aad":{}}},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"f:aac":{},"k:{\\"name\\":\\"first\\"}":'
    '{"i:3":{}},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},'
    '"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},'
    '"k:{\\"name\\":\\"first\\"}":{},"i:2":{}},"v:\\"aa\\"":{"f:aab":{"f:aaf":{}},"f:aae":{},'
    '"k:{\\"name\\":\\"first\\"}":{"f:aad":{}},"i:2":{}},"v:\\"ab\\"":{"f:aaf":{"i:4":{}},'
    '"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},'
    '"v:1":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},'
    '"v:true":{"k:{\\"name\\":\\"second\\"}":{"f:aaa":{}},"i:2":{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},'
    '"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{"v:1":{}}},'
    '"i:3":{"f:aab":{"v:true":{"v:\\"aa\\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\\"aa\\"":{"f:aab":'
    '{"k:{\\"name\\":\\"second\\"}":{}}}}}',
]


@pytest.mark.parametrize("text", GOLDEN)
def test_fields_v1_golden_bytes(text):
    s = Set.from_json(text)
    assert s.to_json() == text.encode()
    # The dict form keeps the same key order.
    assert json.dumps(s.to_fields_v1(), separators=(",", ":")) == text


# kubectl create deployment nginx --image=nginx, then the deployment controller's status update: the
# managedFields a 1.2x kube-apiserver wrote (a watch stream of a real cluster).
KUBECTL_CREATE_DEPLOYMENT = (
    '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},'
    '"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},'
    '"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":'
    '{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},'
    '"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},'
    '"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}'
)
CONTROLLER_DEPLOYMENT_STATUS = (
    '{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":'
    '{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\\"type\\":\\"Available\\"}":{".":{},'
    '"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},'
    '"k:{\\"type\\":\\"Progressing\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},'
    '"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},'
    '"f:updatedReplicas":{}}}'
)
# kubectl apply --server-side style: keys of a port without protocol use the schema default "TCP".
APPLIED_DEPLOYMENT = (
    '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":'
    '{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:env":'
    '{"k:{\\"name\\":\\"MY_NODE_NAME\\"}":{".":{},"f:name":{},"f:valueFrom":{"f:fieldRef":{}}}},"f:image":{},'
    '"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}'
)


@pytest.mark.parametrize("text", [KUBECTL_CREATE_DEPLOYMENT, CONTROLLER_DEPLOYMENT_STATUS, APPLIED_DEPLOYMENT])
def test_real_deployment_fields_v1_round_trip(text):
    s = Set.from_json(text)
    assert s.to_json() == text.encode()
    assert Set.from_fields_v1(json.loads(text)) == s
    assert json.dumps(s.to_fields_v1(), separators=(",", ":")) == text


def test_fields_v1_contents():
    s = Set.from_json(APPLIED_DEPLOYMENT)
    container = P("spec", "template", "spec", "containers", key(name="nginx"))
    assert s.has(container)  # ".": the item itself
    assert s.has((*container, field("ports"), key(containerPort=80, protocol="TCP"), field("containerPort")))
    assert not s.has(P("spec", "template"))  # no ".": a struct field is not itself owned


def test_fields_v1_members_and_children():
    # "." marks a node that is also a member; {} and null mark members; a node with children and no "."
    # is not one.
    s = Set.from_fields_v1({"f:a": {}, "f:b": None, "f:c": {".": {}, "f:d": {}}, "f:e": {"f:f": {}}})
    assert s.has(P("a")) and s.has(P("b")) and s.has(P("c")) and s.has(P("c", "d"))
    assert not s.has(P("e")) and s.has(P("e", "f"))
    assert s.to_fields_v1() == {"f:a": {}, "f:b": {}, "f:c": {".": {}, "f:d": {}}, "f:e": {"f:f": {}}}


@pytest.mark.parametrize(
    "fields",
    [  # TestFieldsToSetError and friends: each makes DecodeManagedFields fail
        {"k:{invalid}": {}},
        {"f:a": 5},
        {"f:a": "x"},
        {"f:a": [1]},
        {"x": {}},
        {"i:1.5": {}},
    ],
)
def test_fields_v1_errors(fields):
    with pytest.raises(FieldsV1Error):
        Set.from_fields_v1(fields)


def test_escaping_in_fields_v1_bytes():
    # json-iterator escapes <, > and & in strings; the key's own JSON is escaped again in the object.
    s = Set.of(P("metadata", "annotations", "a<b>&c"), P("spec", key(name='q"x')))
    assert s.to_json() == (
        b'{"f:metadata":{"f:annotations":{"f:a\\u003cb\\u003e\\u0026c":{}}},'
        b'"f:spec":{"k:{\\"name\\":\\"q\\\\\\"x\\"}":{}}}'
    )
    assert Set.from_json(s.to_json()) == s
