"""Writing one of our .proto files: upstream's messages with protokube's options."""

from __future__ import annotations

from tools.protogen.facts import FieldFacts, MessageFacts
from tools.protogen.upstream_proto import ProtoField, ProtoFile

OPTIONS_IMPORT = "protokube/options/v1/options.proto"
FIELD_OPTION = "(protokube.options.v1.field)"
# A field with one option stays on one line up to this width.
ONE_LINE_WIDTH = 110

_LIST_TYPES = {"atomic": "LIST_TYPE_ATOMIC", "set": "LIST_TYPE_SET", "map": "LIST_TYPE_MAP"}
_GRANULARITIES = {"atomic": "GRANULARITY_ATOMIC", "granular": "GRANULARITY_GRANULAR"}


def quote(text: str) -> str:
    """A protobuf text-format string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def option_entries(facts: FieldFacts) -> list[tuple[str, str]]:
    """(name, value) of each option of protokube.options.v1.Field that is set, in its field order."""
    entries: list[tuple[str, str]] = []
    if facts.nullable:
        entries.append(("nullable", "true"))
    if facts.emit_empty:
        entries.append(("emit_empty", "true"))
    if facts.patch_strategy:
        entries.append(("patch_strategy", quote(facts.patch_strategy)))
    if facts.patch_merge_key:
        entries.append(("patch_merge_key", quote(facts.patch_merge_key)))
    if facts.list_type:
        entries.append(("list_type", _LIST_TYPES[facts.list_type]))
    if facts.list_map_keys:
        entries.append(("list_map_keys", "[" + ", ".join(quote(k) for k in facts.list_map_keys) + "]"))
    if facts.granularity:
        entries.append(("granularity", _GRANULARITIES[facts.granularity]))
    if facts.inline:
        entries.append(("inline", "true"))
    if facts.required:
        entries.append(("required", "true"))
    if facts.default_json:
        entries.append(("default_json", quote(facts.default_json)))
    if facts.enum:
        entries.append(("enum", "[" + ", ".join(quote(v) for v in facts.enum) + "]"))
    return entries


def _comment(lines: list[str] | tuple[str, ...], indent: str, prefix: str = "") -> list[str]:
    """Comment lines as written: protoc's text after "//" verbatim, or (prefix " ") Go comment
    lines, which are written after "// "."""
    return [f"{indent}//{prefix + line if line else ''}" for line in lines]


def _type_name(full_name: str, package: str) -> str:
    local = full_name.removeprefix(package + ".")
    return local if "." not in local else full_name


def _field_lines(field: ProtoField, facts: FieldFacts, package: str) -> list[str]:
    lines = _comment(field.comment, "  ")
    if facts.enum_doc:
        lines += _comment(facts.enum_doc, "  ", prefix=" ")
    if field.map_key is not None:
        assert field.map_value is not None
        value = _type_name(field.map_value, package) if field.map_value_is_message else field.map_value
        decl = f"  map<{field.map_key}, {value}> {field.name} = {field.number}"
    else:
        label = "repeated" if field.repeated else "optional"
        type_name = _type_name(field.type, package) if field.is_message else field.type
        decl = f"  {label} {type_name} {field.name} = {field.number}"
    options: list[list[str]] = [[f"json_name = {quote(facts.json_name)}"]] if facts.json_name else []
    entries = option_entries(facts)
    if len(entries) == 1 and not entries[0][1].startswith("["):  # lists need the message form
        options.append([f"{FIELD_OPTION}.{entries[0][0]} = {entries[0][1]}"])
    elif entries:
        options.append([f"{FIELD_OPTION} = {{", *(f"  {name}: {value}" for name, value in entries), "}"])
    if not options:
        return [*lines, decl + ";"]
    if all(len(o) == 1 for o in options):
        one_line = f"{decl} [{', '.join(o[0] for o in options)}];"
        if len(one_line) <= ONE_LINE_WIDTH:
            return [*lines, one_line]
    if len(options) == 1 and len(options[0]) > 1:
        first, *rest, last = options[0]
        return [*lines, f"{decl} [{first}", *(f"  {r}" for r in rest), f"  {last}];"]
    wrapped = [decl + " ["]
    for i, option in enumerate(options):
        comma = "," if i < len(options) - 1 else ""
        wrapped += [f"    {line}" for line in option[:-1]] + [f"    {option[-1]}{comma}"]
    return [*lines, *wrapped, "  ];"]


def render(
    proto: ProtoFile,
    facts: dict[str, MessageFacts],
    kept: dict[str, list[str]],
    header: list[str],
    imports: list[str],
) -> str:
    """The whole file. ``imports`` are our paths of the files the messages refer to."""
    body: list[str] = []
    uses_options = False
    for message in proto.messages:
        message_facts = facts[message.name]
        body.append("")
        body += _comment(message.comment, "")
        prologue = list(kept.get(message.name, []))
        if message_facts.atomic:
            prologue.append("  option (protokube.options.v1.atomic) = true;")
        field_blocks = [
            _field_lines(f, message_facts.fields.get(f.name, FieldFacts()), proto.package) for f in message.fields
        ]
        uses_options = uses_options or bool(prologue) or any(FIELD_OPTION in "".join(b) for b in field_blocks)
        if not prologue and not field_blocks:
            body.append(f"message {message.name} {{}}")
            continue
        body.append(f"message {message.name} {{")
        body += prologue
        for i, block in enumerate(field_blocks):
            if i or prologue:
                body.append("")
            body += block
        body.append("}")
    all_imports = sorted({*imports, *([OPTIONS_IMPORT] if uses_options else [])})
    out = [*header, 'syntax = "proto2";', "", f"package {proto.package};", ""]
    if all_imports:
        out += [f'import "{path}";' for path in all_imports] + [""]
    out.append(f'option go_package = "{proto.go_package}";')
    out += body
    return "\n".join(out) + "\n"
