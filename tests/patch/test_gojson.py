"""Go's JSON facts the patch handler shows clients: encoding/json's syntax error texts (scanner.go),
sigs.k8s.io/json's PreserveInts and strict errors, encoding/json's output, fmt's %v and sort.SliceStable."""

from __future__ import annotations

import pytest

import protokube.gateway.patch.gojson as gojson
from protokube.gateway.patch.gofmt import format_g, format_json_float, sprint_s, sprint_v
from protokube.gateway.patch.gosort import slice_stable

SYNTAX = [
    (b"", "unexpected end of JSON input"),
    (b"  ", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b'{"a":', "unexpected end of JSON input"),
    (b'"abc', "unexpected end of JSON input"),
    (b"tr", "invalid character ' ' in literal true (expecting 'u')"),
    (b"fals", "invalid character ' ' in literal false (expecting 'e')"),
    (b"nuLL", "invalid character 'L' in literal null (expecting 'l')"),
    (b"-", "invalid character ' ' in numeric literal"),
    (b"-a", "invalid character 'a' in numeric literal"),
    (b"1.", "invalid character ' ' after decimal point in numeric literal"),
    (b"1.e5", "invalid character 'e' after decimal point in numeric literal"),
    (b"1e", "invalid character ' ' in exponent of numeric literal"),
    (b"01", "invalid character '1' after top-level value"),
    (b'"\\x"', "invalid character 'x' in string escape code"),
    (b'"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
    (b'"a\tb"', "invalid character '\\t' in string literal"),
    (b'"a\x01"', "invalid character '\\x01' in string literal"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"{a:1}", "invalid character 'a' looking for beginning of object key string"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b"{} []", "invalid character '[' after top-level value"),
    (b"NaN", "invalid character 'N' looking for beginning of value"),
    (b"\xef\xbb\xbf{}", "invalid character '\u00ef' looking for beginning of value"),
    (b"\x80", "invalid character '\\u0080' looking for beginning of value"),
    (b"[" * 10001, "invalid character '[' exceeded max depth"),
]


@pytest.mark.parametrize(("data", "message"), SYNTAX)
def test_syntax_errors(data: bytes, message: str) -> None:
    assert gojson.syntax_error(data) == message
    with pytest.raises(gojson.GoJSONError) as excinfo:
        gojson.loads(data)
    assert str(excinfo.value) == message


@pytest.mark.parametrize(
    "data", [b"{}", b" [1, 2.5, -0, 1e3, true, false, null] ", b'"\\ud800"', b"[" * 100 + b"]" * 100]
)
def test_valid_json(data: bytes) -> None:
    assert gojson.syntax_error(data) is None


def test_preserve_ints() -> None:
    value, duplicates = gojson.loads(
        b'{"i": 1, "f": 1.0, "e": 1e3, "big": 12345678901234567890, "neg": -9223372036854775808}'
    )
    assert value == {"i": 1, "f": 1.0, "e": 1000.0, "big": 1.2345678901234567e19, "neg": -(2**63)}
    assert [type(value[k]) for k in ("i", "f", "e", "big", "neg")] == [int, float, float, float, int]
    assert duplicates is False


def test_invalid_utf8_and_lone_surrogates_decode_as_replacement_characters() -> None:
    value, _ = gojson.loads(b'{"a": "x\xffy", "b": "\\ud800", "c": "\\ud83d\\ude00"}')
    assert value == {"a": "x\ufffdy", "b": "\ufffd", "c": "\U0001f600"}


def test_duplicate_field_paths() -> None:
    found = gojson.StrictErrors()
    gojson.duplicate_fields(gojson.pairs_loads(b'{"a": [{"b": 1, "b": 2}], "a": {"c": {"d": 1, "d": 1}}}'), "", found)
    assert found.items == ['duplicate field "a[0].b"', 'duplicate field "a"', 'duplicate field "a.c.d"']


def test_marshal_like_encoding_json() -> None:
    value = {"s": "<a & b>\u2028\b\f\x01\x7f", "f": [1.0, 1e21, 1e-7, 0.5, 123456789.0], "n": None, "t": True}
    assert gojson.marshal(value) == (
        '{"s":"\\u003ca \\u0026 b\\u003e\\u2028\\b\\f\\u0001\x7f","f":[1,1e+21,1e-7,0.5,123456789],"n":null,"t":true}'
    )
    assert gojson.marshal({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'


@pytest.mark.parametrize(
    ("f", "g", "json_text"),
    [
        (1000000.0, "1e+06", "1000000"),
        (123456.0, "123456", "123456"),
        (0.0001, "0.0001", "0.0001"),
        (0.00001, "1e-05", "0.00001"),
        (1e21, "1e+21", "1e+21"),
        (-2.5e-10, "-2.5e-10", "-2.5e-10"),
        (0.0, "0", "0"),
    ],
)
def test_float_formats(f: float, g: str, json_text: str) -> None:
    assert format_g(f) == g
    assert format_json_float(f) == json_text


def test_fmt_verbs() -> None:
    assert sprint_v({"b": [1, "x", None, 1.5], "a": {"z": True}}) == "map[a:map[z:true] b:[1 x <nil> 1.5]]"
    assert sprint_s("delete") == "delete"
    assert sprint_s(1) == "%!s(int64=1)"
    assert sprint_s(None) == "%!s(<nil>)"
    assert sprint_s({"a": 1, "b": None}) == "map[a:%!s(int64=1) b:<nil>]"


def test_slice_stable_is_stable() -> None:
    items = [(i % 7, i) for i in range(100)]
    slice_stable(items, lambda a, b: a[0] < b[0])
    assert items == sorted(((i % 7, i) for i in range(100)), key=lambda t: t[0])


def test_slice_stable_with_an_inconsistent_less_follows_go() -> None:
    """Strategic merge patch's less ("unknown items are less than anything") is not an ordering; the
    result is what Go's insertion sort gives: 3 and 1 are known (order [1, 3]), x and y are not."""
    order = [1, 3]

    def less(a: object, b: object) -> bool:
        if a in order and b in order:
            return order.index(a) < order.index(b)
        return True

    items: list[object] = [3, "x", 1, "y"]
    slice_stable(items, less)
    assert items == ["y", 1, "x", 3]
