"""resource.Quantity: parsing and the canonical string form upstream serializes.

A quantity is a decimal number with an optional suffix: binary SI (``Ki`` … ``Ei``), decimal SI
(``n``, ``u``, ``m``, ``""``, ``k``, ``M`` … ``E``) or a decimal exponent (``e3``, ``E-2``). Upstream
keeps the suffix *family* of the input and re-serializes in canonical form: the largest suffix
of that family that keeps the number an integer, so ``1000m`` → ``1``, ``0.5Gi`` → ``512Mi``,
``1.5`` → ``1500m``, ``1000`` → ``1k``. Precision below 1n is rounded up (away from zero).
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

BINARY = "BinarySI"
DECIMAL = "DecimalSI"
EXPONENT = "DecimalExponent"

_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_BITS = {bits: suffix for suffix, bits in _BINARY_SUFFIXES.items()}

_NUMBER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(.*)")
_EXPONENT = re.compile(r"[eE]([+-]?\d+)")
_NANO = Fraction(1, 10**9)
_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class QuantityError(ValueError):
    """Raised for a string that is not a quantity (upstream: ErrFormatWrong)."""


def parse(text: str) -> tuple[Fraction, str]:
    """Parse a quantity string into its exact value and its suffix family."""
    match = _NUMBER.fullmatch(text)
    if not match or not (match.group(2) or match.group(3)):
        raise QuantityError(_FORMAT_WRONG)
    sign, whole, fraction, suffix = match.groups()
    digits = (whole or "") + (fraction or "")
    value = Fraction(int(digits or "0"), 10 ** len(fraction or ""))
    if sign == "-":
        value = -value
    if suffix in _BINARY_SUFFIXES:
        return value * (1 << _BINARY_SUFFIXES[suffix]), BINARY
    if suffix in _DECIMAL_SUFFIXES:
        return value * Fraction(10) ** _DECIMAL_SUFFIXES[suffix], DECIMAL
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent:
        return value * Fraction(10) ** int(exponent.group(1)), EXPONENT
    raise QuantityError("unable to parse quantity's suffix")


def _round_up_to_nano(value: Fraction) -> Fraction:
    scaled = value / _NANO
    if scaled.denominator == 1:
        return value
    magnitude = -(-abs(scaled.numerator) // scaled.denominator)  # ceil of |scaled|
    return Fraction(magnitude if value > 0 else -magnitude) * _NANO


def format_quantity(value: Fraction, family: str) -> str:
    """Serialize a value in the canonical form of its suffix family."""
    if value == 0:
        return "0"
    if family == BINARY and abs(value) >= 1024 and value.denominator == 1:
        number, bits = value.numerator, 0
        while bits < 60 and number % 1024 == 0:
            number //= 1024
            bits += 10
        return f"{number}{_BINARY_BY_BITS.get(bits, '')}"
    value = _round_up_to_nano(value)
    # Express as an integer mantissa times 10**exp with exp a multiple of 3, exp as large as possible.
    exp = -9
    mantissa = value * 10**9
    while exp < 18 and (mantissa / 1000).denominator == 1:
        mantissa /= 1000
        exp += 3
    if family == EXPONENT:
        return f"{mantissa.numerator}e{exp}" if exp else str(mantissa.numerator)
    return f"{mantissa.numerator}{_DECIMAL_BY_EXP[exp]}"


@functools.lru_cache(maxsize=4096)  # the same few quantities ("100m", "128Mi") recur in every object
def canonical(text: str) -> str:
    """The canonical string of a quantity, as upstream writes it to JSON and protobuf."""
    return format_quantity(*parse(text))


def to_float(text: str) -> float:
    """The numeric value of a quantity (for printing and comparisons)."""
    return float(parse(text)[0])
