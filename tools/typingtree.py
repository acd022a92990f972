"""The package as it is installed, for mypy: ``.cache/typing/protokube`` with the folders setup.py maps
(gateway/ as protokube/gateway, gen/ as protokube/gen, ...) linked in under their import names.

mypy finds modules by their paths and cannot run the editable install's import hook, so from the
checkout alone it would not find ``protokube.gateway``; ``[tool.mypy] mypy_path`` names this tree.

    python -m tools.typingtree [OUT]      (default: .cache/typing)
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def folders() -> dict[str, str]:
    """setup.py's FOLDERS: import name -> folder of the repository."""
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            value: dict[str, str] = ast.literal_eval(node.value)
            return value
    raise LookupError("setup.py has no FOLDERS")


def build(out: Path) -> None:
    mapping = folders()
    shutil.rmtree(out, ignore_errors=True)
    for package, folder in sorted(mapping.items()):
        target = out.joinpath(*package.split("."))
        if any(other.startswith(package + ".") for other in mapping):  # others nest in it: link its entries
            target.mkdir(parents=True)
            for entry in (ROOT / folder).iterdir():
                if entry.name != "__pycache__" and not target.joinpath(entry.name).exists():
                    target.joinpath(entry.name).symlink_to(entry)
        else:
            target.symlink_to(ROOT / folder, target_is_directory=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache" / "typing")
