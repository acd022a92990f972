"""Kubernetes' CEL quantity library: quantity(), isQuantity(), and a quantity's compareTo, add,
sub, isLessThan, isGreaterThan, asInteger, asApproximateFloat, sign, isInteger. A quantity is
resource.Quantity's number: exact (a fraction), with its suffix's scale."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import total_ordering
from typing import Any

from celpy import celtypes

from protokube.gateway.cel.library import fail, function, method
from protokube.gateway.cel.values import INT

_SHAPE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_NUMBER = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_INT64 = 2**63


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    value: Fraction

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)


def parse(text: str) -> Quantity | None:
    """resource.ParseQuantity's number, or None when ``text`` is not a quantity."""
    match = _NUMBER.fullmatch(text.strip()) if text == text.strip() else None
    if match is None:
        return None
    number, suffix = Fraction(match.group(1)), match.group(2)
    if suffix in _BINARY:
        return Quantity(number * _BINARY[suffix])
    if suffix in _DECIMAL:
        return Quantity(number * Fraction(10) ** _DECIMAL[suffix])
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None or abs(int(exponent.group(1))) > 1000:
        return None
    return Quantity(number * Fraction(10) ** int(exponent.group(1)))


def _operand(value: Any) -> Quantity | None:
    if isinstance(value, Quantity):
        return value
    if isinstance(value, celtypes.IntType):
        return Quantity(Fraction(int(value)))
    return None


@function("quantity", celtypes.StringType)
def quantity(text: celtypes.StringType) -> Any:
    parsed = parse(text)
    if parsed is None:
        return fail(f"quantities must match the regular expression '{_SHAPE}'")
    return parsed


@function("isQuantity", celtypes.StringType)
def is_quantity(text: celtypes.StringType) -> celtypes.BoolType:
    return celtypes.BoolType(parse(text) is not None)


@method("compareTo", Quantity)
def compare_to(value: Quantity, other: Quantity) -> Any:
    if not isinstance(other, Quantity):
        return fail("no such overload")
    return INT((value.value > other.value) - (value.value < other.value))


@method("isLessThan", Quantity)
def is_less_than(value: Quantity, other: Quantity) -> Any:
    if not isinstance(other, Quantity):
        return fail("no such overload")
    return celtypes.BoolType(value.value < other.value)


@method("isGreaterThan", Quantity)
def is_greater_than(value: Quantity, other: Quantity) -> Any:
    if not isinstance(other, Quantity):
        return fail("no such overload")
    return celtypes.BoolType(value.value > other.value)


@method("add", Quantity)
def add(value: Quantity, other: Any) -> Any:
    operand = _operand(other)
    return fail("no such overload") if operand is None else Quantity(value.value + operand.value)


@method("sub", Quantity)
def sub(value: Quantity, other: Any) -> Any:
    operand = _operand(other)
    return fail("no such overload") if operand is None else Quantity(value.value - operand.value)


def _fits(value: Fraction) -> bool:
    return value.denominator == 1 and -_INT64 <= value.numerator < _INT64


@method("isInteger", Quantity)
def is_integer(value: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(_fits(value.value))


@method("asInteger", Quantity)
def as_integer(value: Quantity) -> Any:
    if not _fits(value.value):
        return fail("cannot convert value to integer")
    return INT(value.value.numerator)


@method("asApproximateFloat", Quantity)
def as_approximate_float(value: Quantity) -> celtypes.DoubleType:
    return celtypes.DoubleType(float(value.value))


@method("sign", Quantity)
def sign(value: Quantity) -> celtypes.IntType:
    return INT((value.value > 0) - (value.value < 0))
