"""Descriptions of messages and fields: the .proto comments, which carry upstream's Go doc comments.

The compiled ``_pb2`` modules keep no comments, so ``make gen`` also writes a descriptor set with
source info (gen/protokube_descriptors.binpb). A comment becomes a description as upstream's
openapi-gen makes one from a Go comment: marker lines (``+optional``) and one-line TODOs dropped,
everything after a ``---`` line dropped, lines joined with spaces, blank lines kept as paragraph
breaks and indented lines kept on lines of their own.
"""

from __future__ import annotations

import functools

from google.protobuf import descriptor_pb2

from protokube.schema.descriptors import GEN_DIR

DESCRIPTOR_SET = GEN_DIR / "protokube_descriptors.binpb"
# Field numbers in descriptor.proto: FileDescriptorProto.message_type, DescriptorProto.nested_type
# and DescriptorProto.field (the steps of a source location's path).
_MESSAGE_TYPE, _NESTED_TYPE, _FIELD = 4, 3, 2


def go_doc_text(comment: str) -> str:
    """A description from a comment's text (one line per comment line, each without its "//")."""
    parts: list[str] = []

    def drop_last_separator() -> None:
        if parts and parts[-1] and parts[-1][-1] in " \n":
            parts[-1] = parts[-1][:-1]

    for raw in comment.splitlines():
        line = raw.removeprefix(" ").rstrip(" ")
        if line == "---":
            break
        leading = line.lstrip(" ")
        if not line:
            drop_last_separator()
            parts.append("\n\n")
        elif leading.startswith(("TODO", "+")):
            continue
        elif line[0] in " \t":
            drop_last_separator()
            parts.append("\n" + line + "\n")
        else:
            parts.append(line + " ")
    return "".join(parts).strip()


@functools.cache
def _comments() -> dict[str, str]:
    """Full name of each message ("pkg.Msg") and field ("pkg.Msg.field") → its description."""
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR_SET.read_bytes())
    result: dict[str, str] = {}
    for file in files.file:
        _file_comments(file, result)
    return result


def add_source(files: descriptor_pb2.FileDescriptorSet) -> None:
    """Also describe messages of files compiled at run time (``protokube crd-from-proto``)."""
    comments = _comments()
    for file in files.file:
        _file_comments(file, comments)


def _file_comments(file: descriptor_pb2.FileDescriptorProto, result: dict[str, str]) -> None:
    leading = {tuple(loc.path): loc.leading_comments for loc in file.source_code_info.location}
    _walk(leading, list(file.message_type), file.package, (_MESSAGE_TYPE,), result)


def _walk(
    leading: dict[tuple[int, ...], str],
    messages: list[descriptor_pb2.DescriptorProto],
    prefix: str,
    path: tuple[int, ...],
    result: dict[str, str],
) -> None:
    for i, message in enumerate(messages):
        name = f"{prefix}.{message.name}"
        where = (*path, i)
        if text := leading.get(where):
            result[name] = go_doc_text(text)
        for j, field in enumerate(message.field):
            if text := leading.get((*where, _FIELD, j)):
                result[f"{name}.{field.name}"] = go_doc_text(text)
        _walk(leading, list(message.nested_type), name, (*where, _NESTED_TYPE), result)


def of_message(full_name: str) -> str:
    return _comments().get(full_name, "")


def of_field(message_full_name: str, field_name: str) -> str:
    return _comments().get(f"{message_full_name}.{field_name}", "")
