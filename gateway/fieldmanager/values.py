"""JSON values as structured-merge-diff sees them: equality, ordering, and Go's ways of printing them.

Objects are plain JSON values (dict, list, str, int, float, bool, None). structured-merge-diff
compares them with its own rules (sigs.k8s.io/structured-merge-diff/v4/value: Equals, Compare):
numbers compare numerically across int and float, booleans are not numbers, and values of
different kinds order as number < string < bool < list < map < null. ``canonical`` turns a value
into a hashable tuple whose Python equality and ordering are exactly those rules, so path elements
carrying values (``v:``, ``k:``) can live in Python sets and be sorted.
"""

from __future__ import annotations

from typing import Any

from protokube.gateway.patch import gofmt
from protokube.schema import deep

JSON = Any


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # "no value here" (Go's nil Value); None is JSON null, which is a value

# The order of value kinds in upstream's value.Compare.
_NUMBER, _STRING, _BOOL, _LIST, _MAP, _NULL = range(6)

Canonical = tuple[Any, ...]


def canonical(value: JSON) -> Canonical:
    """A hashable key that compares like upstream's value.Compare (equal keys ⇔ value.Equals)."""
    if isinstance(value, str):
        return (_STRING, value)
    if isinstance(value, bool):
        return (_BOOL, value)
    if isinstance(value, int | float):
        return (_NUMBER, value)
    if value is None:
        return (_NULL,)
    if isinstance(value, list):
        return (_LIST, tuple(canonical(item) for item in value))
    if isinstance(value, dict):
        return (_MAP, tuple(sorted((k, canonical(v)) for k, v in value.items())))
    raise TypeError(f"not a JSON value: {value!r}")


def from_canonical(key: Canonical) -> JSON:
    """The JSON value of a canonical key (a float that is whole comes back as written: 3.0)."""
    kind = key[0]
    if kind == _NULL:
        return None
    if kind == _LIST:
        return [from_canonical(item) for item in key[1]]
    if kind == _MAP:
        return {k: from_canonical(v) for k, v in key[1]}
    return key[1]


def equals(lhs: JSON, rhs: JSON) -> bool:
    """upstream's value.Equals: deep equality, numbers across int/float, bool never a number."""
    stack = [(lhs, rhs)]
    while stack:
        left, right = stack.pop()
        if left is right:
            continue
        if isinstance(left, dict):
            if not isinstance(right, dict) or left.keys() != right.keys():
                return False
            stack.extend((v, right[k]) for k, v in left.items())
        elif isinstance(left, list):
            if not isinstance(right, list) or len(left) != len(right):
                return False
            stack.extend(zip(left, right, strict=True))
        elif not _scalar_equals(left, right):
            return False
    return True


def _scalar_equals(lhs: JSON, rhs: JSON) -> bool:
    if isinstance(lhs, bool) or isinstance(rhs, bool):
        return isinstance(lhs, bool) and isinstance(rhs, bool) and lhs == rhs
    if isinstance(lhs, str):
        return isinstance(rhs, str) and lhs == rhs
    if isinstance(lhs, int | float):
        return isinstance(rhs, int | float) and lhs == rhs
    return lhs is None and rhs is None


# --- Go's text forms ---------------------------------------------------------------------------

_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_JSON_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json_string(text: str, *, short_bf: bool = False) -> str:
    """A JSON string as Go writes it: HTML-safe, control characters as \\u00XX.

    json-iterator (used by structured-merge-diff) writes \\b and \\f as \\u0008/\\u000c; Go's own
    encoding/json (1.22+) writes them short (``short_bf``).
    """
    if text.isascii() and text.isprintable() and not any(c in text for c in '"\\<>&'):
        return '"' + text + '"'
    out = ['"']
    for c in text:
        if c in _JSON_SHORT:
            out.append(_JSON_SHORT[c])
        elif c in _JSON_HTML:
            out.append(_JSON_HTML[c])
        elif c < " ":
            if short_bf and c in "\b\f":
                out.append("\\b" if c == "\b" else "\\f")
            else:
                out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def go_json(value: JSON) -> str:
    """Compact JSON as json-iterator (ConfigCompatibleWithStandardLibrary) writes it: map keys sorted."""
    return deep.write_text(value, _go_json_scalar, go_json_string, sort_keys=True)


def _go_json_scalar(value: JSON) -> str:
    if isinstance(value, str):
        return go_json_string(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value, "json")
    raise TypeError(f"not a JSON value: {value!r}")


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-trip digits of |value| and the decimal exponent of its first digit."""
    text = repr(abs(value))
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0)  # position of the decimal point within whole+frac
    leading = len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    return digits, point - leading - 1


def go_float(value: float, style: str) -> str:
    """A float64 as Go prints it: ``json`` (json-iterator: %f unless <1e-6 or >=1e21) or ``v`` (fmt's %v,
    strconv's shortest %g: %e when the exponent is < -4 or >= 6)."""
    if value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    digits, exp = _shortest_digits(value)
    sign = "-" if value < 0 else ""
    use_e = (abs(value) < 1e-6 or abs(value) >= 1e21) if style == "json" else (exp < -4 or exp >= 6)
    if use_e:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if len(digits) <= exp + 1:
        return sign + digits + "0" * (exp + 1 - len(digits))
    return f"{sign}{digits[: exp + 1]}.{digits[exp + 1 :]}"


_QUOTE_SHORT = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's %q of a string (strconv.Quote)."""
    out = ['"']
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() or c == " ":
            out.append(c)
        elif c in _QUOTE_SHORT:
            out.append(_QUOTE_SHORT[c])
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)


def to_string(value: JSON) -> str:
    """upstream's value.ToString, used in path strings such as ``[name="c"]`` and ``[=x]``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value, "v")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(to_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={to_string(v)}" for k, v in value.items())
    return "{{undefined}}"


def _go_v_inner(value: JSON) -> str:
    """Go's %v of a decoded JSON value (map keys sorted, strings bare, nil as <nil>)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value, "v")
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_v_inner(v) for v in value) + "]"
    return "map[" + " ".join(f"{k}:{_go_v_inner(value[k])}" for k in sorted(value)) + "]"


def _go_sharp_v_inner(value: JSON) -> str:
    """Go's %#v of a decoded JSON value held in an interface{}."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value, "v")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp_v_inner(v) for v in value) + "}"
    items = ", ".join(f"{go_quote(k)}:{_go_sharp_v_inner(value[k])}" for k in sorted(value))
    return "map[string]interface {}{" + items + "}"


def go_sharp_v(value: JSON) -> str:
    """Go's %#v of a decoded JSON value held in an interface{} (as field errors print values)."""
    return _go_sharp_v_inner(value)


def go_v_value(value: JSON) -> str:
    """%v of structured-merge-diff's value wrapper (a *valueUnstructured): ``&{x}``."""
    return "&{" + _go_v_inner(value) + "}"


def go_sharp_v_value(value: JSON) -> str:
    """%#v of structured-merge-diff's value wrapper: ``&value.valueUnstructured{Value:1}``."""
    return "&value.valueUnstructured{Value:" + _go_sharp_v_inner(value) + "}"


def go_type(value: JSON) -> str:
    """%T of a decoded JSON value (``<nil>`` for a nil interface)."""
    return gofmt.go_type(value) or "<nil>"
