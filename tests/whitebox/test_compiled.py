"""The compiled request path (protokube/compiled.py, tools/compile.py): the suite runs on the compiled
modules (make test compiles them first), and a source edited since its compile runs as Python, never
as the old compiled code."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from protokube import compiled

pytestmark = pytest.mark.skipif(not compiled.built(), reason="nothing compiled here (make compile)")

STALE = """
import pathlib, sys
import protokube.compiled as compiled
compiled.MANIFEST = pathlib.Path(sys.argv[1])  # what a compile of other sources would have written
compiled.guard()
import protokube.gateway.request, protokube.gateway.flowcontrol.queueset
print(protokube.gateway.request.__file__, protokube.gateway.flowcontrol.queueset.__file__)
"""


def test_every_module_of_the_set_runs_compiled() -> None:
    for name in compiled.COMPILED:
        module = importlib.import_module(name)
        assert module.__file__ is not None and module.__file__.endswith(".so"), (name, module.__file__)


def test_sources_changed_since_the_compile_run_as_python(tmp_path: Path) -> None:
    manifest = tmp_path / "sources.sha256"
    manifest.write_text("0" * 64 + "\n")
    done = subprocess.run(
        [sys.executable, "-c", STALE, str(manifest)], capture_output=True, text=True, timeout=60, check=True
    )
    files = done.stdout.split()
    assert [Path(f).name for f in files] == ["request.py", "queueset.py"], done.stdout
    assert "the compiled modules are older than their sources" in done.stderr


def test_the_manifest_is_what_the_sources_are_now() -> None:
    assert compiled.MANIFEST.read_text() == compiled.fingerprint()
