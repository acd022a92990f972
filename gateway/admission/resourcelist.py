"""Quantities and resource lists as upstream's admission plugins compute with them.

``Quantity`` is Go's resource.Quantity as a value: an exact number and the suffix family it prints
in. Adding keeps the left operand's family unless that operand is zero (then it takes the right
one's), as Go's Add and Sub do, so that ``0 + 128Mi`` prints ``128Mi`` and ``1Gi + 512Mi`` prints
``1536Mi``. The list functions are k8s.io/apiserver's quota helpers (Add, Mask, LessThanOrEqual,
SubtractWithNonNegativeResult, RemoveZeros...), over plain dicts from resource name to Quantity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from protokube.schema import quantity as text

MAX_MILLI_VALUE = (2**63 - 1) // 1000  # Go's resource.MaxMilliValue


def _away_from_zero(value: Fraction) -> int:
    """The integer next to ``value`` away from zero (Go's rounding of Value and MilliValue)."""
    magnitude = -(-abs(value.numerator) // value.denominator)
    return magnitude if value >= 0 else -magnitude


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Fraction
    family: str = text.DECIMAL

    @classmethod
    def parse(cls, string: str) -> Quantity:
        """A quantity string (stored ones are valid: they were parsed when decoded)."""
        return cls(*text.parse(string))

    @classmethod
    def of(cls, number: int) -> Quantity:
        """Go's NewQuantity(number, DecimalSI)."""
        return cls(Fraction(number))

    def __str__(self) -> str:
        return text.format_quantity(self.value, self.family)

    def __add__(self, other: Quantity) -> Quantity:
        family = other.family if self.value == 0 else self.family
        return Quantity(self.value + other.value, family)

    def __sub__(self, other: Quantity) -> Quantity:
        family = other.family if self.value == 0 else self.family
        return Quantity(self.value - other.value, family)

    def integer(self) -> int:
        """Go's Value(): rounded away from zero."""
        return _away_from_zero(self.value)

    def milli(self) -> int:
        """Go's MilliValue()."""
        return _away_from_zero(self.value * 1000)

    def rounded_up(self) -> Quantity:
        """Go's RoundUp(0): whole units."""
        return self if self.value.denominator == 1 else Quantity(Fraction(_away_from_zero(self.value)), self.family)


ZERO = Quantity(Fraction(0))
ResourceList = dict[str, Quantity]


def from_message(resources: Mapping[str, object]) -> ResourceList:
    """A protobuf map<string, Quantity> as a resource list."""
    return {name: Quantity.parse(value.string) for name, value in resources.items()}  # type: ignore[attr-defined]


def add(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    result = dict(a)
    for name, value in b.items():
        result[name] = result[name] + value if name in result else value
    return result


def add_into(target: ResourceList, more: Mapping[str, Quantity]) -> None:
    """Add ``more`` to ``target`` in place (component-helpers' addResourceList)."""
    for name, value in more.items():
        target[name] = target[name] + value if name in target else value


def max_into(target: ResourceList, more: Mapping[str, Quantity]) -> None:
    """Each resource of ``more`` that is larger replaces ``target``'s (maxResourceList)."""
    for name, value in more.items():
        if name not in target or value.value > target[name].value:
            target[name] = value


def subtract_nonnegative(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> ResourceList:
    """a - b per resource, floored at zero; resources only in b are zero."""
    result: ResourceList = {}
    for name, value in a.items():
        difference = value - b[name] if name in b else value
        result[name] = difference if difference.value > 0 else ZERO
    for name in b:
        result.setdefault(name, ZERO)
    return result


def mask(resources: Mapping[str, Quantity], names: Iterable[str]) -> ResourceList:
    wanted = set(names)
    return {name: value for name, value in resources.items() if name in wanted}


def exceeded(used: Mapping[str, Quantity], hard: Mapping[str, Quantity]) -> list[str]:
    """The resources of ``hard`` that ``used`` goes beyond (LessThanOrEqual's second result)."""
    return [name for name, limit in hard.items() if name in used and used[name].value > limit.value]


def remove_zeros(resources: Mapping[str, Quantity]) -> ResourceList:
    return {name: value for name, value in resources.items() if value.value != 0}


def negative(resources: Mapping[str, Quantity]) -> list[str]:
    return [name for name, value in resources.items() if value.value < 0]


def equal(a: Mapping[str, Quantity], b: Mapping[str, Quantity]) -> bool:
    return a.keys() == b.keys() and all(a[name].value == b[name].value for name in a)


def pretty(resources: Mapping[str, Quantity]) -> str:
    """``name=quantity`` pairs in name order, comma-separated (the quota plugin's prettyPrint)."""
    return ",".join(f"{name}={resources[name]}" for name in sorted(resources))
