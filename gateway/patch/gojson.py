"""JSON as Go reads and writes it, where kube-apiserver's patch handler shows the difference.

- ``syntax_error``: Go's encoding/json scanner (checkValid), which both encoding/json and
  sigs.k8s.io/json run before decoding; its messages are what clients see in 400 answers.
- ``loads``: decoding into ``interface{}`` with sigs.k8s.io/json's PreserveInts (integers as
  int64, others as float64), invalid UTF-8 and lone surrogates as U+FFFD.
- ``pairs_loads``: the same, keeping every member of every object in document order (duplicates
  included), for strict decoding, which reports duplicate and unknown fields by path.
- ``marshal``: encoding/json's output (HTML-safe escaping, Go's float format).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from protokube.gateway.patch.gofmt import format_json_float
from protokube.schema import deep

UNEXPECTED_END = "unexpected end of JSON input"
MAX_DEPTH = 10000  # encoding/json's maxNestingDepth

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
SURROGATES = re.compile("[\ud800-\udfff]")


class GoJSONError(Exception):
    """A decoding error, with the text of Go's error."""


class BadNumber:
    """A number that does not fit a float64 (strconv.ParseFloat's range error)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Pairs(list):
    """A JSON object as the list of its (key, value) members, duplicates included."""


# -- The scanner ---------------------------------------------------------------------------------


def quote_char(c: int) -> str:
    """encoding/json's quoteChar: a byte as it appears in a syntax error."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    return "'" + _quote_rune(chr(c)) + "'"


def _quote_rune(ch: str) -> str:
    """strconv.Quote's escaping of one rune (without the surrounding quotes)."""
    short = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    if ch in short:
        return short[ch]
    if ch == "\\":
        return "\\\\"
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if code == 0x20 or unicodedata.category(ch)[0] in "LMNPS":
        return ch
    return f"\\u{code:04x}"


_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}

# Parser states and the contexts of their error messages.
(_BEGIN_VALUE, _BEGIN_VALUE_OR_EMPTY, _BEGIN_STRING_OR_EMPTY, _BEGIN_STRING, _END_VALUE, _END_TOP) = range(6)
(_STRING, _STRING_ESC, _STRING_HEX, _NEG, _ZERO, _ONE, _DOT, _DOT0, _E, _ESIGN, _E0, _LITERAL) = range(6, 18)
_OBJECT_KEY, _OBJECT_VALUE, _ARRAY = range(3)


class _Scanner:
    """Go's JSON scanner as a state machine over bytes (encoding/json/scanner.go's behaviour)."""

    def __init__(self) -> None:
        self.state = _BEGIN_VALUE
        self.stack: list[int] = []
        self.end_top = False
        self.hex_left = 0
        self.literal = b""
        self.literal_pos = 0

    def error(self, c: int, context: str) -> str:
        return f"invalid character {quote_char(c)} {context}"

    def push(self, c: int, kind: int) -> str | None:
        self.stack.append(kind)
        return self.error(c, "exceeded max depth") if len(self.stack) > MAX_DEPTH else None

    def pop(self) -> None:
        self.stack.pop()
        if self.stack:
            self.state = _END_VALUE
        else:
            self.state, self.end_top = _END_TOP, True

    def step(self, c: int) -> str | None:
        s = self.state
        if s in (_BEGIN_VALUE, _BEGIN_VALUE_OR_EMPTY):
            if c in _SPACE:
                return None
            if s == _BEGIN_VALUE_OR_EMPTY and c == 0x5D:
                return self.end_value(c)
            return self.begin_value(c)
        if s in (_BEGIN_STRING_OR_EMPTY, _BEGIN_STRING):
            if c in _SPACE:
                return None
            if s == _BEGIN_STRING_OR_EMPTY and c == 0x7D:
                self.stack[-1] = _OBJECT_VALUE
                return self.end_value(c)
            if c == 0x22:
                self.state = _STRING
                return None
            return self.error(c, "looking for beginning of object key string")
        if s == _END_VALUE:
            return self.end_value(c)
        if s == _END_TOP:
            return None if c in _SPACE else self.error(c, "after top-level value")
        if s == _STRING:
            if c == 0x22:
                self.state = _END_VALUE
            elif c == 0x5C:
                self.state = _STRING_ESC
            elif c < 0x20:
                return self.error(c, "in string literal")
            return None
        if s == _STRING_ESC:
            if c in b'bfnrt\\/"':
                self.state = _STRING
            elif c == 0x75:
                self.state, self.hex_left = _STRING_HEX, 4
            else:
                return self.error(c, "in string escape code")
            return None
        if s == _STRING_HEX:
            if c not in _HEX:
                return self.error(c, "in \\u hexadecimal character escape")
            self.hex_left -= 1
            if self.hex_left == 0:
                self.state = _STRING
            return None
        if s == _NEG:
            if c == 0x30:
                self.state = _ZERO
            elif c in b"123456789":
                self.state = _ONE
            else:
                return self.error(c, "in numeric literal")
            return None
        if s == _ONE and c in _DIGITS:
            return None
        if s in (_ZERO, _ONE):
            if c == 0x2E:
                self.state = _DOT
                return None
            if c in b"eE":
                self.state = _E
                return None
            return self.end_value(c)
        if s == _DOT:
            if c not in _DIGITS:
                return self.error(c, "after decimal point in numeric literal")
            self.state = _DOT0
            return None
        if s == _DOT0:
            if c in _DIGITS:
                return None
            if c in b"eE":
                self.state = _E
                return None
            return self.end_value(c)
        if s == _E and c in b"+-":
            self.state = _ESIGN
            return None
        if s in (_E, _ESIGN):
            if c not in _DIGITS:
                return self.error(c, "in exponent of numeric literal")
            self.state = _E0
            return None
        if s == _E0:
            return None if c in _DIGITS else self.end_value(c)
        # _LITERAL: the rest of true, false or null
        expected = self.literal[self.literal_pos]
        if c != expected:
            name = self.literal.decode()
            return self.error(c, f"in literal {name} (expecting {quote_char(expected)})")
        self.literal_pos += 1
        if self.literal_pos == len(self.literal):
            self.state = _END_VALUE
        return None

    def begin_value(self, c: int) -> str | None:
        if c == 0x7B:
            self.state = _BEGIN_STRING_OR_EMPTY
            return self.push(c, _OBJECT_KEY)
        if c == 0x5B:
            self.state = _BEGIN_VALUE_OR_EMPTY
            return self.push(c, _ARRAY)
        if c == 0x22:
            self.state = _STRING
        elif c == 0x2D:
            self.state = _NEG
        elif c == 0x30:
            self.state = _ZERO
        elif c in b"123456789":
            self.state = _ONE
        elif c in _LITERALS:
            self.state, self.literal, self.literal_pos = _LITERAL, _LITERALS[c], 1
        else:
            return self.error(c, "looking for beginning of value")
        return None

    def end_value(self, c: int) -> str | None:
        if not self.stack:
            self.state, self.end_top = _END_TOP, True
            return self.step(c)
        if c in _SPACE:
            self.state = _END_VALUE
            return None
        top = self.stack[-1]
        if top == _OBJECT_KEY:
            if c == 0x3A:
                self.stack[-1], self.state = _OBJECT_VALUE, _BEGIN_VALUE
                return None
            return self.error(c, "after object key")
        if top == _OBJECT_VALUE:
            if c == 0x2C:
                self.stack[-1], self.state = _OBJECT_KEY, _BEGIN_STRING
                return None
            if c == 0x7D:
                self.pop()
                return None
            return self.error(c, "after object key:value pair")
        if c == 0x2C:
            self.state = _BEGIN_VALUE
            return None
        if c == 0x5D:
            self.pop()
            return None
        return self.error(c, "after array element")

    def eof(self) -> str | None:
        if self.end_top:
            return None
        error = self.step(0x20)
        if self.end_top:
            return None
        return error or UNEXPECTED_END


def syntax_error(data: bytes) -> str | None:
    """Go's checkValid: the text of the first syntax error in ``data``, or None if it is valid JSON."""
    scanner = _Scanner()
    for c in data:
        error = scanner.step(c)
        if error:
            return error
    return scanner.eof()


# -- Decoding ------------------------------------------------------------------------------------


def _parse_int(text: str) -> int | float:
    """PreserveInts: an integer literal is an int64 when it fits, else a float64."""
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else float(text)


def _parse_float(text: str) -> float | BadNumber:
    value = float(text)
    return BadNumber(text) if value in (float("inf"), float("-inf")) else value


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are not JSON; Go's scanner explains why


def _decode(data: bytes, object_hook: Any) -> Any:
    text = data.decode("utf-8", errors="surrogateescape")
    hooks = {
        "parse_int": _parse_int,
        "parse_float": _parse_float,
        "parse_constant": _reject_constant,
        "object_pairs_hook": object_hook,
    }
    try:
        try:
            value = json.loads(text, **hooks)
        except RecursionError:  # nested beyond Python's decoder, maybe not beyond Go's
            value = deep.parse(text, **hooks)
    except ValueError as e:
        message = syntax_error(data)
        if message is None:  # a stdlib quirk Go does not share
            raise GoJSONError(f"json: {e}") from None
        raise GoJSONError(message) from None
    if SURROGATES.search(text) or "\\u" in text:
        value = _scrub(value)
    return value


def _scrub(value: Any) -> Any:
    """Go decodes invalid UTF-8 and lone surrogate escapes as U+FFFD: every string, keys included,
    made so (objects and arrays in place, at any depth)."""
    if isinstance(value, str):
        return _scrub_text(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Pairs):
            node[:] = [(_scrub_text(k), _scrub_text(v)) for k, v in node]
            stack.extend(v for _, v in node)
        elif isinstance(node, dict):
            members = [(_scrub_text(k), _scrub_text(v)) for k, v in node.items()]
            node.clear()
            node.update(members)
            stack.extend(node.values())
        elif isinstance(node, list):
            node[:] = [_scrub_text(v) for v in node]
            stack.extend(node)
    return value


def _scrub_text(value: Any) -> Any:
    return SURROGATES.sub("\ufffd", value) if isinstance(value, str) else value


class _Objects:
    """An object_pairs_hook that notes whether any object repeats a key."""

    def __init__(self) -> None:
        self.duplicates = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            self.duplicates = True
        return result


def check(data: bytes) -> None:
    """Raise GoJSONError (Go's text) unless ``data`` is valid JSON. Python's decoder runs first:
    it accepts nothing Go rejects, and the byte-wise scanner only runs to word an error."""
    _decode(data, None)


def loads(data: bytes) -> tuple[Any, bool]:
    """Decode into interface{} values; also whether some object repeats a key (the last one wins)."""
    hook = _Objects()
    return _decode(data, hook), hook.duplicates


def pairs_loads(data: bytes) -> Any:
    """Decode keeping each object as ``Pairs`` in document order, duplicates included."""
    return _decode(data, Pairs)


def to_plain(value: Any) -> Any:
    """Pairs → dict (the last duplicate wins, as Go's decoder leaves it), at any depth."""
    if not isinstance(value, Pairs | list):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (value, container of its copy, key there)
    while stack:
        node, target, key = stack.pop()
        if isinstance(node, Pairs):
            copied: Any = {}
            entries: Any = node
        elif isinstance(node, list):
            copied = [None] * len(node)
            entries = enumerate(node)
        else:
            target[key] = node
            continue
        target[key] = copied
        stack.extend(reversed([(child, copied, child_key) for child_key, child in entries]))
    return root[0]


def members(value: Any) -> list[tuple[str, Any]]:
    """An object's members in document order, whether decoded as dict or as Pairs."""
    return list(value) if isinstance(value, Pairs) else list(value.items())


def kind_name(value: Any) -> str:
    """The JSON kind that Go's UnmarshalTypeError names: object, array, string, number, bool."""
    if isinstance(value, dict | Pairs):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def type_error(value: Any, go_type: str, struct_field: str = "") -> str:
    """encoding/json's UnmarshalTypeError text (Go 1.23)."""
    if struct_field:
        return f"json: cannot unmarshal {kind_name(value)} into Go struct field {struct_field} of type {go_type}"
    return f"json: cannot unmarshal {kind_name(value)} into Go value of type {go_type}"


def number_error(number: BadNumber, struct_field: str = "") -> str:
    if struct_field:
        return f"json: cannot unmarshal number {number.text} into Go struct field {struct_field} of type float64"
    return f"json: cannot unmarshal number {number.text} into Go value of type float64"


def without_bad_numbers(value: Any) -> Any:
    """Out-of-range numbers as float infinities (for values kept as raw text until a typed decoder,
    which rejects them, sees them); objects and arrays in place."""
    return deep.transform(value, lambda v: float(v.text) if isinstance(v, BadNumber) else v)


def first_bad_number(value: Any) -> BadNumber | None:
    """The first out-of-range number in document order (sigs.k8s.io/json's convertNumber error)."""
    stack = [iter([value])]
    while stack:
        for item in stack[-1]:
            if isinstance(item, BadNumber):
                return item
            if isinstance(item, dict | Pairs | list):
                stack.append(iter(item.values() if isinstance(item, dict) else _values(item)))
                break
        else:
            stack.pop()
    return None


def _values(value: Pairs | list) -> Iterator[Any]:
    return (v for _, v in value) if isinstance(value, Pairs) else iter(value)


# -- Strict decoding (sigs.k8s.io/json UnmarshalStrict) --------------------------------------------


class StrictErrors:
    """Strict decoding errors in the order found, deduplicated, at most 100 (sigs.k8s.io/json)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._seen: set[str] = set()

    def add(self, kind: str, path: str) -> None:
        text = f"{kind} {json.dumps(path, ensure_ascii=False)}"
        if len(self.items) < 100 and text not in self._seen:
            self._seen.add(text)
            self.items.append(text)


def join_path(stack: str, key: str) -> str:
    return f"{stack}.{key}" if stack else key


def duplicate_fields(value: Any, stack: str, found: StrictErrors) -> None:
    """Report every repeated key of every object inside ``value`` (decoded with ``pairs_loads``),
    in document order."""
    walks = [iter([(stack, value)])]
    while walks:
        for path, item in walks[-1]:
            if isinstance(item, Pairs):
                walks.append(_members_checked(item, path, found))
                break
            if isinstance(item, list):
                walks.append((f"{path}[{index}]", child) for index, child in enumerate(item))
                break
        else:
            walks.pop()


def _members_checked(pairs: Pairs, path: str, found: StrictErrors) -> Iterator[tuple[str, Any]]:
    """An object's members with their paths, its repeated keys reported as they are reached."""
    seen: set[str] = set()
    for key, item in pairs:
        if key in seen:
            found.add("duplicate field", join_path(path, key))
        seen.add(key)
        yield join_path(path, key), item


MAP_TYPE = "map[string]interface {}"


def decode_map(body: bytes, *, strict: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """sigs.k8s.io/json (UnmarshalStrict when ``strict``, else UnmarshalCaseSensitivePreserveInts)
    into a map[string]interface{}: the map (None for JSON null) and the strict errors (duplicate
    fields). Raises GoJSONError with Go's text."""
    value, duplicates = loads(body)
    if value is not None and not isinstance(value, dict):
        raise GoJSONError(type_error(value, MAP_TYPE))
    bad = first_bad_number(value)
    if bad is not None:
        raise GoJSONError(number_error(bad))
    found = StrictErrors()
    if strict and duplicates:
        duplicate_fields(pairs_loads(body), "", found)
    return value, found.items


# -- Encoding ------------------------------------------------------------------------------------

_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def marshal_string(s: str) -> str:
    """A string as encoding/json writes it (HTMLEscape on, \\b and \\f short, U+FFFD for bad text)."""
    return json.dumps(SURROGATES.sub("\ufffd", s), ensure_ascii=False).translate(_HTML)


def html_escape(text: str) -> str:
    """What encoding/json does to a json.RawMessage it writes (compact is the caller's)."""
    return text.translate(_HTML)


def marshal(value: Any, *, sort_keys: bool = False) -> str:
    """encoding/json's encoding of a decoded value; objects keep their order unless ``sort_keys``
    (a Go map is written sorted, a struct in field order)."""
    return deep.write_text(value, _marshal_scalar, marshal_string, sort_keys)


def _marshal_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_json_float(value)
    return marshal_string(value)
