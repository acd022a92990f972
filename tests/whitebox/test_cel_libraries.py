"""gateway/cel: compilation (declared names, upstream's error wording), evaluation with JSON-like
activations, and the Kubernetes CEL libraries written on cel-python (lists, strings, regex, url,
quantity, ip/cidr, authorizer)."""

from __future__ import annotations

from typing import Any

import pytest
from celpy import celtypes

from protokube.gateway.auth.authorization import AlwaysAllow, AlwaysDeny
from protokube.gateway.auth.rbac import Attributes, Decision
from protokube.gateway.cel import CELCompileError, CELEvaluationError, LazyMap, compile, from_cel
from protokube.gateway.cel.admission import AuthorizerValue
from protokube.gateway.user import UserInfo


def run(expression: str, **activation: Any) -> Any:
    return from_cel(compile(expression, activation).evaluate(activation))


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[1, 2, 3].isSorted()", True),
        ("[1, 3, 2].isSorted()", False),
        ("['a', 'b'].isSorted()", True),
        ("[1, 2, 3].sum()", 6),
        ("[1.5, 2.0].sum()", 3.5),
        ("[].sum()", 0),
        ("[1, 5, 3].max()", 5),
        ("[4, 2, 8].min()", 2),
        ("[1, 2, 1].indexOf(1)", 0),
        ("[1, 2, 1].lastIndexOf(1)", 2),
        ("[1, 2].indexOf(3)", -1),
    ],
)
def test_lists(expression: str, expected: Any) -> None:
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'hello'.charAt(1)", "e"),
        ("'hello'.charAt(5)", ""),
        ("'hello mellow'.indexOf('ello')", 1),
        ("'hello mellow'.indexOf('ello', 2)", 7),
        ("'hello mellow'.lastIndexOf('ello')", 7),
        ("'hello mellow'.lastIndexOf('ello', 6)", 1),
        ("'TacoCat'.lowerAscii()", "tacocat"),
        ("'TacoCÄt'.upperAscii()", "TACOCÄT"),
        ("'a b a'.replace('a', 'c')", "c b c"),
        ("'a b a'.replace('a', 'c', 1)", "c b a"),
        ("'a,b,c'.split(',')", ["a", "b", "c"]),
        ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
        ("'a,b,c'.split(',', 0)", []),
        ("'héllo'.substring(1)", "éllo"),
        ("'hello'.substring(1, 3)", "el"),
        ("'  x \\t'.trim()", "x"),
        ("['a', 'b'].join()", "ab"),
        ("['a', 'b'].join('-')", "a-b"),
        ("'abc 123 45'.find('[0-9]+')", "123"),
        ("'abc'.find('[0-9]+')", ""),
        ("'abc 123 45 6'.findAll('[0-9]+')", ["123", "45", "6"]),
        ("'abc 123 45 6'.findAll('[0-9]+', 2)", ["123", "45"]),
        ("'%s has %d items'.format(['x', 3])", "x has 3 items"),
        ("'%.2f|%e|%x|%X|%o|%b|%%'.format([3.14159, 1.5, 255, 255, 8, 5])", "3.14|1.500000e+00|ff|FF|10|101|%"),
        ("'%s'.format([[1, 'a', true, null]])", "[1, a, true, null]"),
        ("strings.quote('a\"b\\n')", '"a\\"b\\n"'),
    ],
)
def test_strings_and_regex(expression: str, expected: Any) -> None:
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("'%d'.format(['x'])", "error during formatting: d clause can't take a value of this type"),
        ("'%s %s'.format([1])", "index 1 out of range"),
        ("'hello'.charAt(6)", "index out of range: 6"),
        ("'hello'.substring(3, 1)", "invalid substring range. start: 3, end: 1"),
        ("[].max()", "max called on empty list"),
        ("quantity('1x')", "quantities must match the regular expression"),
        ("ip('::ffff:1.2.3.4')", "IPv4-mapped IPv6 address is not allowed"),
        ("ip('fe80::1%eth0')", "IP Address with zone value is not allowed"),
        ("url('example.com')", "invalid URI for request"),
        ("object.spec.missing", "no such key: missing"),
        ("1 / 0", "division by zero"),
    ],
)
def test_evaluation_errors(expression: str, message: str) -> None:
    with pytest.raises(CELEvaluationError) as raised:
        compile(expression, ["object"]).evaluate({"object": {"spec": {}}})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("sets.contains([1, 2, 3], [2, 1])", True),
        ("sets.contains([1], [2])", False),
        ("sets.contains([1, 2], [2.0])", True),
        ("sets.equivalent([1, 2, 2], [2, 1])", True),
        ("sets.equivalent([1], [1, 3])", False),
        ("sets.intersects(['a'], ['b', 'a'])", True),
        ("sets.intersects([], ['a'])", False),
    ],
)
def test_sets(expression: str, expected: Any) -> None:
    assert run(expression) == expected


def test_a_variable_named_as_a_namespace_is_the_variable() -> None:
    assert run("sets.x", sets={"x": 1}) == 1


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("url('https://user@example.com:8443/a%20b?x=1&x=2&y=').getScheme()", "https"),
        ("url('https://user@example.com:8443/a%20b?x=1').getHost()", "example.com:8443"),
        ("url('https://[::1]:80/p').getHost()", "[::1]:80"),
        ("url('https://[::1]:80/p').getHostname()", "::1"),
        ("url('https://example.com:8443/p').getPort()", "8443"),
        ("url('https://example.com/p').getPort()", ""),
        ("url('https://example.com/a%20b').getEscapedPath()", "/a%20b"),
        ("url('https://example.com/p?x=1&x=2&y=').getQuery()", {"x": ["1", "2"], "y": [""]}),
        ("url('/absolute/path').getHostname()", ""),
        ("isURL('https://example.com')", True),
        ("isURL('example.com')", False),
        ("isURL('mailto:x@example.com')", False),
    ],
)
def test_url(expression: str, expected: Any) -> None:
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("quantity('1Gi').compareTo(quantity('1024Mi'))", 0),
        ("quantity('1').compareTo(quantity('500m'))", 1),
        ("quantity('500m').isLessThan(quantity('1'))", True),
        ("quantity('1k').isGreaterThan(quantity('1Ki'))", False),
        ("quantity('500m').add(1).asApproximateFloat()", 1.5),
        ("quantity('1').add(quantity('500m')).sub(quantity('1')).asApproximateFloat()", 0.5),
        ("quantity('1k').asInteger()", 1000),
        ("quantity('1e3').asInteger()", 1000),
        ("quantity('1.5').isInteger()", False),
        ("quantity('-3').sign()", -1),
        ("quantity('1Gi') == quantity('1024Mi')", True),
        ("isQuantity('100Mi')", True),
        ("isQuantity('1x')", False),
    ],
)
def test_quantity(expression: str, expected: Any) -> None:
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("ip('10.0.0.1').family()", 4),
        ("ip('::1').family()", 6),
        ("ip('127.0.0.1').isLoopback()", True),
        ("ip('0.0.0.0').isUnspecified()", True),
        ("ip('169.254.1.1').isLinkLocalUnicast()", True),
        ("ip('224.0.0.1').isLinkLocalMulticast()", True),
        ("ip('192.168.0.1').isGlobalUnicast()", True),
        ("ip('255.255.255.255').isGlobalUnicast()", False),
        ("isIP('1.2.3')", False),
        ("string(ip('2001:db8::1'))", "2001:db8::1"),
        ("isCIDR('10.0.0.0/8')", True),
        ("isCIDR('10.0.0.0')", False),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", True),
        ("cidr('10.0.0.0/8').containsIP(ip('11.1.2.3'))", False),
        ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
        ("cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", False),
        ("cidr('10.1.2.3/8').prefixLength()", 8),
        ("string(cidr('10.1.2.3/8').masked())", "10.0.0.0/8"),
        ("string(cidr('10.1.2.3/8').ip())", "10.1.2.3"),
    ],
)
def test_ip_and_cidr(expression: str, expected: Any) -> None:
    assert run(expression) == expected


def test_compile_errors_name_what_is_missing_as_upstream_words_them() -> None:
    with pytest.raises(CELCompileError) as raised:
        compile("object.spec.name.reverse()", ["object"])
    assert str(raised.value) == (
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'reverse' (in container '')\n"
        " | object.spec.name.reverse()\n"
        " | .................^"
    )
    with pytest.raises(CELCompileError, match=r"undeclared reference to 'format\.dns1123Label'"):
        compile("format.dns1123Label().validate(object.metadata.name)", ["object"])
    with pytest.raises(CELCompileError, match=r"undeclared reference to 'sets\.union'"):
        compile("sets.union([1], [2])", [])
    with pytest.raises(CELCompileError, match="undeclared reference to 'params'"):
        compile("params.x == 1", ["object"])
    with pytest.raises(CELCompileError, match="Syntax error"):
        compile("object.x ==", ["object"])
    with pytest.raises(CELCompileError, match="undefined field 'b'"):
        compile("variables.b", ["variables"], composition=["a"])


def test_expressions_nested_too_deeply_are_refused_at_compilation() -> None:
    for expression in ("(" * 1000 + "1" + ")" * 1000, " + ".join(["1"] * 3000)):
        with pytest.raises(CELCompileError, match="expression recursion limit exceeded"):
            compile(expression, [])


def test_macro_variables_are_bound_in_their_predicate_only() -> None:
    assert run("xs.all(x, x > 0) && xs.exists(y, y == 2)", xs=[1, 2]) is True
    assert run("xs.map(x, x * 2)", xs=[1, 2]) == [2, 4]
    with pytest.raises(CELCompileError, match="undeclared reference to 'x'"):
        compile("xs.all(x, x > 0) && x > 0", ["xs"])


def test_json_values_keep_go_numbers() -> None:
    assert run("o.big > 1.0", o={"big": 2**64}) is True
    assert run("o.n + 1", o={"n": 41}) == 42
    assert run("o.f * 2.0", o={"f": 1.25}) == 2.5
    assert run("has(o.a) && !has(o.b)", o={"a": None}) is True


def test_ints_are_cel_ints_within_int64_and_uint64() -> None:
    """Literals, size(), JSON numbers and int()/uint() are CEL's own int and uint (made without
    cel-python's slow constructors: values.INT), and int64's and uint64's ranges still hold."""
    for expression, activation in (("-5", {}), ("size(o.s)", {"o": {"s": "abc"}}), ("o.n", {"o": {"n": 5}})):
        assert type(compile(expression, activation).evaluate(activation)) is celtypes.IntType
    assert type(compile("uint(3) + 2u", []).evaluate({})) is celtypes.UintType
    assert run("int('5') + size([1, 2]) + size({'a': 1})") == 8
    for overflowing in ("9223372036854775807 + 1", "-9223372036854775808 - 1", "18446744073709551615u + 1u"):
        with pytest.raises(CELEvaluationError, match="overflow"):
            compile(overflowing, []).evaluate({})
    with pytest.raises(CELEvaluationError, match="overflow"):
        compile("9223372036854775808", []).evaluate({})


@pytest.mark.parametrize(
    "expression",
    [
        "type(1) == int && type(1u) == uint && type(1.5) == double && type(true) == bool",
        "type('a') == string && type(b'a') == bytes && type(null) == null_type",
        "type([1]) == list && type({'a': 1}) == map && type(int) == type && type(type(1)) == type",
        "type(o.m) == map && type(o.l) == list && type(o.s) == string && type(o.n) == int && type(o.f) == double",
        "type(o.m) != list && type(1) != uint && .int == int",
    ],
)
def test_type_denotations(expression: str) -> None:
    """Type names evaluate to types, type() of a JSON value (a map converted lazily too) to its CEL type."""
    assert run(expression, o={"m": {"a": 1}, "l": [1], "s": "x", "n": 3, "f": 1.5}) is True


def test_a_type_name_is_no_namespace_and_a_variable_may_hide_it() -> None:
    with pytest.raises(CELCompileError, match=r"undeclared reference to 'int\.x'"):
        compile("int.x == 1", [])
    assert run("[1].exists(int, int == 1)") is True
    assert run("o.int", o={"int": 2}) == 2


def test_logic_absorbs_errors_and_takes_has_as_a_bool() -> None:
    assert run("o.x.y || true", o={}) is True
    assert run("o.x.y && false", o={}) is False
    assert run("has(o.a) == true ? 1 : 2", o={"a": 1}) == 1
    with pytest.raises(CELEvaluationError, match="no such key: x"):
        compile("o.x.y || false", ["o"]).evaluate({"o": {}})


def test_lazy_variables_are_computed_once_when_read() -> None:
    calls: list[str] = []

    def compute(name: str) -> Any:
        calls.append(name)
        return from_cel(compile("1 + 1", []).evaluate({})) if name == "two" else ValueError("unused")

    variables = LazyMap(compute, ["two", "unused"])
    program = compile("variables.two + variables.two", ["variables"], composition=["two", "unused"])
    assert from_cel(program.evaluate({"variables": variables})) == 4
    assert calls == ["two"]


class RecordingAuthorizer:
    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    def authorize(self, request: Attributes) -> Decision:
        self.asked.append(request)
        return Decision(request.verb == "get", "" if request.verb == "get" else "no")


def test_authorizer_checks_as_the_requests_user() -> None:
    recording = RecordingAuthorizer()
    user = UserInfo("alice", groups=("dev",))
    value = AuthorizerValue(recording, user)
    expression = "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('d')"
    assert run(expression + ".check('get').allowed()", authorizer=value) is True
    assert run(expression + ".check('delete').reason()", authorizer=value) == "no"
    first = recording.asked[0]
    assert (first.user, first.api_group, first.resource, first.subresource, first.namespace, first.name) == (
        user,
        "apps",
        "deployments",
        "scale",
        "ns",
        "d",
    )
    assert run("authorizer.path('/healthz').check('get').allowed()", authorizer=value) is True
    assert recording.asked[-1].path == "/healthz" and not recording.asked[-1].resource_request
    selected = "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n').labelSelector('a=b')"
    assert run(selected + ".check('get').allowed()", authorizer=value) is True
    sa = "authorizer.serviceAccount('kube-system', 'builder').group('').resource('pods').check('get').allowed()"
    assert run(sa, authorizer=AuthorizerValue(AlwaysAllow(), user)) is True
    assert run("authorizer.path('/x').check('get').errored()", authorizer=AuthorizerValue(AlwaysDeny(), user)) is False
