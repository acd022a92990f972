"""Hypothesis strategies for hostile inputs: JSON-like values with every kind of string (lone
surrogates included), numbers beyond int64, deep nesting, and valid objects with one part replaced."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

# Every code point, lone surrogates included (hypothesis leaves category Cs out by default).
ANY_CHAR = st.characters(codec=None, exclude_categories=())
TEXT = st.text(ANY_CHAR, max_size=20)
# Strings that reach validators: names, label keys, quantities, times, base64, selector operators.
INTERESTING = st.sampled_from(
    [
        "",
        "a",
        "a-b.c",
        "-a",
        "A" * 64,
        "a" * 254,
        "example.com/key",
        "/",
        "..",
        "0",
        "-1",
        "1.5",
        "1e309",
        "100Mi",
        "1Ki",
        "+1",
        "NaN",
        "Infinity",
        "9223372036854775808",
        "2024-01-01T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "null",
        "true",
        "aGVsbG8=",
        "aGVs\nbG8=",
        "!!",
        "\ud800",
        "\x00",
        "\ufffd",
        "é",
        "in",
        "notin",
        "!=",
        "==",
        ",",
        "(",
        ")",
    ]
)
STRINGS = st.one_of(TEXT, INTERESTING)
# What a URL's query or path can carry once the server has decoded it: valid text only (its
# percent-decoding replaces invalid UTF-8 with U+FFFD), so no lone surrogates.
URL_TEXT = st.one_of(st.text(st.characters(codec="utf-8"), max_size=20), INTERESTING.filter(lambda s: s != "\ud800"))
INTEGERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64]),
)
SCALARS = st.one_of(st.none(), st.booleans(), INTEGERS, st.floats(allow_nan=False, allow_infinity=False), STRINGS)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(STRINGS, children, max_size=4)),
    max_leaves=20,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (dict keys and list indexes), the root included."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> Any:
    """``base`` with up to three parts replaced by arbitrary values, or given an extra key."""
    value: Any = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(value)))
        replacement = draw(JSON_VALUES)
        if not path:
            value = replacement
            continue
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            parent[draw(STRINGS)] = replacement  # an extra (maybe unknown) field beside it
        else:
            parent[path[-1]] = replacement
    return value


def deep(depth: int, leaf: Any = 1) -> Any:
    """A value nested ``depth`` levels deep, alternating objects and arrays."""
    value = leaf
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


@st.composite
def json_bytes(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> bytes:
    """A value as JSON text (ASCII escapes or raw UTF-8), sometimes with a few bytes changed."""
    value = draw(values)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0 and data:
        index = draw(st.integers(0, len(data) - 1))
        data = data[:index] + draw(st.binary(min_size=0, max_size=4)) + data[index + 1 :]
    return data
