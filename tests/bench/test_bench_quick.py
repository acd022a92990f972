"""The benchmark suite keeps running: `python -m bench --quick` end to end, without any timing assertion."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
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


# Waits end on progress, not on a time tuned to one machine: each section prints when it starts and
# ends, and a run is stopped only when no section ended for STALL seconds.
STALL = 600.0


def run_until_stalled(command: list[str]) -> tuple[int, str]:
    """Run ``command``; its exit code and output. Fails naming the section that made no progress."""
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output: list[bytes] = []
    last_output = [time.monotonic()]

    def pump() -> None:
        while chunk := process.stdout.read1(4096):  # type: ignore[union-attr]
            output.append(chunk)
            last_output[0] = time.monotonic()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    while process.poll() is None:
        if time.monotonic() - last_output[0] > STALL:
            process.kill()
            process.wait()
            text = b"".join(output).decode(errors="replace")
            pytest.fail(f"no progress for {STALL:.0f} s; the bench's output ends with:\n{text[-3000:]}")
        time.sleep(1)
    reader.join(10)
    return process.returncode, b"".join(output).decode(errors="replace")


@pytest.mark.timeout(0)  # run_until_stalled bounds it
def test_quick_bench_runs_every_section(tmp_path: Path) -> None:
    code, stdout = run_until_stalled([sys.executable, "-m", "bench", "--quick", "--results", str(tmp_path)])
    failed = stdout[stdout.find("FAILED after") :] if "FAILED after" in stdout else stdout
    assert code == 0, failed[:10000]
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["quick"] is True
    for name in SECTIONS:
        section = document["sections"].get(name)
        assert section is not None, f"section {name} missing"
        assert "error" not in section, section.get("error")
        assert any(math.isfinite(n) for n in numbers(section)), f"section {name} has no numbers"
        assert any(row["section"] == name for row in document["rows"]), f"no rows for {name}"
    assert "goals met:" in stdout
    assert len(list(tmp_path.glob("*.png"))) == len([name for name in SECTIONS if name in CHARTS])
