"""Compile the hot paths' modules to C extensions with mypyc: ``python -m tools.compile``.

Every request runs the same few hundred Python calls (the HTTP/1.1 server, the filters, the request
object, flow control, metrics), and every write the store, managedFields and the watch cache; compiled,
they cost less (callgrind: a third fewer instructions per in-process GET ?resourceVersion=0, a tenth
fewer per create of a gateway process). The storage's durable put runs its KV service, the group commit,
the MVCC store and the watch hub, besides gRPC.
The modules stay plain Python in the repository: mypyc reads their type hints and writes, next to each
``.py``, an extension module that Python imports in its place, and for each group of
``protokube.compiled`` one shared library that holds the code of its modules
(``gateway/_compiled__mypyc*.so``, ``server/_compiled__mypyc*.so``). ``protokube.compiled`` checks at a
group's first import that its sources are those compiled; if any changed since (an edit without ``make
compile``), every module of the group is imported from its source instead, and the process says so once.

mypyc names modules by their paths, so it compiles in a tree of symbolic links under
``.cache/compiled`` that lays the repository's folders out under their import names (setup.py's map).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from protokube.compiled import FOLDERS, GROUPS, REPO, Group, source_of

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


def _extensions_list(group: Group) -> Path:
    """The extension modules a group's last compile wrote, one path a line (some are outside its folder)."""
    return group.manifest.with_suffix(".extensions")


def remove_built(group: Group) -> None:
    """The extension modules of a group's earlier compile (their sources may have left the group)."""
    listed = _extensions_list(group)
    earlier = [Path(line) for line in listed.read_text().split()] if listed.is_file() else []
    for extension in [*(REPO / FOLDERS[group.folder]).rglob("*.cpython-*.so"), *earlier]:
        extension.unlink(missing_ok=True)
    group.manifest.unlink(missing_ok=True)


def compile_group(group: Group, config: Path) -> None:
    """Compile one group into its folder (from the staging tree, the working directory)."""
    from mypyc.build import mypycify
    from setuptools import setup

    remove_built(group)
    paths = [str(Path(*module.split("."))) + ".py" for module in group.modules]
    options = {"group_name": group.name, "target_dir": str(WORK / "build" / group.folder), "opt_level": "3"}
    extensions = mypycify([f"--config-file={config}", *paths], **options)
    setup(name="protokube-compiled", ext_modules=extensions, script_args=["build_ext", "--inplace", "-q"])
    group.manifest.parent.mkdir(parents=True, exist_ok=True)
    written = [
        path
        for module in group.modules
        for path in source_of(module).parent.glob(f"{source_of(module).stem}.cpython-*.so")
    ]
    _extensions_list(group).write_text("".join(f"{path}\n" for path in sorted(written)))
    group.manifest.write_text(group.fingerprint())
    names = ", ".join(str(source_of(m).relative_to(REPO)) for m in group.modules)
    print(f"compiled {group.name}: {len(group.modules)} modules ({names})")


def main(argv: list[str]) -> int:
    """``--if-stale``: only the groups whose compiled modules are missing or out of date."""
    groups = [group for group in GROUPS if "--if-stale" not in argv or not group.current()]
    if not groups:
        return 0
    os.chdir(staging_tree())
    config = WORK / "mypy.ini"
    config.write_text(MYPY_CONFIG)
    for group in groups:
        compile_group(group, config)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
