"""The compiled hot paths (protokube/compiled.py, tools/compile.py): the suite runs on the compiled
modules of both groups (make test compiles them first); a source edited since its group's compile runs
its group as Python, never as the old compiled code; and a process loads only the shared library of the
group it imports (the storage's never loads the gateway's)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from protokube import compiled
from protokube.compiled import Group

GROUPS = [
    pytest.param(
        group, id=group.folder, marks=pytest.mark.skipif(not group.built(), reason="not compiled (make compile)")
    )
    for group in compiled.GROUPS
]

# argv: the folder of the group whose manifest says other sources, a folder to put the manifests in.
STALE = """
import pathlib, shutil, sys
import protokube.compiled as compiled
stale, manifests = sys.argv[1], pathlib.Path(sys.argv[2])
for group in compiled.GROUPS:  # the other group's manifest is the real one
    shutil.copy(group.manifest, manifests / group.manifest.name)
compiled.MANIFESTS = manifests
next(g for g in compiled.GROUPS if g.folder == stale).manifest.write_text("0" * 64 + "\\n")
compiled.guard()
import protokube.gateway.request, protokube.gateway.flowcontrol.queueset, protokube.server.groupcommit
print(protokube.gateway.request.__file__, protokube.gateway.flowcontrol.queueset.__file__)
print(protokube.server.groupcommit.__file__)
"""

LOADED = """
import sys
import {module}
print(sorted(name for name in sys.modules if name.endswith("._compiled__mypyc")))
"""


@pytest.mark.parametrize("group", GROUPS)
def test_every_module_of_the_group_runs_compiled(group: Group) -> None:
    for name in group.modules:
        module = importlib.import_module(name)
        assert module.__file__ is not None and module.__file__.endswith(".so"), (name, module.__file__)


@pytest.mark.skipif(not all(group.built() for group in compiled.GROUPS), reason="not compiled (make compile)")
@pytest.mark.parametrize("stale", [group.folder for group in compiled.GROUPS])
def test_sources_changed_since_the_compile_run_their_group_as_python(stale: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", STALE, stale, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    gateway, server = done.stdout.splitlines()
    ran = {"gateway": [Path(f).suffix for f in gateway.split()], "server": [Path(server).suffix]}
    assert ran == {folder: [".py" if folder == stale else ".so"] * len(suffixes) for folder, suffixes in ran.items()}, (
        done.stdout
    )
    assert done.stderr.count("are older than their sources") == 1, done.stderr
    assert f"protokube.{stale}._compiled" in done.stderr


@pytest.mark.skipif(not all(group.built() for group in compiled.GROUPS), reason="not compiled (make compile)")
@pytest.mark.parametrize(
    ("module", "library"),
    [
        ("protokube.server.app", "protokube.server._compiled__mypyc"),
        ("protokube.gateway.request", "protokube.gateway._compiled__mypyc"),
    ],
)
def test_a_process_loads_the_library_of_its_own_group_only(module: str, library: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(module=module)], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == [repr([library])], done.stdout


@pytest.mark.parametrize("group", GROUPS)
def test_the_manifest_is_what_the_sources_are_now(group: Group) -> None:
    assert group.manifest.read_text() == group.fingerprint()
