"""resource.Quantity parses and re-serializes in upstream's canonical form."""

from __future__ import annotations

import pytest

from protokube.schema.quantity import QuantityError, canonical

CASES = [
    ("1000m", "1"),
    ("0.5Gi", "512Mi"),
    ("1.5", "1500m"),
    ("1000", "1k"),
    ("100", "100"),
    ("1Ki", "1Ki"),
    ("1.5Ki", "1536"),
    ("0.5Ki", "512"),
    ("1024", "1024"),
    ("100m", "100m"),
    ("0.1", "100m"),
    ("250m", "250m"),
    ("2Gi", "2Gi"),
    ("1e3", "1e3"),
    ("12e-3", "12e-3"),
    ("129M", "129M"),
    ("-1.5", "-1500m"),
    ("0", "0"),
    ("0Mi", "0"),
    ("+3", "3"),
    ("0.0000000001", "1n"),  # below nano: rounded up
    ("1.0000000001", "1000000001n"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_canonical(text: str, expected: str) -> None:
    assert canonical(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "1Gb", "Mi", "1 Gi", "--1"])
def test_malformed(text: str) -> None:
    with pytest.raises(QuantityError):
        canonical(text)
