"""Compile the request path's modules to C extensions with mypyc: ``python -m tools.compile``.

Every request runs the same few hundred Python calls (the HTTP/1.1 server, the filters, the request
object, flow control, metrics), and every write the store, managedFields and the watch cache; compiled,
they cost less (callgrind: a third fewer instructions per in-process GET ?resourceVersion=0, a tenth
fewer per create of a gateway process).
The modules stay plain Python in the repository: mypyc reads their type hints and writes, next to each
``.py``, an extension module that Python imports in its place, and one shared library that holds the
code of them all (``gateway/_compiled__mypyc*.so``). ``protokube.compiled`` checks at start that the
sources are those compiled; if any changed since (an edit without ``make compile``), every module of
the set is imported from its source instead, and the server says so once.

mypyc names modules by their paths, so it compiles in a tree of symbolic links under
``.cache/compiled`` that lays the repository's folders out under their import names (setup.py's map).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from protokube.compiled import COMPILED, FOLDERS, GROUP, MANIFEST, REPO, current, fingerprint, source_of

WORK = REPO / ".cache" / "compiled"
LINKED = {**FOLDERS, "gen": "gen", "proto": "proto"}  # protokube.<name>: its folder (setup.py's map)
# mypy's own settings for the compile (pyproject.toml's [tool.mypy] is make lint's, strict on the
# handlers): the types of what they import are read, only what is compiled is checked.
MYPY_CONFIG = """[mypy]
python_version = 3.11
ignore_missing_imports = True
follow_imports = silent
[mypy-protokube.gen.*]
ignore_errors = True
[mypy-protokube.schema.*]
# A generated message's fields are attributes protobuf makes at run time: no static type has them.
disable_error_code = attr-defined
"""


def staging_tree() -> Path:
    """.cache/compiled/src/protokube/...: links to the repository's folders under their import names."""
    package = WORK / "src" / "protokube"
    shutil.rmtree(package.parent, ignore_errors=True)
    package.mkdir(parents=True)
    for entry in (REPO / "protokube").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in LINKED.items():
        (package / name).symlink_to(REPO / folder)
    return package.parent


def remove_built() -> None:
    """The extension modules of an earlier compile (their sources may have left the set)."""
    for folder in (REPO / "gateway", REPO / "server", REPO / "protokube"):
        for extension in folder.rglob("*.cpython-*.so"):
            extension.unlink()
    MANIFEST.unlink(missing_ok=True)


def main(argv: list[str]) -> int:
    """``--if-stale``: only when the compiled modules are missing or out of date."""
    from mypyc.build import mypycify
    from setuptools import setup

    if "--if-stale" in argv and current():
        return 0
    remove_built()
    src = staging_tree()
    paths = [str(Path(*module.split("."))) + ".py" for module in COMPILED]
    os.chdir(src)
    config = WORK / "mypy.ini"
    config.write_text(MYPY_CONFIG)
    options = {"group_name": GROUP, "target_dir": str(WORK / "build"), "opt_level": "3"}
    extensions = mypycify([f"--config-file={config}", *paths], **options)
    setup(name="protokube-compiled", ext_modules=extensions, script_args=["build_ext", "--inplace", "-q"])
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(fingerprint())
    print(f"compiled {len(COMPILED)} modules ({', '.join(str(source_of(m).relative_to(REPO)) for m in COMPILED)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
