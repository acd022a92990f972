"""client-go as a real client: the Go program of tests/clients/go (k8s.io/client-go v0.37.2) against a
started gateway over TLS with its admin kubeconfig, each step in a fresh namespace, with the typed
clients speaking protobuf and again JSON.

The program is built once per change of its sources (.cache/clientgo/, the Go build and module caches
are Go's defaults). Go: /usr/local/go or the PATH's when it is 1.21 or newer (GOTOOLCHAIN=auto then
fetches the go.mod's toolchain from the module proxy); otherwise (Debian 12's golang-go is 1.19) the
go.mod's toolchain is fetched from the module proxy as the go command itself would
(golang.org/toolchain), into .cache/go-toolchain/. Skipped only when none of that works.

Below the program's runs, the server bugs client-go found, pinned with plain HTTP requests.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import itertools
import os
import platform
import re
import shutil
import subprocess
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import envelope

from .helpers import ROOT, GatewayProcess, eventually

pytestmark = pytest.mark.timeout(1800)  # the first build of client-go on a slow machine

PROGRAM = ROOT / "tests" / "clients" / "go"
CACHE = ROOT / ".cache"
PROXY = os.environ.get("GOPROXY_URL", "https://proxy.golang.org")
BUILD_TIMEOUT = 1500
RUN_TIMEOUT = 240


def _go_version(go: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [go, "env", "GOVERSION"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "GOTOOLCHAIN": "local"},
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"go(\d+)\.(\d+)", out.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _wanted_toolchain() -> str:
    """The go.mod's go version (go 1.26.0 → go1.26.0)."""
    match = re.search(r"^go (\S+)$", (PROGRAM / "go.mod").read_text(), re.M)
    assert match, "tests/clients/go/go.mod has no go line"
    return "go" + match.group(1)


def _fetched_toolchain() -> str | None:
    """The go.mod's toolchain from the module proxy (golang.org/toolchain, the module GOTOOLCHAIN=auto
    downloads), unpacked into .cache/go-toolchain/; None when it cannot be fetched."""
    arch = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    if arch is None or platform.system() != "Linux":
        return None
    version = f"v0.0.1-{_wanted_toolchain()}.linux-{arch}"
    home = CACHE / "go-toolchain" / version
    go = home / f"golang.org/toolchain@{version}" / "bin" / "go"
    if go.exists():
        return str(go)
    try:
        with urllib.request.urlopen(f"{PROXY}/golang.org/toolchain/@v/{version}.zip", timeout=300) as response:
            data = response.read()
    except OSError:
        return None
    partial = home.with_name(home.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    zipfile.ZipFile(io.BytesIO(data)).extractall(partial)
    root = partial / f"golang.org/toolchain@{version}"
    for sub in ("bin", "pkg/tool"):  # module zips keep no modes
        for path in (root / sub).rglob("*"):
            if path.is_file():
                path.chmod(0o755)
    partial.rename(home)
    return str(go)


def find_go() -> str | None:
    """A go command that can build the program: 1.21 or newer (it fetches the go.mod's toolchain)."""
    for candidate in (os.environ.get("GO"), "/usr/local/go/bin/go", shutil.which("go")):
        if candidate and Path(candidate).exists() and (_go_version(candidate) or (0, 0)) >= (1, 21):
            return candidate
    return _fetched_toolchain()


@pytest.fixture(scope="module")
def clientgo() -> str:
    """The program's binary, built once per content of its sources."""
    go = find_go()
    if go is None:
        pytest.skip(
            "no Go toolchain 1.21+ found, and the go.mod's toolchain could not be fetched from the module proxy"
        )
    sources = [*sorted(PROGRAM.glob("*.go")), PROGRAM / "go.mod", PROGRAM / "go.sum"]
    digest = hashlib.sha256(b"".join(path.name.encode() + path.read_bytes() for path in sources)).hexdigest()[:16]
    out = CACHE / "clientgo"
    out.mkdir(parents=True, exist_ok=True)
    binary = out / f"clientgo-{digest}"
    with open(out / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building it
        if not binary.exists():
            env = {**os.environ, "GOTOOLCHAIN": "auto", "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"}
            env["PATH"] = f"{Path(go).parent}:{env.get('PATH', '')}"
            partial = out / f"clientgo-{digest}.partial"
            build = subprocess.run(
                [go, "build", "-o", str(partial), "."],
                cwd=PROGRAM,
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
            assert build.returncode == 0, f"go build failed:\n{build.stdout}\n{build.stderr}"
            partial.rename(binary)
            for old in out.glob("clientgo-*"):  # builds of earlier sources
                if old != binary:
                    old.unlink(missing_ok=True)
    return str(binary)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("clientgo")).start()
    yield process
    process.kill()


_namespaces = itertools.count()


def run_steps(
    clientgo: str, gateway: GatewayProcess, content_type: str, *steps: str, env: dict[str, str] | None = None
) -> str:
    """Run steps of the program in a fresh namespace; its output, asserted successful."""
    namespace = f"cg-{content_type[:4]}-{next(_namespaces)}"
    args = [
        clientgo,
        "-kubeconfig",
        str(gateway.kubeconfig),
        "-namespace",
        namespace,
        "-content-type",
        content_type,
        "-steps",
        ",".join(steps),
    ]
    result = subprocess.run(
        args, capture_output=True, text=True, timeout=RUN_TIMEOUT, env={**os.environ, **(env or {})}
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"clientgo {' '.join(args[1:])} exited {result.returncode}:\n{output}"
    for step in steps:
        assert f"PASS {step}:" in result.stdout, output
    assert "FAIL" not in result.stdout, output
    return result.stdout


PROTOBUF_STEPS = [
    "typed",
    "paging",
    "informer",
    "watchlist",
    "relist",
    "apply",
    "discovery",
    "dynamic",
    "leader",
    "subresources",
    "metadata",
    "events",
    "gc",
    "scale",
]
JSON_STEPS = ["typed", "paging", "informer", "watchlist", "relist", "apply", "subresources", "events", "scale"]


@pytest.mark.parametrize("step", PROTOBUF_STEPS)
def test_protobuf(clientgo: str, gateway: GatewayProcess, step: str) -> None:
    """The typed clients send and accept application/vnd.kubernetes.protobuf."""
    out = run_steps(clientgo, gateway, "protobuf", step)
    if step == "informer":  # the informers' initial state came by WatchList, as protobuf watch frames
        assert "configmaps by WatchList [application/vnd.kubernetes.protobuf;stream=watch]" in out, out


@pytest.mark.parametrize("step", JSON_STEPS)
def test_json(clientgo: str, gateway: GatewayProcess, step: str) -> None:
    run_steps(clientgo, gateway, "json", step)


@pytest.mark.parametrize("content_type", ["protobuf", "json"])
def test_classic_list_and_watch(clientgo: str, gateway: GatewayProcess, content_type: str) -> None:
    """Informers (typed and metadata) with client-go's WatchListClient gate off: a list from
    resourceVersion 0, then a watch from its resourceVersion (and the forced 410 answered by a relist)."""
    out = run_steps(
        clientgo, gateway, content_type, "informer", "relist", "metadata", env={"KUBE_FEATURE_WatchListClient": "false"}
    )
    assert "configmaps list (200 OK)" in out and "by WatchList" not in out, out


@pytest.fixture(scope="module")
def cbor_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("clientgo-cbor"), "--feature-gates", "CBORServingAndStorage=true")
    yield process.start()
    process.kill()


def run_cbor(clientgo: str, gateway: GatewayProcess, *steps: str) -> str:
    """client-go sends and asks for CBOR only with its ClientsAllowCBOR gate on (its environment)."""
    with gateway.client() as client:  # made by JSON: client-go cannot create it in CBOR (below)
        namespace = f"cg-cbor-{next(_namespaces)}"
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    args = [clientgo, "-kubeconfig", str(gateway.kubeconfig), "-namespace", namespace, "-content-type", "cbor"]
    env = {**os.environ, "KUBE_FEATURE_ClientsAllowCBOR": "true"}
    result = subprocess.run(
        [*args, "-steps", ",".join(steps)], capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env
    )
    assert result.returncode == 0, (
        f"clientgo {' '.join(args[1:])} exited {result.returncode}:\n{result.stdout}{result.stderr}"
    )
    return result.stdout


def test_cbor_reads(clientgo: str, cbor_gateway: GatewayProcess) -> None:
    """client-go's CBOR decoder reads the server's CBOR answers and watch frames (application/cbor-seq)."""
    out = run_cbor(clientgo, cbor_gateway, "reads")
    assert "application/cbor-seq" in out, out


def test_cbor_writes(clientgo: str, cbor_gateway: GatewayProcess) -> None:
    run_cbor(clientgo, cbor_gateway, "typed", "apply")


# The server bugs client-go found, as plain requests.


def _deployment_ns(gateway: GatewayProcess, client: httpx.Client, name: str) -> str:
    namespace = f"cg-delete-{next(_namespaces)}"
    assert client.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
    labels = {"app": name}
    body = {
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }
    assert client.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=body).status_code == 201
    return namespace


def test_delete_options_of_the_resource_group_version(gateway: GatewayProcess) -> None:
    """client-go's typed clients send DeleteOptions in their own group version (apps/v1 for a
    Deployment, apiextensions.k8s.io/v1 for a CRD): upstream registers DeleteOptions unversioned and
    takes any; this server answered 400 'DeleteOptions in version "apps/v1" cannot be handled as a
    DeleteOptions' to every such delete."""
    with gateway.client() as client:
        namespace = _deployment_ns(gateway, client, "d1")
        response = client.request(
            "DELETE",
            f"/apis/apps/v1/namespaces/{namespace}/deployments/d1",
            json={"kind": "DeleteOptions", "apiVersion": "apps/v1", "propagationPolicy": "Background"},
        )
        assert response.status_code == 200, response.text
        wrong_kind = client.request(
            "DELETE", f"/apis/apps/v1/namespaces/{namespace}/deployments/d1", json={"kind": "Pod", "apiVersion": "v1"}
        )
        assert wrong_kind.status_code == 400, wrong_kind.text


def test_protobuf_delete_options(gateway: GatewayProcess) -> None:
    """client-go configured for protobuf sends its DeleteOptions body as enveloped protobuf
    (Content-Type application/vnd.kubernetes.protobuf); this server parsed every DeleteOptions body as
    JSON and answered 400 'the object provided is unrecognized (must be of type DeleteOptions): json:
    expecting value at offset 0'."""
    with gateway.client() as client:
        namespace = _deployment_ns(gateway, client, "d2")
        path = f"/apis/apps/v1/namespaces/{namespace}/deployments/d2"
        uid = client.get(path).json()["metadata"]["uid"]
        headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}

        def options(**fields: object) -> bytes:
            message = meta.DeleteOptions(**fields)
            return envelope.wrap(message.SerializeToString(), "apps/v1", "DeleteOptions")

        wrong = client.request(
            "DELETE", path, content=options(preconditions=meta.Preconditions(uid="x")), headers=headers
        )
        assert wrong.status_code == 409, wrong.text  # the body was read: its precondition applies
        garbage = client.request("DELETE", path, content=b"k8s\x00\xff\xff", headers=headers)
        assert garbage.status_code == 400, garbage.text
        done = client.request(
            "DELETE",
            path,
            content=options(preconditions=meta.Preconditions(uid=uid), propagationPolicy="Orphan"),
            headers=headers,
        )
        assert done.status_code == 200, done.text
        assert done.json()["metadata"]["finalizers"] == ["orphan"]  # the body's propagationPolicy applied
        assert eventually(lambda: client.get(path).status_code == 404)
