"""Go facts of each message and field, as protokube's options carry them.

A message is joined to the Go struct of the same name in its package (or to the struct named by
``+protobuf.as=``, as for meta/v1 Time and MicroTime, whose wire form is Timestamp's); a field is
joined to the struct field whose ``protobuf`` tag names it (``name=X``), or, where the tag has no
name, by field number. Each rule below is upstream's; the README of this package says where each
was checked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tools.protogen.goparse import GoConst, GoField, GoPackage, GoStruct
from tools.protogen.upstream_proto import ProtoField, ProtoMessage


def markers(doc: list[str]) -> dict[str, list[str]]:
    """gengo's ExtractCommentTags("+", lines): marker name -> values, in order."""
    found: dict[str, list[str]] = {}
    for line in doc:
        line = line.strip(" ")
        if not line.startswith("+"):
            continue
        key, _, value = line[1:].partition("=")
        found.setdefault(key, []).append(value)
    return found


@dataclass(slots=True)
class FieldFacts:
    nullable: bool = False
    emit_empty: bool = False
    inline: bool = False
    patch_strategy: str = ""
    patch_merge_key: str = ""
    list_type: str = ""  # "atomic", "set" or "map"
    list_map_keys: tuple[str, ...] = ()
    granularity: str = ""  # "atomic" or "granular"
    required: bool = False
    default_json: str = ""
    enum: tuple[str, ...] = ()
    # The JSON key, where Go's differs from the protobuf field name (e.g. "$ref").
    json_name: str = ""
    # Lines to append to the field's comment: kube-openapi's "Possible enum values:" block.
    enum_doc: tuple[str, ...] = ()


@dataclass(slots=True)
class MessageFacts:
    atomic: bool = False
    fields: dict[str, FieldFacts] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EnumType:
    values: tuple[str, ...]  # sorted as kube-openapi's ValueStrings sorts them
    description: tuple[str, ...]  # kube-openapi's DescriptionLines


@dataclass(slots=True)
class GoType:
    """A field's Go type expression, taken apart."""

    pointer: bool
    slice: bool
    map: bool
    base: str  # the element's type name, e.g. "metav1.Time" (for maps: the whole expression)

    @classmethod
    def parse(cls, text: str) -> GoType:
        pointer = text.startswith("*")
        text = text.removeprefix("*")
        if text.startswith("map["):
            return cls(pointer, False, True, text)
        slice_ = text.startswith("[]") and text != "[]byte"
        return cls(pointer, slice_, False, text.removeprefix("[]").removeprefix("*") if slice_ else text)


class Universe:
    """Every parsed Go package, by import path, with the enum types found across all of them
    (kube-openapi collects enum values from the constants of every package it reads)."""

    def __init__(self, packages: dict[str, GoPackage]) -> None:
        self.packages = packages
        self.enums = self._find_enums()
        self.warnings: list[str] = []

    def _find_enums(self) -> dict[tuple[str, str], EnumType]:
        candidates: dict[tuple[str, str], list[GoConst]] = {}
        for path, package in self.packages.items():
            for named in package.named.values():
                if not named.alias and named.underlying == "string" and "enum" in markers(named.doc):
                    candidates[(path, named.name)] = []
        for package in self.packages.values():
            for const in package.consts.values():
                if const.type is None or const.value is None:
                    continue
                key = package.resolve(const.type, const.name)
                if key in candidates:
                    candidates[key].append(const)
        enums = {}
        for key, consts in candidates.items():
            # addIfNotPresent: one entry per value; of constants with the same value, the one with
            # the longer comment (equal lengths: the smaller comment) wins.
            by_value: dict[str, tuple[str, str]] = {}
            for const in consts:
                assert const.value is not None
                comment = " ".join(const.doc)
                existing = by_value.get(const.value)
                if (
                    existing is None
                    or len(existing[1]) < len(comment)
                    or (len(existing[1]) == len(comment) and existing[1] > comment)
                ):
                    by_value[const.value] = (const.name, comment)
            lines = sorted(_enum_value_line(value, name, comment) for value, (name, comment) in by_value.items())
            values = tuple(v for _, v in sorted((_go_quote(v), v) for v in by_value))
            description = ("", "Possible enum values:", *lines) if lines else ()
            enums[key] = EnumType(values, description)
        return enums

    def struct_for(self, package: GoPackage, name: str) -> tuple[GoPackage, GoStruct] | None:
        """The Go struct whose fields a message's fields are: the type of the message's name, or
        the struct its ``+protobuf.as`` marker names, or, for a type defined from another struct
        type (core/v1 ``type List metav1.List``), that struct."""
        struct = package.structs.get(name)
        if struct is not None:
            target = markers(struct.doc).get("protobuf.as")
            return (package, package.structs[target[0]]) if target else (package, struct)
        named = package.named.get(name)
        if named is None or named.alias:
            return None
        resolved = self._named(package, name, named.underlying)
        if resolved is None or resolved[1] not in resolved[0].structs:
            return None
        return resolved[0], resolved[0].structs[resolved[1]]

    def message_facts(self, package: GoPackage, message: ProtoMessage) -> MessageFacts:
        facts = MessageFacts()
        found = self.struct_for(package, message.name)
        if found is None:
            self.warnings.append(f"{package.import_path}.{message.name}: no Go struct; no field options")
            return facts
        package, struct = found
        facts.atomic = markers(struct.doc).get("structType") == ["atomic"]
        by_name: dict[str, GoField] = {}
        by_number: dict[int, GoField] = {}
        for go_field in struct.fields:
            tag = go_field.tag_value("protobuf")
            if not tag or tag == "-":
                continue
            parts = tag.split(",")
            by_number[int(parts[1])] = go_field
            for part in parts[2:]:
                if part.startswith("name="):
                    by_name[part[5:]] = go_field
        custom_json = message.name in package.custom_json
        for proto_field in message.fields:
            go_field = by_name.get(proto_field.name) or by_number.get(proto_field.number)
            if go_field is None:
                self.warnings.append(f"{package.import_path}.{message.name}.{proto_field.name}: no Go field")
                facts.fields[proto_field.name] = FieldFacts()
                continue
            facts.fields[proto_field.name] = self.field_facts(package, struct, go_field, proto_field, custom_json)
        return facts

    def field_facts(
        self, package: GoPackage, struct: GoStruct, go_field: GoField, proto_field: ProtoField, custom_json: bool
    ) -> FieldFacts:
        go_type = GoType.parse(go_field.type)
        facts = FieldFacts(nullable=go_type.pointer)
        if custom_json:
            # The type writes its own JSON (a MarshalJSON method): its fields' JSON tags, if any,
            # describe nothing that reaches JSON, and it is never merged field by field.
            return facts
        where = f"{package.import_path}.{struct.name}.{go_field.name}"
        json_tag = go_field.tag_value("json")
        if json_tag is None:
            self.warnings.append(f"{where}: no json tag (Go writes the key {go_field.name!r})")
            json_tag = go_field.name
        json_name, _, json_opts = json_tag.partition(",")
        options = json_opts.split(",") if json_opts else []
        found = markers(go_field.doc)
        if json_name == "-":
            return facts
        if not json_name:
            if not go_field.embedded:
                self.warnings.append(f"{where}: json name is empty on a named field")
            facts.inline = go_field.embedded
        facts.emit_empty = not facts.inline and "omitempty" not in options
        if json_name and json_name != proto_field.name:
            facts.json_name = json_name
        facts.patch_strategy = go_field.tag_value("patchStrategy") or ""
        facts.patch_merge_key = go_field.tag_value("patchMergeKey") or ""
        facts.list_type = _single(found, "listType", where)
        facts.list_map_keys = tuple(found.get("listMapKey", ()))
        facts.granularity = _single(found, "mapType", where) or _single(found, "structType", where)
        for new_style in ("k8s:listType", "k8s:listMapKey"):
            if new_style in found and new_style.removeprefix("k8s:") not in found:
                self.warnings.append(f"{where}: +{new_style} without the classic marker kube-openapi reads")
        facts.required = not facts.inline and _required(found, json_tag) and found.get("k8s:openapi-gen") != ["false"]
        facts.default_json = self._default(package, struct.name, go_field, found, where)
        enum = self._enum(package, struct.name, go_type)
        if enum is not None:
            facts.enum = enum.values
            if not go_type.slice:
                # kube-openapi appends the block to a field of the enum type (or a pointer to it);
                # a list of enum values gets the values on its items, without the block.
                facts.enum_doc = enum.description
        return facts

    def _named(self, package: GoPackage, where: str, type_name: str) -> tuple[GoPackage, str] | None:
        path, name = package.resolve(type_name, where)
        target = self.packages.get(path)
        return (target, name) if target is not None else None

    def _enum(self, package: GoPackage, where: str, go_type: GoType) -> EnumType | None:
        if go_type.map:
            return None
        path, name = package.resolve(go_type.base, where)
        return self.enums.get((path, name))

    def _default(self, package: GoPackage, where: str, go_field: GoField, found: dict[str, list[str]], at: str) -> str:
        """+default on the field or else on its type (through pointers and named types), as
        kube-openapi's defaultFromComments looks for it; ref(Const) is the constant's value."""
        values, owner = found.get("default"), package
        type_text, scope = go_field.type, where
        while values is None:
            go_type = GoType.parse(type_text)
            if go_type.slice or go_type.map:
                return ""
            named = self._named(owner, scope, go_type.base)
            if named is None:
                return ""
            owner, name = named
            if name in owner.structs:
                values = markers(owner.structs[name].doc).get("default")
                break
            if name not in owner.named:
                return ""
            values = markers(owner.named[name].doc).get("default")
            type_text, scope = owner.named[name].underlying, name
        if not values:
            return ""
        if len(values) > 1:
            raise SystemExit(f"{at}: more than one +default")
        text = values[0]
        ref = re.fullmatch(r"ref\(([^\"]+)\)", text)
        if ref:
            const = owner.consts.get(ref.group(1))
            if const is None or const.value is None:
                raise SystemExit(f"{at}: +default={text} names no string constant of {owner.import_path}")
            return json.dumps(const.value)
        json.loads(text)  # must be JSON
        return text


def _single(found: dict[str, list[str]], key: str, where: str) -> str:
    values = found.get(key)
    if not values:
        return ""
    if len(set(values)) > 1:
        raise SystemExit(f"{where}: conflicting +{key} markers {values}")
    return values[0]


def _required(found: dict[str, list[str]], json_tag: str) -> bool:
    """kube-openapi's rule (pkg/generators/openapi.go isOptional): +required makes a field
    required, +optional optional; otherwise it is required unless its JSON tag has omitempty."""
    if "required" in found:
        return True
    if "optional" in found:
        return False
    return not (json_tag.endswith(",omitempty") or ",omitempty," in json_tag)


def _go_quote(value: str) -> str:
    """Go's %q of a plain string (enough for enum values, which are printable ASCII)."""
    return json.dumps(value, ensure_ascii=False)


_WHITESPACE = re.compile(r"\s+")


def _enum_value_line(value: str, const_name: str, comment: str) -> str:
    """kube-openapi's enumValue.Description: the comment without the constant's name, on one line.

    Written without the trailing space Go leaves after a value without comment: kube-openapi
    trims it from every description line, and a comment keeps none."""
    comment = comment.strip().removeprefix(const_name).strip()
    comment = _WHITESPACE.sub(" ", comment)
    return f" - `{_go_quote(value)}` {comment}".rstrip()
