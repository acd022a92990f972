"""What `protokube serve` imports while it starts (issue 33's fast start), read from Python's own
import log (``-X importtime``, or PYTHONPROFILEIMPORTTIME for the server and its storage child)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from protokube.testing import Server

# A line of the log: self and cumulative microseconds, then the module. The self time can be
# negative: CPython 3.11 keeps the log's running sums in process-wide variables, which imports on
# another thread (serve makes its credentials on one) change meanwhile.
IMPORTED = re.compile(r"^import time:\s+-?\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)
# What reading the flags must not import: the storage child is launched once they are read, and
# the server's modules (plugins, generated code, gRPC, cryptography) are most of the start's CPU.
SERVER_MODULES = (
    "protokube.gateway.app",
    "protokube.gateway.registry.store",
    "protokube.gateway.admission.podsecurity",
    "protokube.gateway.admission.policy",
    "protokube.gen",
    "google.protobuf",
    "grpc",
    "cryptography",
)
# What serve does not use before it is ready, with its defaults: encryption at rest's providers, the
# wire explorer, JWTs (no token made or read).
UNUSED = ("nacl", "protokube.gateway.wireexplorer", "jwt")


def imported(log: str) -> set[str]:
    """Every module a ``-X importtime`` log names (those imported by an import statement: the log
    leaves out a module importlib.import_module imports, though not what that module imports)."""
    return set(IMPORTED.findall(log))


def test_reading_the_flags_imports_none_of_the_server(tmp_path: Path) -> None:
    """What `protokube serve` does before it launches its storage: read the flags, check them (the
    admission plugins' configurations among them)."""
    config = tmp_path / "admission.yaml"
    config.write_text(json.dumps({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration"}))
    flags = ["--data-dir", str(tmp_path), "--admission-control-config-file", str(config)]
    script = (
        "from protokube.gateway import cli\n"
        "from protokube.gateway.admission import options\n"
        f"options.settings(cli.parse_args({flags!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules = imported(done.stderr)
    assert "protokube.gateway.cli" in modules  # the log is read right
    assert sorted(m for m in modules if m.startswith(SERVER_MODULES)) == []


def test_serve_starts_without_what_its_defaults_do_not_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")  # the server's log gets its import log
    with Server() as api:
        modules = imported(api.log)
    assert {"protokube.gateway.app", "protokube.server.app", "grpc"} <= modules  # both processes logged
    assert sorted(m for m in modules if m.startswith(UNUSED)) == []
