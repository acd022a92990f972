"""Kotlin and Java stubs compiled against Maven Central's protobuf runtime (issue 36): Maven builds
examples/clients/kotlin/pom.xml over what `make stubs` writes — the Kotlin stubs (protoc 36.2's Java
classes, then their Kotlin DSL) against protobuf-java and protobuf-kotlin 4.36.2, the Java stubs
(Debian's protoc 3.21) against protobuf-java 3.21.12 — for every file of proto/. Slow (kotlinc takes
2 minutes on 2 idle cores, 10 on busy ones, and Maven fetches the Kotlin compiler on a fresh machine):
run by `make test-clients`. Skipped with the reason where mvn or javac is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .helpers import ROOT
from .test_stub_clients import stubs

POM = ROOT / "examples" / "clients" / "kotlin" / "pom.xml"
pytestmark = pytest.mark.skipif(
    shutil.which("mvn") is None or shutil.which("javac") is None, reason="mvn and javac not installed"
)


def compile_with_maven(source: Path, build: Path, *flags: str) -> Path:
    """mvn compile of the stubs in source; the folder of the classes it wrote."""
    argv = ["mvn", "-B", "-q", "-f", str(POM), f"-Dstubs={source}", f"-Dbuild.dir={build}", *flags, "compile"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return build / "classes"


@pytest.mark.timeout(1800)
def test_kotlin_stubs_compile_against_protobuf_kotlin(tmp_path: Path) -> None:
    source = stubs("kotlin", tmp_path / "stubs", ())
    dsl = {path.relative_to(source / "kotlin").with_suffix("") for path in (source / "kotlin").rglob("*Kt.kt")}
    classes = compile_with_maven(source, tmp_path / "build")
    core = classes / "k8s" / "io" / "api" / "core" / "v1"
    assert (core / "Types$Pod.class").exists() and (core / "Types$ConfigMap.class").exists()
    # each message's Kotlin DSL (PodKt.kt) became its class (PodKt.class), which kotlinc alone writes
    missing = [str(name) for name in dsl if not (classes / f"{name}.class").exists()]
    assert len(dsl) > 100 and not missing, missing[:5]


@pytest.mark.timeout(1800)
def test_java_stubs_compile_against_protobuf_java_3_21(tmp_path: Path) -> None:
    source = stubs("java", tmp_path / "stubs", ())
    classes = compile_with_maven(source, tmp_path / "build", "-Pjava")
    core = classes / "k8s" / "io" / "api" / "core" / "v1"
    assert (core / "Types$Pod.class").exists() and (core / "Types$ConfigMap.class").exists()
    assert not list(classes.rglob("*Kt.class"))  # javac alone: the profile turns kotlinc off
