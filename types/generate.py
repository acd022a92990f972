"""Generate protokube_types: betterproto2 dataclasses for every file of proto/ (`make types`).

protoc (grpc_tools) parses proto/ into descriptors; the betterproto2 plugin is then handed them as
protoc would hand them, over its stdin/stdout protocol, with one change: a proto2 file's optional
scalar fields are marked as having explicit presence (proto3's ``optional``). betterproto2 reads
presence only from that mark, so without it a proto2 scalar set to its zero value is not written
(a Deployment's ``replicas: 0`` would reach the server as no replicas, which it defaults to 1);
with it such a field is ``int | None`` and written whenever it is not None, as Go's pointers are.

    python types/generate.py types/protokube_types
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2
from google.protobuf.compiler import plugin_pb2

ROOT = Path(__file__).resolve().parents[1]
PROTO = ROOT / "proto"
# No gRPC clients: the dataclasses only (etcdserverpb's services would need grpclib or grpcio).
PLUGIN_OPTIONS = "client_generation=none"
OPTIONAL = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
COMPOSITE = {descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, descriptor_pb2.FieldDescriptorProto.TYPE_GROUP}


def descriptors(protos: list[str]) -> descriptor_pb2.FileDescriptorSet:
    """Every file of ``protos`` and its imports, parsed by protoc with comments (the docstrings)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.binpb"
        command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO}", "--include_imports"]
        command += ["--include_source_info", f"--descriptor_set_out={out}", *protos]
        subprocess.run(command, cwd=ROOT, check=True, timeout=120)
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def with_proto2_presence(file: descriptor_pb2.FileDescriptorProto) -> None:
    """Mark the optional scalar fields of a proto2 file as having explicit presence."""
    if file.syntax not in ("", "proto2"):
        return
    pending = list(file.message_type)
    while pending:
        message = pending.pop()
        pending.extend(message.nested_type)
        if message.options.map_entry:  # a map's key and value are not fields of their own
            continue
        for field in message.field:
            if field.label == OPTIONAL and field.type not in COMPOSITE and not field.HasField("oneof_index"):
                field.proto3_optional = True


def generate(out: Path) -> int:
    """Write the package to ``out`` (emptied first); returns how many files were written."""
    protos = sorted(str(path.relative_to(PROTO)) for path in PROTO.rglob("*.proto"))
    files = descriptors(protos).file
    for file in files:
        with_proto2_presence(file)
    request = plugin_pb2.CodeGeneratorRequest(file_to_generate=protos, parameter=PLUGIN_OPTIONS, proto_file=files)
    plugin = [sys.executable, "-m", "betterproto2_compiler.plugin"]
    # The plugin formats its output with the ruff on PATH (a dependency of it: this venv's), in a
    # folder of its own so that no project's ruff settings apply.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            plugin, input=request.SerializeToString(), capture_output=True, cwd=tmp, env=env, timeout=600
        )
    if done.returncode != 0:
        raise SystemExit(f"betterproto2_compiler failed:\n{done.stderr.decode()}")
    response = plugin_pb2.CodeGeneratorResponse.FromString(done.stdout)
    if response.error:
        raise SystemExit(f"betterproto2_compiler: {response.error}")
    shutil.rmtree(out, ignore_errors=True)
    for generated in response.file:
        path = out / generated.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated.content)
    return len(response.file)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python types/generate.py OUT_DIR")
    target = Path(sys.argv[1])
    print(f"wrote {generate(target)} files to {target}")
