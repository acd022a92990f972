"""Upstream's generated.proto files, compiled with protoc into descriptors with their comments.

The files are compiled, not parsed by hand: protoc resolves every type name and reports each
message's and field's leading comment exactly as written (``SourceCodeInfo``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pb2

from tools.protogen.sources import RepoSource, UpstreamPackage

F = descriptor_pb2.FieldDescriptorProto

# Protobuf scalar type names as written in a .proto file.
SCALAR_NAMES = {
    F.TYPE_DOUBLE: "double",
    F.TYPE_FLOAT: "float",
    F.TYPE_INT64: "int64",
    F.TYPE_UINT64: "uint64",
    F.TYPE_INT32: "int32",
    F.TYPE_FIXED64: "fixed64",
    F.TYPE_FIXED32: "fixed32",
    F.TYPE_BOOL: "bool",
    F.TYPE_STRING: "string",
    F.TYPE_BYTES: "bytes",
    F.TYPE_UINT32: "uint32",
    F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64",
    F.TYPE_SINT32: "sint32",
    F.TYPE_SINT64: "sint64",
}


@dataclass(frozen=True, slots=True)
class ProtoField:
    name: str
    number: int
    repeated: bool
    # The type as our .proto writes it before qualification: a scalar name, or a message's full
    # name (no leading dot); for maps, key and value.
    type: str
    is_message: bool
    map_key: str | None
    map_value: str | None
    map_value_is_message: bool
    comment: list[str]  # leading comment lines, without the "//"


@dataclass(frozen=True, slots=True)
class ProtoMessage:
    name: str
    fields: tuple[ProtoField, ...]
    comment: list[str]


@dataclass(frozen=True, slots=True)
class ProtoFile:
    package: str
    go_package: str
    messages: tuple[ProtoMessage, ...]


def compile_files(
    sources: dict[str, RepoSource], packages: tuple[UpstreamPackage, ...]
) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Compile the packages' generated.proto files; descriptors by import path."""
    with tempfile.TemporaryDirectory() as staging_dir:
        staging = Path(staging_dir)
        # Upstream imports each other as k8s.io/<repo>/<path>/generated.proto.
        (staging / "k8s.io").mkdir()
        for repo, source in sources.items():
            os.symlink(source.root.resolve(), staging / "k8s.io" / repo)
        out = staging / "set.pb"
        args = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{staging}",
            "--include_source_info",
            "--include_imports",
            f"--descriptor_set_out={out}",
            *(p.proto_import for p in packages),
        ]
        # Upstream's files import runtime/schema without using it: protoc's warnings are noise.
        result = subprocess.run(args, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"protoc failed on upstream's generated.proto files:\n{result.stderr}")
        file_set = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return {f.name: f for f in file_set.file}


def _comment_lines(text: str) -> list[str]:
    """protoc's leading comment (the text after each "//", newline-terminated) as lines."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def read_file(fd: descriptor_pb2.FileDescriptorProto) -> ProtoFile:
    comments = {tuple(loc.path): loc.leading_comments for loc in fd.source_code_info.location}
    messages = []
    for mi, msg in enumerate(fd.message_type):
        if msg.enum_type or msg.oneof_decl or msg.extension:
            raise SystemExit(f"{fd.name}: {msg.name} has enums, oneofs or extensions, which this tool does not write")
        entries = {f".{fd.package}.{msg.name}.{n.name}": n for n in msg.nested_type if n.options.map_entry}
        if len(entries) != len(msg.nested_type):
            raise SystemExit(f"{fd.name}: {msg.name} has nested messages other than map entries")
        fields = []
        for fi, f in enumerate(msg.field):
            entry = entries.get(f.type_name)
            key = value = None
            value_is_message = False
            if entry is not None:
                k, v = entry.field
                key = SCALAR_NAMES[k.type]
                value_is_message = v.type == F.TYPE_MESSAGE
                value = v.type_name.lstrip(".") if value_is_message else SCALAR_NAMES[v.type]
            is_message = f.type == F.TYPE_MESSAGE and entry is None
            fields.append(
                ProtoField(
                    name=f.name,
                    number=f.number,
                    repeated=f.label == F.LABEL_REPEATED and entry is None,
                    type=f.type_name.lstrip(".") if is_message else SCALAR_NAMES.get(f.type, ""),
                    is_message=is_message,
                    map_key=key,
                    map_value=value,
                    map_value_is_message=value_is_message,
                    comment=_comment_lines(comments.get((4, mi, 2, fi), "")),
                )
            )
        messages.append(ProtoMessage(msg.name, tuple(fields), _comment_lines(comments.get((4, mi), ""))))
    return ProtoFile(fd.package, fd.options.go_package, tuple(messages))
