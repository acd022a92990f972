"""Fixtures: a gateway with embedded storage (real processes on free loopback ports)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .helpers import GatewayProcess, Kubectl, kubectl_path


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("gateway")).start()
    yield process
    process.kill()


@pytest.fixture(scope="session")
def client(server: GatewayProcess) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


_counter = itertools.count()


@pytest.fixture
def namespace(client: httpx.Client) -> str:
    """A fresh namespace for one test."""
    name = f"t{next(_counter)}"
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


@pytest.fixture(scope="session")
def kubectl(server: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed (/usr/bin/kubectl or the pinned 1.32 build)")
    return Kubectl(server.url, Path(tmp_path_factory.mktemp("kubectl-home")))
