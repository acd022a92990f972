"""protokube.schema.deep against the libraries it stands in for where they reach: the stdlib's JSON
decoder (values, hooks, error messages and positions), orjson's output (every option the server
uses), Python's copy and ``==``; and past them, at Go's 10,000 levels."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protokube.schema import deep

from .strategies import JSON_VALUES, json_bytes

OPTIONS = [0, orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2]
HOOKS: dict[str, Any] = {
    "object_pairs_hook": list,
    "parse_float": lambda text: ("float", text),
    "parse_int": lambda text: ("int", text),
    "parse_constant": lambda name: ("constant", name),
}


def _outcome(parse: Any, text: str, **hooks: Any) -> Any:
    try:
        return parse(text, **hooks)
    except json.JSONDecodeError as err:
        return (err.msg, err.pos)


@given(json_bytes(JSON_VALUES), st.booleans())
def test_parse_is_the_stdlib_decoder(data: bytes, hooked: bool) -> None:
    text = data.decode("utf-8", "replace")
    hooks = HOOKS if hooked else {}
    assert _outcome(deep.parse, text, **hooks) == _outcome(json.loads, text, **hooks)


@pytest.mark.parametrize("text", ["", " ", "nul", "[1,]", "[1 2]", '{"a" 1}', '{"a":1,}', "{a:1}", '"x', "[1] x", "-"])
def test_parse_words_syntax_errors_as_the_stdlib(text: str) -> None:
    assert _outcome(deep.parse, text) == _outcome(json.loads, text)


@given(JSON_VALUES.filter(lambda v: not isinstance(v, int) or -(2**63) <= v < 2**64), st.sampled_from(OPTIONS))
def test_writing_is_orjson(value: Any, option: int) -> None:
    try:
        expected = orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return  # not JSON orjson writes (integers beyond 64 bits, lone surrogates)
    assert deep._write(value, bool(option & orjson.OPT_SORT_KEYS), bool(option & orjson.OPT_INDENT_2)) == expected


@given(JSON_VALUES, JSON_VALUES)
def test_copy_and_equality_are_pythons(value: Any, other: Any) -> None:
    copied = deep.copy(value)
    assert copied == value and deep.equal(copied, value)
    assert deep.equal(value, other) == (value == other)
    assert deep.depth(value) == _depth(value)


def _depth(value: Any) -> int:
    if isinstance(value, dict | list):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max((_depth(child) for child in children), default=0)
    return 0


def test_go_json_limit() -> None:
    at_limit = '{"a":' * 9999 + "[]" + "}" * 9999
    value = deep.parse(at_limit)
    assert deep.depth(value) == 10000
    assert deep.dumps(value).decode() == at_limit
    assert deep.loads(deep.dumps(value, orjson.OPT_SORT_KEYS)) is not value
    with pytest.raises(deep.TooDeep, match=r"^invalid character '\[' exceeded max depth$"):
        deep.parse('{"a":' * 10000 + "[]" + "}" * 10000)
    assert deep.depth(deep.loads('{"a":' * 10000 + "[]" + "}" * 10000)) == 10001  # what the server wrote


def test_transform_keeps_document_order() -> None:
    seen: list[Any] = []
    value = {"b": [1, {"c": 2}], "a": 3}
    deep.transform(value, lambda v: seen.append(v) or v * 10, str.upper)
    assert seen == [1, 2, 3]
    assert value == {"B": [10, {"C": 20}], "A": 30}
    assert copy.deepcopy(value) == value
