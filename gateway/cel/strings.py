"""cel-go's strings extension as Kubernetes 1.32 enables it (version 2: charAt, indexOf,
lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join, format, strings.quote).
Strings are indexed by code point, as CEL's (regular expressions: regex.py)."""

from __future__ import annotations

import re
from typing import Any

from celpy import celtypes

from protokube.gateway.cel.library import fail, method, namespaced

String = celtypes.StringType
Int = celtypes.IntType

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@method("charAt", String)
def char_at(text: String, index: Int) -> Any:
    if not 0 <= index <= len(text):
        return fail(f"index out of range: {index}")
    return String(text[index : index + 1])


@method("indexOf", String)
def index_of(text: String, sub: String, offset: int = 0) -> Any:
    if not 0 <= offset <= len(text):
        return fail(f"index out of range: {offset}")
    return Int(text.find(sub, offset))


@method("lastIndexOf", String)
def last_index_of(text: String, sub: String, offset: Int | None = None) -> Any:
    end = len(text) if offset is None else int(offset)
    if not 0 <= end <= len(text):
        return fail(f"index out of range: {offset}")
    return Int(text.rfind(sub, 0, end + len(sub)))


@method("lowerAscii", String)
def lower_ascii(text: String) -> String:
    return String(text.translate(_LOWER))


@method("upperAscii", String)
def upper_ascii(text: String) -> String:
    return String(text.translate(_UPPER))


@method("replace", String)
def replace(text: String, old: String, new: String, count: int = -1) -> String:
    return String(text.replace(old, new, int(count) if count >= 0 else -1))


@method("split", String)
def split(text: String, separator: String, count: int = -1) -> Any:
    """Go's strings.SplitN: 0 pieces for n == 0, all for n < 0, code points for an empty separator."""
    if count == 0:
        return celtypes.ListType()
    if separator:
        parts = text.split(separator, int(count) - 1 if count > 0 else -1)
    else:
        parts = list(text)
        if 0 < count < len(parts):
            parts = [*parts[: count - 1], "".join(parts[count - 1 :])]
    return celtypes.ListType(String(p) for p in parts)


@method("substring", String)
def substring(text: String, start: Int, end: Int | None = None) -> Any:
    stop = len(text) if end is None else int(end)
    if not 0 <= start <= len(text):
        return fail(f"index out of range: {start}")
    if not 0 <= stop <= len(text):
        return fail(f"index out of range: {stop}")
    if stop < start:
        return fail(f"invalid substring range. start: {start}, end: {stop}")
    return String(text[start:stop])


@method("trim", String)
def trim(text: String) -> String:
    return String(text.strip())


@method("join", celtypes.ListType)
def join(items: celtypes.ListType, separator: str = "") -> Any:
    if not all(isinstance(item, String) for item in items):
        return fail("no such overload")
    return String(separator.join(items))


_QUOTED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_CLAUSE = re.compile(r"%(?:%|(?:\.(\d+))?([a-zA-Z]))")


@namespaced("strings", "quote")
def quote(text: Any) -> Any:
    """The string as a CEL string literal: in double quotes, escapes for quotes and controls."""
    if not isinstance(text, str):
        return fail("no such overload")
    escaped = "".join(_QUOTED.get(c, "\\" + c if c in '"\\' else c) for c in text)
    return String(f'"{escaped}"')


def _as_string(value: Any) -> str:
    """%s: CEL's string form of a value."""
    if value is None:
        return "null"
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if isinstance(value, celtypes.DoubleType):
        return repr(float(value)) if float(value) != int(value) or abs(value) >= 1e21 else str(int(value))
    if isinstance(value, celtypes.ListType):
        return "[" + ", ".join(_as_string(v) for v in value) + "]"
    if isinstance(value, celtypes.MapType):
        return "{" + ", ".join(f"{_as_string(k)}: {_as_string(v)}" for k, v in value.items()) + "}"
    return str(value)


def _clause(verb: str, precision: str | None, value: Any) -> str | None:
    """One formatting clause, None when it does not take the value."""
    integer = isinstance(value, int) and not isinstance(value, celtypes.BoolType)
    if verb == "s":
        return _as_string(value)
    if verb == "d" and integer:
        return str(int(value))
    if verb in "fe" and isinstance(value, celtypes.DoubleType | celtypes.IntType):
        return f"{float(value):.{int(precision) if precision else 6}{verb}}"
    if verb in "xXob" and integer:
        return format(int(value), verb)
    if verb in "xX" and isinstance(value, str):
        return format(int.from_bytes(value.encode(), "big"), f"0{2 * len(value.encode())}{verb}") if value else ""
    return None


@method("format", String)
def format_(text: String, args: Any) -> Any:
    """``"%s has %d items".format([name, n])``: %s, %d, %f and %e (with .precision), %x, %X, %o, %b."""
    if not isinstance(args, celtypes.ListType):
        return fail("no such overload")
    out, position, index = [], 0, 0
    for match in _CLAUSE.finditer(text):
        out.append(text[position : match.start()])
        position = match.end()
        if match.group(0) == "%%":
            out.append("%")
            continue
        precision, verb = match.group(1), match.group(2)
        if verb not in "sdfexXob":
            return fail(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')
        if index >= len(args):
            return fail(f"index {index} out of range")
        formatted = _clause(verb, precision, args[index])
        if formatted is None:
            return fail(f"error during formatting: {verb} clause can't take a value of this type")
        out.append(formatted)
        index += 1
    out.append(text[position:])
    return String("".join(out))
