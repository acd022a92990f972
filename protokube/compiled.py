"""The modules compiled with mypyc (tools/compile.py, ``make compile``), in two groups, and the guard
that runs a group's sources instead when what was compiled of it is out of date.

A group is one shared library in its folder (``gateway/_compiled__mypyc*.so``,
``server/_compiled__mypyc*.so``) holding the code of its modules, which call each other directly: the
gateway process loads only the gateway's, the storage process only the storage's.

An extension module next to a ``.py`` is what Python imports in its place, whatever the ``.py`` says
now: after an edit without ``make compile``, the old code would run. So at the first import of one of a
group's modules, the group's sources are compared with what was compiled (its manifest); if any
differs, every module of that group is imported from its source (a group's modules cannot be mixed),
and a line on stderr says so. A process reads only the sources of the groups it imports; a checkout
without compiled modules (or an installed wheel) is not touched.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
FOLDERS = {"gateway": "gateway", "server": "server"}  # protokube.<name> lives in <folder> (setup.py)
MANIFESTS = REPO / ".cache" / "compiled"  # <group>.sha256: what each group was compiled from


@dataclass(frozen=True)
class Group:
    """Modules compiled into one shared library, ``protokube.<folder>._compiled`` in its folder: the
    folder's own, and what else they call on every request (the gateway's: the schema's codecs)."""

    folder: str  # a key of FOLDERS
    modules: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"protokube.{self.folder}._compiled"

    @property
    def manifest(self) -> Path:
        return MANIFESTS / f"{self.name}.sha256"

    def built(self) -> bool:
        """Whether this checkout holds the group's shared library."""
        return any((REPO / FOLDERS[self.folder]).glob("_compiled__mypyc*.so"))

    def fingerprint(self) -> str:
        """What the group was compiled from: the interpreter, its list, every source's bytes."""
        digest = hashlib.sha256(sys.implementation.cache_tag.encode())
        for module in self.modules:
            digest.update(module.encode() + b"\0" + source_of(module).read_bytes())
        return digest.hexdigest() + "\n"

    def manifest_matches(self) -> bool:
        try:
            return self.manifest.read_text() == self.fingerprint()
        except OSError:
            return False

    def current(self) -> bool:
        """Whether what was compiled is what the sources say now (and all of it is there)."""
        return self.built() and self.manifest_matches()


GATEWAY = Group(
    "gateway",
    (
        # What every request runs (instructions per GET ?resourceVersion=0: a third fewer in-process) ...
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
        "protokube.gateway.uuids",
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
        # ... what every write's admission runs, and the watchers and informers each write wakes ...
        "protokube.gateway.registry.admission",
        "protokube.gateway.admission.namespace",
        "protokube.gateway.admission.webhook.dispatch",
        "protokube.gateway.admission.webhook.mutating",
        "protokube.gateway.admission.webhook.validating",
        "protokube.gateway.fieldmanager.schema",
        "protokube.gateway.selectors",
        "protokube.gateway.controllers.informer",
        "protokube.gateway.controllers.gcgraph",
        "protokube.gateway.controllers.garbagecollector",
        # ... and the schema's JSON forms, Go-shape normalization, envelope and codec (every read and write).
        "protokube.schema.jsonencode",
        "protokube.schema.jsondecode",
        "protokube.schema.goshape",
        "protokube.schema.envelope",
        "protokube.schema.validtext",
        "protokube.gateway.objects.protobuf",
    ),
)
# What a durable put runs besides gRPC (the storage's CPU per put at 32 clients: see tools/compile.py). Not
# server/rpc.py: grpc.aio runs a handler on the event loop only if inspect.iscoroutinefunction says it is
# one, which a compiled function is not (it would run on grpc's thread pool); nor server/backend.py, which
# runs on the writer thread once a commit, and whose SqliteBackend the tests subclass.
SERVER = Group(
    "server",
    (
        "protokube.server.kv",
        "protokube.server.apply",
        "protokube.server.groupcommit",
        "protokube.server.mvcc",
        "protokube.server.records",
        "protokube.server.lessor",
        "protokube.server.quota",
        "protokube.server.watchhub",
        "protokube.server.watchranges",
        "protokube.server.metrics",
    ),
)
GROUPS = (GATEWAY, SERVER)
COMPILED = tuple(module for group in GROUPS for module in group.modules)


def source_of(module: str) -> Path:
    """The ``.py`` of a module of a group, in the repository."""
    parts = module.split(".")[1:]
    folder = FOLDERS.get(parts[0])
    if folder is None:
        return REPO.joinpath("protokube", *parts[:-1], parts[-1] + ".py")
    return REPO.joinpath(folder, *parts[1:-1], parts[-1] + ".py")


class SourcesFirst(importlib.abc.MetaPathFinder):
    """Imports a group's modules from their sources when the group is out of date, decided once, at the
    first import of one of them."""

    def __init__(self, groups: Sequence[Group]) -> None:
        self._group_of = {module: group for group in groups for module in group.modules}
        self._stale: dict[Group, bool] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        group = self._group_of.get(fullname)
        if group is None or not self._is_stale(group):
            return None
        return importlib.util.spec_from_file_location(fullname, source_of(fullname))

    def _is_stale(self, group: Group) -> bool:
        stale = self._stale.get(group)
        if stale is None:
            stale = self._stale[group] = not group.current()
            if stale:
                print(
                    f"protokube: the compiled modules of {group.name} are older than their sources; "
                    "running the sources (make compile)",
                    file=sys.stderr,
                )
        return stale


def guard() -> None:
    """Run a group's sources when what was compiled of it is not what they say now: watch the imports of
    the groups this checkout has compiled (or has a manifest of)."""
    compiled = [group for group in GROUPS if group.built() or group.manifest.is_file()]
    if compiled:
        sys.meta_path.insert(0, SourcesFirst(compiled))
