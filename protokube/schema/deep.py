"""JSON values nested as deeply as kube-apiserver accepts them, handled without recursion.

Go's JSON scanner refuses nesting beyond 10,000 levels (encoding/json's maxNestingDepth, shared by
sigs.k8s.io/json); kube-apiserver stores custom objects that deep. Python's own walks over nested
values recurse (json, copy.deepcopy, ``==``) and stop near its recursion limit of 1,000 frames, and
orjson writes at most 254 levels and reads at most 1,024. The helpers here keep their own stack:
``dumps`` and ``loads`` use orjson and continue where it stops, ``parse`` is the stdlib decoder
for text too deep for it (same hooks, same results).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson

MAX_DEPTH = 10000  # encoding/json's maxNestingDepth
_ORJSON_TOO_DEEP = "Recursion limit reached"


class TooDeep(ValueError):
    """JSON text nested deeper than Go's decoders allow; the message is Go's scanner error."""

    def __init__(self, char: str) -> None:
        super().__init__(f"invalid character '{char}' exceeded max depth")


def depth(value: Any) -> int:
    """How many objects and arrays nest in ``value`` (0 for a scalar)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node if isinstance(child, dict | list))
    return deepest


def copy(value: Any) -> Any:
    """A copy of a JSON value sharing no object or array with it (plain dicts and lists)."""
    if not isinstance(value, dict | list):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key, child in source.items():
                if isinstance(child, dict | list):
                    target[key] = copied = {} if isinstance(child, dict) else []
                    stack.append((child, copied))
                else:
                    target[key] = child
        else:
            for child in source:
                if isinstance(child, dict | list):
                    copied = {} if isinstance(child, dict) else []
                    stack.append((child, copied))
                    child = copied
                target.append(child)
    return root


def transform(value: Any, scalar: Callable[[Any], Any], key: Callable[[str], str] | None = None) -> Any:
    """``value`` with ``scalar`` applied to every scalar (and ``key`` to every object key), in
    document order; objects and arrays are changed in place."""
    if not isinstance(value, dict | list):
        return scalar(value)
    stack = [_entries(value, key)]
    while stack:
        for container, index, item in stack[-1]:
            if isinstance(item, dict | list):
                stack.append(_entries(item, key))
                break
            container[index] = scalar(item)
        else:
            stack.pop()
    return value


def _entries(node: dict | list, key: Callable[[str], str] | None) -> Iterator[tuple[Any, Any, Any]]:
    """(container, key or index, value) of each entry of ``node``, its keys renamed first."""
    if isinstance(node, list):
        return ((node, i, item) for i, item in enumerate(node))
    if key is not None:
        renamed = [(key(k), v) for k, v in node.items()]
        node.clear()
        node.update(renamed)
    return ((node, k, item) for k, item in node.items())


def equal(left: Any, right: Any) -> bool:
    """Python's ``==`` on JSON values, at any depth."""
    stack = [(left, right)]
    while stack:
        a, b = stack.pop()
        if a is b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif isinstance(a, dict | list) or isinstance(b, dict | list) or a != b:
            return False
    return True


# -- Writing -------------------------------------------------------------------------------------


def dumps(value: Any, option: int = 0) -> bytes:
    """``orjson.dumps(value, option=option)``, at any depth (options: sorted keys, indent 2)."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as err:
        if str(err) != _ORJSON_TOO_DEEP:
            raise
    return _write(value, bool(option & orjson.OPT_SORT_KEYS), bool(option & orjson.OPT_INDENT_2))


def _write(value: Any, sort_keys: bool, indent: bool) -> bytes:
    """orjson's output, written with a stack: scalars by orjson, objects and arrays here."""
    out: list[bytes] = []
    colon = b": " if indent else b":"
    # The objects and arrays being written, innermost last: their remaining (prefix, value)
    # entries, what goes before each entry, and their closing bracket.
    stack: list[tuple[Iterator[tuple[bytes, Any]], list[bytes], bytes]] = []
    node = value
    while True:
        if isinstance(node, dict | list) and node:
            level = len(stack)
            inner = b"\n" + b"  " * (level + 1) if indent else b""
            outer = b"\n" + b"  " * level if indent else b""
            if isinstance(node, dict):
                out.append(b"{")
                stack.append((_members(node, sort_keys, colon), [inner, b"," + inner], outer + b"}"))
            else:
                out.append(b"[")
                stack.append((((b"", item) for item in node), [inner, b"," + inner], outer + b"]"))
        else:
            out.append(orjson.dumps(node))
        while stack:
            entries, before, closing = stack[-1]
            entry = next(entries, None)
            if entry is None:
                out.append(closing)
                stack.pop()
                continue
            out.append(before[0] + entry[0])
            before[0] = before[1]
            node = entry[1]
            break
        else:
            return b"".join(out)


def _members(obj: dict[str, Any], sort_keys: bool, colon: bytes) -> Iterator[tuple[bytes, Any]]:
    for key in sorted(obj) if sort_keys else obj:
        yield orjson.dumps(key) + colon, obj[key]


def write_text(value: Any, scalar: Callable[[Any], str], key: Callable[[str], str], sort_keys: bool) -> str:
    """Compact JSON text at any depth, in a writer's own style: ``scalar`` writes each scalar and
    ``key`` each object key (quoted)."""
    out: list[str] = []
    stack: list[Any] = [value]  # values to write, and _Text to append as it is
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item)
        elif isinstance(item, dict):
            keys = sorted(item) if sort_keys else list(item)
            out.append("{")
            stack.append(_Text("}"))
            for i in range(len(keys) - 1, -1, -1):
                stack.append(item[keys[i]])
                stack.append(_Text(("," if i else "") + key(keys[i]) + ":"))
        elif isinstance(item, list):
            out.append("[")
            stack.append(_Text("]"))
            for i in range(len(item) - 1, -1, -1):
                stack.append(item[i])
                if i:
                    stack.append(_Text(","))
        else:
            out.append(scalar(item))
    return "".join(out)


class _Text(str):
    """Text ``write_text`` appends as it is (a string value is a scalar)."""


# -- Reading -------------------------------------------------------------------------------------


def loads(data: bytes | str) -> Any:
    """``orjson.loads(data)`` at any depth, for what this server wrote (objects it stored nest a
    little deeper than the requests that made them: their managedFields). The same deep texts come
    back again and again: the last few are remembered, and a copy of their value returned."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as err:
        if not str(err).startswith("depth limit exceeded"):
            raise
    text = data.decode() if isinstance(data, bytes) else data
    value = _PARSED.pop(text, None)
    if value is None:
        value = parse(text, max_depth=None)
    if len(text) <= _PARSED_MAX_LENGTH:
        _PARSED[text] = value
        if len(_PARSED) > _PARSED_KEPT:
            del _PARSED[next(iter(_PARSED))]
    return copy(value)


_PARSED: dict[str, Any] = {}  # deep texts and their values, least recently used first
_PARSED_KEPT = 8
_PARSED_MAX_LENGTH = 256 * 1024  # a 10,000-level object with its managedFields takes ~200 KiB


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


def parse(
    text: str,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_float: Callable[[str], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
    parse_constant: Callable[[str], Any] | None = None,
    max_depth: int | None = MAX_DEPTH,
) -> Any:
    """``json.loads`` for text nested too deeply for it (TooDeep beyond ``max_depth``, None for no
    limit), with its hooks and defaults. Syntax errors are json.JSONDecodeError with the stdlib's
    messages."""
    object_pairs_hook = object_pairs_hook or dict
    scalars = (parse_float or float, parse_int or int, parse_constant or float)
    # The open objects and arrays, innermost last: [members so far, key of the pending member]
    # for an object, [items so far, None] for an array.
    stack: list[list[Any]] = []
    pos = _skip_space(text, 0)
    while True:
        char = text[pos : pos + 1]
        if char in ("{", "["):
            if max_depth is not None and len(stack) >= max_depth:
                raise TooDeep(char)
            pos = _skip_space(text, pos + 1)
            if text[pos : pos + 1] == ("}" if char == "{" else "]"):
                value: Any = object_pairs_hook([]) if char == "{" else []
                pos += 1
            elif char == "{":
                key, pos = _member_key(text, pos)
                stack.append([[], key])
                continue
            else:
                stack.append([[], None])
                continue
        else:
            value, pos = _scalar(text, pos, *scalars)
        # A value is complete: it goes into its container, which may be complete in turn.
        while True:
            pos = _skip_space(text, pos)
            if not stack:
                if pos != len(text):
                    raise json.JSONDecodeError("Extra data", text, pos)
                return value
            items, key = stack[-1]
            items.append(value if key is None else (key, value))
            char = text[pos : pos + 1]
            if char == ",":
                pos = _skip_space(text, pos + 1)
                if key is not None:
                    stack[-1][1], pos = _member_key(text, pos)
                break
            if char != ("]" if key is None else "}"):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
            stack.pop()
            value = items if key is None else object_pairs_hook(items)
            pos += 1


def _skip_space(text: str, pos: int) -> int:
    return _WHITESPACE.match(text, pos).end()


def _member_key(text: str, pos: int) -> tuple[str, int]:
    """An object member's key at ``pos``, and where its value starts."""
    if text[pos : pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = json.decoder.scanstring(text, pos + 1, True)
    pos = _skip_space(text, pos)
    if text[pos : pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _skip_space(text, pos + 1)


def _scalar(
    text: str,
    pos: int,
    parse_float: Callable[[str], Any],
    parse_int: Callable[[str], Any],
    parse_constant: Callable[[str], Any],
) -> tuple[Any, int]:
    """The string, number, literal or constant at ``pos``, and where it ends."""
    if text[pos : pos + 1] == '"':
        return json.decoder.scanstring(text, pos + 1, True)
    for word, value in _LITERALS.items():
        if text.startswith(word, pos):
            return value, pos + len(word)
    for name in _CONSTANTS:
        if text.startswith(name, pos):
            return parse_constant(name), pos + len(name)
    number = _NUMBER.match(text, pos)
    if number is None:
        raise json.JSONDecodeError("Expecting value", text, pos)
    integer, fraction, exponent = number.groups()
    if fraction or exponent:
        return parse_float(integer + (fraction or "") + (exponent or "")), number.end()
    return parse_int(integer), number.end()
