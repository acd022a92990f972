"""The modules compiled with mypyc (tools/compile.py, ``make compile``), and the guard that runs their
sources instead when the compiled ones are out of date.

An extension module next to a ``.py`` is what Python imports in its place, whatever the ``.py`` says
now: after an edit without ``make compile``, the old code would run. So at start (``import protokube``)
the sources of the set are compared with what was compiled; if any differs, every module of the set is
imported from its source (one group of compiled modules calls into itself directly: they cannot be
mixed), and a line on stderr says so. A checkout without compiled modules (or an installed wheel) is
not touched.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
# What every request runs (instructions per GET ?resourceVersion=0: a third fewer in-process) ...
COMPILED = (
    "protokube.gateway.serving.http1",
    "protokube.gateway.serving.heads",
    "protokube.gateway.asgi",
    "protokube.gateway.request",
    "protokube.gateway.requestinfo",
    "protokube.gateway.responses",
    "protokube.gateway.routing",
    "protokube.gateway.deadlines",
    "protokube.gateway.metrics",
    "protokube.gateway.loophistogram",
    "protokube.gateway.params",
    "protokube.gateway.syntax",
    "protokube.gateway.negotiation.mediatypes",
    "protokube.gateway.filters.auditid",
    "protokube.gateway.filters.unreadbody",
    "protokube.gateway.filters.instrumentation",
    "protokube.gateway.filters.errorfunnel",
    "protokube.gateway.filters.requestinfo",
    "protokube.gateway.filters.timeout",
    "protokube.gateway.auth.authentication",
    "protokube.gateway.auth.impersonation",
    "protokube.gateway.auth.authorization",
    "protokube.gateway.flowcontrol.filter",
    "protokube.gateway.flowcontrol.queueset",
    "protokube.gateway.flowcontrol.controller",
    "protokube.gateway.flowcontrol.metrics",
    "protokube.gateway.flowcontrol.concurrency",
    "protokube.gateway.flowcontrol.seats",
    "protokube.gateway.handlers.get",
    # ... and what a write runs (instructions per create of a gateway: about a tenth fewer).
    "protokube.gateway.handlers.common",
    "protokube.gateway.handlers.create",
    "protokube.gateway.negotiation.bodies",
    "protokube.gateway.registry.store",
    "protokube.gateway.registry.ownership",
    "protokube.gateway.registry.validation.meta",
    "protokube.gateway.fieldmanager.fieldpath",
    "protokube.gateway.fieldmanager.typed",
    "protokube.gateway.fieldmanager.merge",
    "protokube.gateway.fieldmanager.manager",
    "protokube.gateway.fieldmanager.managedfields",
    "protokube.gateway.objects.view",
    "protokube.gateway.storage.objectstore",
    "protokube.gateway.watchcache.cache",
    "protokube.gateway.watchcache.cacher",
    "protokube.gateway.watchcache.fanout",
    # ... and the schema's JSON forms, Go-shape normalization, envelope and codec (every read and write).
    "protokube.schema.jsonencode",
    "protokube.schema.jsondecode",
    "protokube.schema.goshape",
    "protokube.schema.envelope",
    "protokube.schema.validtext",
    "protokube.gateway.objects.protobuf",
)
GROUP = "protokube.gateway._compiled"  # the shared library: gateway/_compiled__mypyc*.so
MANIFEST = REPO / ".cache" / "compiled" / "sources.sha256"
FOLDERS = {"gateway": "gateway", "server": "server"}  # protokube.<name> lives in <folder> (setup.py)


def source_of(module: str) -> Path:
    """The ``.py`` of a module of the set, in the repository."""
    parts = module.split(".")[1:]
    folder = FOLDERS.get(parts[0])
    if folder is None:
        return REPO.joinpath("protokube", *parts[:-1], parts[-1] + ".py")
    return REPO.joinpath(folder, *parts[1:-1], parts[-1] + ".py")


def fingerprint(modules: Sequence[str] = COMPILED) -> str:
    """What the compiled modules were made from: the interpreter, the list, every source's bytes."""
    digest = hashlib.sha256(sys.implementation.cache_tag.encode())
    for module in modules:
        digest.update(module.encode() + b"\0" + source_of(module).read_bytes())
    return digest.hexdigest() + "\n"


def built() -> bool:
    """Whether this checkout holds compiled modules (their shared library)."""
    return any((REPO / "gateway").glob("_compiled__mypyc*.so"))


def current() -> bool:
    """Whether what was compiled is what the sources say now (and all of it is there)."""
    return built() and _manifest_matches()


def _manifest_matches() -> bool:
    try:
        return MANIFEST.read_text() == fingerprint()
    except OSError:
        return False


class SourcesFirst(importlib.abc.MetaPathFinder):
    """Imports the modules of the set from their sources."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED:
            return None
        return importlib.util.spec_from_file_location(fullname, source_of(fullname))


def guard() -> None:
    """Run the sources of the set when what was compiled is not what they say now."""
    library = built()
    if not (library or MANIFEST.is_file()) or (library and _manifest_matches()):
        return
    print(
        "protokube: the compiled modules are older than their sources; running the sources (make compile)",
        file=sys.stderr,
    )
    sys.meta_path.insert(0, SourcesFirst())
