"""The pytest plugin (the ``pytest11`` entry point ``protokube``): a Kubernetes API server as fixtures.

    def test_configmap(kube_apiserver, kube_namespace):
        config.load_kube_config(str(kube_apiserver.kubeconfig))
        ...

``kube_apiserver`` is one server for the session (one per xdist worker); a module marked
``pytestmark = pytest.mark.kube_apiserver(storage="memory", ...)`` gets a server of its own
(``kube_apiserver_module``), which ``kube_namespace`` then uses too. The marker takes ``Server``'s
keyword arguments; the command line and the ini file set the defaults of every server:

    --kube-storage / kube_storage                embedded (default), memory, or an etcd HOST:PORT
    --kube-feature-gates / kube_feature_gates    A=true,B=false
    --kube-runtime-config / kube_runtime_config  api/all=false,api/v1=true
    --kube-args / kube_args                      more `protokube serve` flags (shell words)
    --kube-insecure / kube_insecure              also serve plain HTTP (``insecure_url``)
    --kube-data-dir / kube_data_dir              keep the servers' data here for inspection
"""

from __future__ import annotations

import re
import shlex
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protokube.testing.server import Server

MARKER = "kube_apiserver"
# option name -> help; each is --kube-NAME on the command line and kube_NAME in the ini file
OPTIONS = {
    "storage": "storage of the servers: embedded (SQLite in a temporary dir), memory, or an etcd HOST:PORT",
    "feature-gates": "--feature-gates of the servers (A=true,B=false)",
    "runtime-config": "--runtime-config of the servers",
    "args": "more `protokube serve` flags for the servers (shell words)",
    "data-dir": "keep the servers' data dirs under this directory (for inspection after a failure)",
}
INSECURE_HELP = "also serve plain HTTP, where every request acts as system:masters (insecure_url)"
NAMESPACE_LENGTH = 63


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("protokube", "Kubernetes API server fixtures (protokube.testing)")
    for name, help_ in OPTIONS.items():
        dest = "kube_" + name.replace("-", "_")
        group.addoption(f"--kube-{name}", dest=dest, help=help_)
        parser.addini(dest, help_)
    group.addoption("--kube-insecure", dest="kube_insecure", action="store_true", default=None, help=INSECURE_HELP)
    parser.addini("kube_insecure", INSECURE_HELP, type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(**options): this module's own server (kube_apiserver_module) with Server's options"
    )


def _setting(config: pytest.Config, dest: str) -> Any:
    """A command-line option, else the ini file's value."""
    value = config.getoption(dest)
    return value if value is not None else config.getini(dest)


def server_options(config: pytest.Config, marker: pytest.Mark | None, name: str) -> dict[str, Any]:
    """``Server``'s arguments: the marker's over the command line's over the ini file's."""
    options: dict[str, Any] = {"insecure": bool(_setting(config, "kube_insecure"))}
    for key in ("storage", "feature_gates", "runtime_config"):
        value = _setting(config, f"kube_{key}")
        if value:
            options[key] = value
    args = _setting(config, "kube_args")
    if args:
        options["args"] = shlex.split(args)
    data_dir = _setting(config, "kube_data_dir")
    if data_dir:
        options["data_dir"] = Path(data_dir) / name
    if marker is not None:
        options.update(marker.kwargs)
    return options


def _started(options: dict[str, Any]) -> Iterator[Server]:
    with Server(**options) as server:
        yield server


@pytest.fixture(scope="session")
def kube_apiserver(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A server for the whole session (each xdist worker has its own)."""
    worker = getattr(request.config, "workerinput", {}).get("workerid", "main")
    yield from _started(server_options(request.config, None, f"session-{worker}"))


@pytest.fixture(scope="module")
def kube_apiserver_module(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A server for this module, with the options of its ``kube_apiserver`` marker."""
    marker = request.node.get_closest_marker(MARKER)
    yield from _started(server_options(request.config, marker, _safe(request.node.name)))


@pytest.fixture
def kube_namespace(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace (named after the test) on this module's server, deleted after the test."""
    marked = request.node.get_closest_marker(MARKER) is not None
    server: Server = request.getfixturevalue("kube_apiserver_module" if marked else "kube_apiserver")
    suffix = "-" + uuid.uuid4().hex[:6]
    name = _safe(request.node.name)[: NAMESPACE_LENGTH - len(suffix)].strip("-") + suffix
    with server.client() as client:
        client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).raise_for_status()
        yield name
        response = client.delete(f"/api/v1/namespaces/{name}")
        if response.status_code != 404:  # the test may have deleted it itself
            response.raise_for_status()


def _safe(text: str) -> str:
    """``text`` as a DNS label's characters: lower case, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "test"
