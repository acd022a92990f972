"""Go's view of decoded JSON values, for exact error texts and comparisons.

Upstream's patch code works on ``interface{}`` values: ``map[string]interface{}``, ``[]interface{}``,
``string``, ``int64`` (sigs.k8s.io/json's PreserveInts), ``float64``, ``bool`` and ``nil``. Its error
messages print them with ``fmt`` verbs and ``reflect`` type names, and it compares them with Go's
``==``, which panics on maps and slices. This module reproduces those facts for the Python values
(``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``) that stand for them.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

from protokube.gateway import errors
from protokube.gateway.errors import StatusError

MAP_TYPE = "map[string]interface {}"
SLICE_TYPE = "[]interface {}"

# What kube-apiserver's panic recovery writes (k8s.io/apiserver/pkg/server/filters: WithPanicRecovery).
NIL_DEREF = "runtime error: invalid memory address or nil pointer dereference"
PANIC_BODY = "This request caused apiserver to panic. Look in the logs for details."


class ServerPanic(StatusError):
    """Upstream's code panics here (a Go runtime error); kube-apiserver then answers a plain-text 500.

    The handler should write ``PANIC_BODY`` as ``text/plain; charset=utf-8`` with status 500
    (upstream's WithPanicRecovery), not a Status object; ``reason`` holds the Go panic message.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(errors.new(500, "InternalError", PANIC_BODY).status)
        self.reason = reason


def go_type(value: Any) -> str | None:
    """reflect.TypeOf(value).String(); None for a nil interface."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return MAP_TYPE
    if isinstance(value, list):
        return SLICE_TYPE
    raise TypeError(f"not a JSON value: {value!r}")


def type_string(value: Any) -> str:
    """``%s`` of reflect.TypeOf(value): a nil reflect.Type prints as ``%!s(<nil>)``."""
    name = go_type(value)
    return name if name is not None else "%!s(<nil>)"


def go_eq(a: Any, b: Any) -> bool:
    """Go's ``==`` on two interface{} values; comparing two maps or two slices panics."""
    ta, tb = go_type(a), go_type(b)
    if ta != tb:
        return False
    if ta in (MAP_TYPE, SLICE_TYPE):
        raise ServerPanic(f"runtime error: comparing uncomparable type {ta}")
    return a == b


def go_key(value: Any) -> tuple[str | None, Any]:
    """A hashable key equal for Go-equal values (map[interface{}] keys); maps and slices panic."""
    t = go_type(value)
    if t in (MAP_TYPE, SLICE_TYPE):
        raise ServerPanic(f"runtime error: hash of unhashable type {t}")
    return (t, value)


def sprint_v(value: Any) -> str:
    """fmt's ``%v`` of an interface{} value (map keys sorted, as fmt prints maps)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_g(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint_v(value[k])}" for k in sorted(value)) + "]"
    return "[" + " ".join(sprint_v(v) for v in value) + "]"


def sprint_s(value: Any, top: bool = True) -> str:
    """fmt's ``%s`` of an interface{} value: non-strings print as ``%!s(type=value)``."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)" if top else "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{sprint_s(value[k], False)}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint_s(v, False) for v in value) + "]"
    return f"%!s({go_type(value)}={sprint_v(value)})"


def _digits(f: float) -> tuple[str, int]:
    """The shortest decimal digits that round-trip ``f`` (> 0) and the decimal point position."""
    _, digits, exponent = decimal.Decimal(repr(f)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digits) + exponent
    return text, point


def _format_e(neg: bool, digits: str, point: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = point - 1
    return ("-" if neg else "") + mantissa + "e" + ("-" if exp < 0 else "+") + f"{abs(exp):02d}"


def _format_f(neg: bool, digits: str, point: int) -> str:
    if point <= 0:
        text = "0." + "0" * -point + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    return ("-" if neg else "") + text


def format_g(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): what ``%v`` prints for a float64."""
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _digits(abs(f))
    exp = point - 1
    if exp < -4 or exp >= 6:  # shortest formatting decides with precision 6
        return _format_e(f < 0, digits, point)
    return _format_f(f < 0, digits, point)


def format_json_float(f: float) -> str:
    """How encoding/json writes a float64: 'f' format, 'e' below 1e-6 or from 1e21, e-07 as e-7."""
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _digits(abs(f))
    if abs(f) < 1e-6 or abs(f) >= 1e21:
        text = _format_e(f < 0, digits, point)
        mantissa, _, exp = text.partition("e")
        sign, number = exp[0], exp[1:]
        if sign == "-" and number.startswith("0"):
            number = number[1:]
        return f"{mantissa}e{sign}{number}"
    return _format_f(f < 0, digits, point)
