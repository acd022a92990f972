"""`make stubs LANG=...` writes typed classes for other languages with protoc's built-in generators."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(("lang", "expected"), [("java", "Pod"), ("csharp", "class Pod"), ("cpp", "class Pod")])
def test_make_stubs(lang: str, expected: str) -> None:
    result = subprocess.run(
        ["make", "-s", "stubs", f"LANG={lang}"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    out = ROOT / "stubs" / lang
    text = "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and "core" in str(p).lower())
    assert expected in text
