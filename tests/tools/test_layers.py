"""gateway/layers.py: every import between the gateway's folders points down the layer order.

Every module's imports are read with ast: module-level ones, those inside functions and those under
``if TYPE_CHECKING``. A type-only import counts: it is a dependency a reader follows and mypy
checks, upstream's import-boss knows no such exemption (Go has no type-only imports), and leaving
it out would let a cycle hide behind the guard.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from protokube.gateway.layers import LAYERS, order

GATEWAY = Path(__file__).parents[2] / "gateway"
PACKAGE = "protokube.gateway"
TABLE = "layers"


@dataclass(frozen=True)
class Arrow:
    """One import of one unit by another."""

    path: str
    line: int
    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.source} -> {self.target}"


def module_name(path: Path, root: Path) -> tuple[str, ...]:
    """The dotted parts of the package a module's relative imports start from."""
    parts = (*PACKAGE.split("."), *path.relative_to(root).with_suffix("").parts)
    return parts[:-1]


def imported(node: ast.Import | ast.ImportFrom, package: tuple[str, ...]) -> Iterator[str]:
    """The modules (or module attributes) an import statement names, absolute."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = ".".join(package[: len(package) - node.level + 1])
        module = f"{base}.{node.module}" if node.module else base
    else:
        module = node.module or ""
    if module == PACKAGE:  # from protokube.gateway import storage
        yield from (f"{module}.{alias.name}" for alias in node.names)
    else:
        yield module


def unit_of(module: str) -> str | None:
    """The gateway unit (folder or top module) of a dotted module name, None outside the gateway."""
    parts = module.split(".")
    if parts[:2] != PACKAGE.split(".") or len(parts) < 3:
        return None
    return parts[2]


def arrows(root: Path) -> Iterator[Arrow]:
    """Every import from one gateway unit into another, in the gateway tree at ``root``."""
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        source = relative.parts[0].removesuffix(".py")
        if source in ("__init__", TABLE):
            continue
        package = module_name(path, root)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for module in imported(node, package):
                target = unit_of(module)
                if target is not None and target != source:
                    yield Arrow(str(relative), node.lineno, source, target)


def units() -> set[str]:
    """The folders and top modules of gateway/ (the table itself and caches left out)."""
    found = {p.name for p in GATEWAY.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    found |= {p.stem for p in GATEWAY.glob("*.py")}
    return found - {"__init__", TABLE}


def test_every_unit_has_one_place() -> None:
    listed = order()
    assert len(listed) == len(set(listed)), [u for u in listed if listed.count(u) > 1]
    assert all(members for _, members in LAYERS)
    assert set(listed) == units(), (
        f"not in gateway/layers.py: {sorted(units() - set(listed))}; listed but absent: {sorted(set(listed) - units())}"
    )


def upward_in(root: Path) -> tuple[Arrow, ...]:
    """The imports pointing up the order in the gateway tree at ``root``."""
    position = {unit: index for index, unit in enumerate(order())}
    return tuple(a for a in arrows(root) if position[a.source] < position[a.target])


def test_imports_point_down_the_layers() -> None:
    found = [str(a) for a in upward_in(GATEWAY)]
    assert not found, "imports pointing up gateway/layers.py's order:\n" + "\n".join(found)


def test_validation_owned_above_is_registered_by_the_composition_root() -> None:
    """The kinds validated in a layer above the registry (their rules compile CEL or read APF's
    bounds) have their validators in registry/validation's table once gateway/app.py is loaded."""
    import protokube.gateway.app  # noqa: F401  (the composition root registers them)
    from protokube.gateway.registry.validation.base import VALIDATORS

    owned_above = {
        f"k8s.io.api.admissionregistration.v1.{kind}"
        for kind in (
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        )
    }
    owned_above |= {f"k8s.io.api.flowcontrol.v1.{kind}" for kind in ("FlowSchema", "PriorityLevelConfiguration")}
    owned_above.add("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
    assert sorted(k for k in owned_above if not VALIDATORS.get(k)) == []


def test_the_reader_handles_every_import_form() -> None:
    """The reader resolves absolute, relative, package-level and type-only imports to units."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "import protokube.gateway.storage.backend\n"
        "from protokube.gateway import watchcache\n"
        "from ..registry import store\n"
        "if TYPE_CHECKING:\n"
        "    from protokube.gateway.cli import main\n"
        "def f():\n"
        "    from protokube.gateway.auth.rbac import Attributes\n"
    )
    package = (*PACKAGE.split("."), "handlers")
    found = [
        unit_of(module)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for module in imported(node, package)
    ]
    assert sorted(u for u in found if u) == ["auth", "cli", "registry", "storage", "watchcache"]


def test_an_upward_import_is_reported(tmp_path: Path) -> None:
    """A module importing a layer above its own is reported with its file, line and layers; one
    importing below, or within its own folder, is not."""
    (tmp_path / "storage").mkdir()
    (tmp_path / "handlers").mkdir()
    (tmp_path / "storage" / "backend.py").write_text(
        "from protokube.gateway.storage import keys\n"
        "from protokube.gateway.errors import StatusError\n"
        "\n"
        "def late():\n"
        "    from protokube.gateway.handlers.get import get\n"
    )
    (tmp_path / "handlers" / "get.py").write_text("from ..storage.backend import late\n")
    assert [str(a) for a in upward_in(tmp_path)] == ["storage/backend.py:5: storage -> handlers"]
