"""The benchmark suite keeps running: `python -m bench --quick` end to end, without any timing assertion."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import SECTIONS
from bench.charts import CHARTS

ROOT = Path(__file__).resolve().parents[2]


def numbers(value: object) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    return []


@pytest.mark.timeout(480)
def test_quick_bench_runs_every_section(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--results", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=450,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["quick"] is True
    for name in SECTIONS:
        section = document["sections"].get(name)
        assert section is not None, f"section {name} missing"
        assert "error" not in section, section.get("error")
        assert any(math.isfinite(n) for n in numbers(section)), f"section {name} has no numbers"
        assert any(row["section"] == name for row in document["rows"]), f"no rows for {name}"
    assert "goals met:" in done.stdout
    assert len(list(tmp_path.glob("*.png"))) == len([name for name in SECTIONS if name in CHARTS])
