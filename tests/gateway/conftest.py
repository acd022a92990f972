"""Fixtures: a gateway with embedded storage (real processes on free loopback ports).

A module that sets ``ON_ETCD_TOO = True`` runs its tests that use the shared server twice: against
the embedded storage and against Debian's etcd (started once per session). One that sets
``ON_EVERY_HTTP_SERVER = True`` runs them on each HTTP server (--http-server: native, the default,
and hypercorn).

The shared server runs without the root CA publisher (--controllers), as upstream's API tests run
kube-apiserver without kube-controller-manager: a namespace's lists hold only what its tests made
(tests/gateway/test_service_account_admission.py runs a server with it). It runs the serviceaccount
controller: pods are admitted once their namespace has its default ServiceAccount, which the
``namespace`` fixture waits for.

The shared server is shared by every module a worker runs: what a module added to the cluster's
scope is deleted when it is done, and a module that changed what cannot be put back fails at its
last test's teardown (isolation.py).
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .helpers import HTTP_SERVERS, NO_ROOT_CA_PUBLISHER, GatewayProcess, Kubectl, etcd_process, eventually, kubectl_path
from .isolation import ClusterSnapshot, leave_as_found


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if getattr(metafunc.module, "ON_ETCD_TOO", False) and "server" in metafunc.fixturenames:
        metafunc.parametrize("server", ["embedded", "etcd"], indirect=True, scope="session")
    elif getattr(metafunc.module, "ON_EVERY_HTTP_SERVER", False) and "server" in metafunc.fixturenames:
        metafunc.parametrize("server", HTTP_SERVERS, indirect=True, scope="session")


@pytest.fixture(scope="session")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if shutil.which("etcd") is None:
        pytest.skip("etcd is not installed (Debian package etcd-server)")
    with etcd_process(tmp_path_factory.mktemp("etcd")) as address:
        yield address


@pytest.fixture(scope="session")
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    variant = getattr(request, "param", "embedded")  # a storage, or an HTTP server
    args: tuple[str, ...] = (NO_ROOT_CA_PUBLISHER,)
    if variant == "etcd":
        args += ("--storage", request.getfixturevalue("etcd"))
    elif variant in HTTP_SERVERS:
        args += ("--http-server", variant)
    process = GatewayProcess(tmp_path_factory.mktemp(f"gateway-{variant}"), *args).start()
    with process.client() as admin:
        _as_found[process] = ClusterSnapshot.take(admin)
    yield process
    del _as_found[process]
    process.kill()


# The cluster-scoped objects of each shared server as it started.
_as_found: dict[GatewayProcess, ClusterSnapshot] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last test of a module on a shared server (and the module's fixtures' teardown),
    the server's cluster scope is put back as the server started."""
    yield
    process = getattr(item, "funcargs", {}).get("server")
    if process not in _as_found or (nextitem is not None and nextitem.module is item.module):
        return
    with process.client() as admin:
        differences = leave_as_found(admin, _as_found[process])
        if differences:
            _as_found[process] = ClusterSnapshot.take(admin)  # one module's change fails that module only
            pytest.fail(f"{item.module.__name__} changed the shared server's cluster scope:\n{differences}")


@pytest.fixture(scope="session")
def client(server: GatewayProcess) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


_counter = itertools.count()


@pytest.fixture
def namespace(client: httpx.Client) -> Iterator[str]:
    """A fresh namespace for one test."""
    name = f"t{next(_counter)}"
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    account = f"/api/v1/namespaces/{name}/serviceaccounts/default"
    assert eventually(lambda: client.get(account).status_code == 200), f"no default ServiceAccount in {name}"
    yield name
    client.delete(f"/api/v1/namespaces/{name}")  # the namespace controller empties it


@pytest.fixture(scope="session")
def kubectl(server: GatewayProcess, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    if kubectl_path() is None:
        pytest.skip("kubectl is not installed (/usr/bin/kubectl or the pinned 1.32 build)")
    return Kubectl(server.url, Path(tmp_path_factory.mktemp("kubectl-home")))
