"""The distribution stands alone (issue 33): ``python -m build`` makes an sdist and a wheel from the
checkout's files; the wheel, installed into a fresh virtual environment and run from a folder outside
the checkout (nothing of it on sys.path), is a working ``protokube``. Its only top-level import name is
``protokube``, it holds every file of the folders it maps (the generated code, the .proto sources, the
bootstrap policy, the wire explorer's page, the descriptor set), and the wheel built from the sdist
has the same files as the one built from the tree.

Slow (builds three times, installs the runtime dependencies from the pip cache or PyPI): one module
fixture, about two minutes on a loaded machine, bounded by the timeouts below."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

import protokube
from tests.gateway.helpers import free_port, kubectl_path

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow_module]  # minutes: taken first (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
# folder of the checkout -> where its files are in the wheel (setup.py's mapping)
FOLDERS = {
    "protokube": "protokube",
    "gateway": "protokube/gateway",
    "server": "protokube/server",
    "gen": "protokube/gen",
    "proto": "protokube/proto",
}
DIST_INFO = f"protokube-{protokube.__version__}.dist-info"
NEW_KIND = """syntax = "proto2";
package acme.tools.v1;
import "k8s/io/apimachinery/pkg/apis/meta/v1/types.proto";
import "protokube/options/v1/options.proto";

// Doohickey is a tool.
message Doohickey {
  option (.protokube.options.v1.kind) = {group: "tools.acme.io", version: "v1"};
  option (.protokube.options.v1.resource) = {plural: "doohickeys" scope: SCOPE_CLUSTER verbs: ["get", "list"]};
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  // How big it is.
  optional int32 size = 2;
}

message DoohickeyList {
  option (.protokube.options.v1.kind) = {group: "tools.acme.io", version: "v1"};
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta metadata = 1;
  repeated Doohickey items = 2;
}
"""


@dataclass
class Built:
    wheel: Path  # built from the sdist, as pip would from PyPI's sdist
    tree_wheel: Path  # built from the tree directly
    sdist: Path
    venv: Path  # a fresh virtual environment with the wheel installed
    outside: Path  # a working directory outside the checkout


def run(argv: list[str | Path], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """A command with an environment that points at nothing of the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv}: {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def checkout_files() -> list[str]:
    """The checkout's files as git sees them (committed or not, ignored ones left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"  # a copy: the builds write build/ and *.egg-info beside the sources
    for name in checkout_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "build", "--outdir", tmp / "dist", source], tmp, 300)  # sdist, then its wheel
    run([sys.executable, "-m", "build", "--wheel", "--outdir", tmp / "tree", source], tmp, 300)
    (sdist,) = (tmp / "dist").glob("*.tar.gz")
    (wheel,) = (tmp / "dist").glob("*.whl")
    (tree_wheel,) = (tmp / "tree").glob("*.whl")
    outside = tmp / "outside"
    outside.mkdir()
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", venv], outside, 120)
    run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheel], outside, 400)
    return Built(wheel, tree_wheel, sdist, venv, outside)


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name for name in archive.namelist() if not name.endswith("/")}


def test_the_only_top_level_name_is_protokube(built: Built) -> None:
    assert {name.split("/")[0] for name in wheel_names(built.wheel)} == {"protokube", DIST_INFO}
    with zipfile.ZipFile(built.wheel) as archive:
        entry_points = archive.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert "protokube = protokube.cli:main" in entry_points


def test_the_wheel_has_every_file_of_the_folders_it_maps(built: Built) -> None:
    """Every file of protokube/, gateway/, server/, gen/ and proto/ (sources, generated modules and
    their stubs, the descriptor set, .proto files, the bootstrap policy, the wire explorer's page)."""
    names = wheel_names(built.wheel)
    expected = set()
    for name in checkout_files():
        folder, _, rest = name.partition("/")
        if folder in FOLDERS and rest:
            expected.add(f"{FOLDERS[folder]}/{rest}")
    assert len(expected) > 400
    assert sorted(expected - names) == []
    for data in (
        "protokube/gen/protokube_descriptors.binpb",
        "protokube/gen/__init__.py",
        "protokube/gateway/auth/bootstrap/policy.yaml",
        "protokube/proto/k8s/io/api/core/v1/types.proto",
    ):
        assert data in names


def test_the_sdist_builds_the_same_wheel(built: Built) -> None:
    assert wheel_names(built.wheel) == wheel_names(built.tree_wheel)
    with tarfile.open(built.sdist) as sdist:
        top = {name.split("/")[1] for name in sdist.getnames() if "/" in name}
    assert {"gateway", "server", "gen", "proto", "protokube", "setup.py", "pyproject.toml"} <= top


def test_version_and_imports_from_the_installed_package(built: Built) -> None:
    python = built.venv / "bin" / "python"
    shown = run([built.venv / "bin" / "protokube", "--version"], built.outside, 60)
    assert shown.stdout == f"protokube {protokube.__version__}\n"
    modules = ["protokube.gateway.app", "protokube.server.app", "protokube.gen.k8s.io.api.core.v1.types_pb2"]
    code = f"import importlib; print('\\n'.join(importlib.import_module(m).__file__ for m in {modules!r}))"
    files = run([python, "-c", code], built.outside, 60).stdout.split()
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], built.outside, 60)
    assert len(files) == 3 and all(f.startswith(site.stdout.strip() + "/protokube/") for f in files), files
    for old in ("gateway", "server", "k8s", "etcdserverpb", "mvccpb", "bench"):
        missing = subprocess.run([python, "-c", f"import {old}"], cwd=built.outside, capture_output=True, timeout=60)
        assert missing.returncode == 1 and b"ModuleNotFoundError" in missing.stderr, old


def test_crd_from_proto_finds_the_shipped_proto_files(built: Built) -> None:
    (built.outside / "doohickey.proto").write_text(NEW_KIND)
    made = run(
        [built.venv / "bin" / "protokube", "crd-from-proto", "doohickey.proto", "Doohickey", "-o", "json"],
        built.outside,
        60,
    )
    assert '"name": "doohickeys.tools.acme.io"' in made.stdout
    assert '"description": "How big it is."' in made.stdout


def test_serve_reaches_readyz_and_kubectl_gets_namespaces(built: Built) -> None:
    kubectl = kubectl_path()
    assert kubectl is not None, "kubectl is needed (make debs / the machine has /usr/bin/kubectl)"
    data = built.outside / "data"
    port = free_port()
    server = subprocess.Popen(
        [built.venv / "bin" / "protokube", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data],
        cwd=built.outside,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        context = None
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.communicate()[0]
            assert time.monotonic() < deadline, "not ready within 60 s"
            if context is None and (data / "kubeconfig").exists():
                context = ssl.create_default_context(cafile=data / "pki" / "ca.crt")
                context.load_cert_chain(data / "pki" / "admin.crt", data / "pki" / "admin.key")
            if context is not None:
                try:
                    if httpx.get(f"https://127.0.0.1:{port}/readyz", verify=context, timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
            time.sleep(0.1)
        namespaces = run([kubectl, "--kubeconfig", data / "kubeconfig", "get", "ns", "-o", "name"], built.outside, 60)
        assert {"namespace/default", "namespace/kube-system"} <= set(namespaces.stdout.split())
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait(5)
