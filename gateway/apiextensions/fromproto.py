"""``protokube crd-from-proto FILE.proto MESSAGE``: a CustomResourceDefinition for a proto-native
kind, for clusters that cannot compile it in (a real cluster, or this server without a rebuild).

The file is compiled with protoc (include paths: this project's proto/ and the file's folder); the
kind's names, scope, subresources, printer columns and selectable fields come from its resource
option, and its structural schema from the same OpenAPI v3 schema generation the server publishes
(comments as descriptions), with references inlined and the shapes structural schemas need: the
root's metadata as a plain object, IntOrString and Quantity as x-kubernetes-int-or-string.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc_tools
import yaml
from google.protobuf import descriptor_pb2

import protokube.proto
from protokube.gateway.openapi import descriptions
from protokube.gateway.openapi.documents import served_gvks
from protokube.gateway.openapi.schemas import V3, SchemaBuilder, definition_name
from protokube.schema import descriptors
from protokube.schema.registry import Registry, Resource, build, registry

PROTO = Path(protokube.proto.__file__).resolve().parent  # the project's .proto files (the distribution has them)
# Structural forms of the special kinds (as upstream's CRDs write them).
INT_OR_STRING: dict[str, Any] = {"x-kubernetes-int-or-string": True}
QUANTITY: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
    "x-kubernetes-int-or-string": True,
}
SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
    "io.k8s.apimachinery.pkg.api.resource.Quantity": QUANTITY,
}
AGE_CELL = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


class ProtoError(Exception):
    """The file does not compile, or the message is not a served kind."""


def compile_file(path: Path) -> descriptor_pb2.FileDescriptorSet:
    include = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.binpb"
        argv = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO}", f"-I{path.parent.resolve()}"]
        argv += [f"-I{include}", "--include_imports", "--include_source_info", f"--descriptor_set_out={out}"]
        done = subprocess.run([*argv, str(path.resolve())], capture_output=True, text=True)
        if done.returncode != 0:
            raise ProtoError(done.stderr.strip() or f"protoc failed ({done.returncode})")
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def load(files: descriptor_pb2.FileDescriptorSet) -> Registry:
    """Make the files' messages known; the registry of the served kinds with them."""
    pool = descriptors.pool()
    added = []
    for file in files.file:
        try:
            pool.FindFileByName(file.name)
        except KeyError:
            pool.Add(file)
            added.append(file)
    descriptions.add_source(files)
    if not added:
        return registry()
    new = [pool.FindMessageTypeByName(f"{f.package}.{m.name}") for f in added for m in f.message_type]
    return build([*descriptors.all_messages(), *new])


def crd_for(reg: Registry, message: str) -> dict[str, Any]:
    resource = next((r for r in reg.resources.values() if r.message == message or r.kind == message), None)
    if resource is None:
        raise ProtoError(f"{message}: no message of that name (or kind) has a resource option")
    builder = SchemaBuilder(V3, served_gvks(reg))
    builder.add(resource.message)
    schema = _inline(builder.definitions, definition_name(resource.message), ())
    for key in ("x-kubernetes-group-version-kind",):
        schema.pop(key, None)
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    version: dict[str, Any] = {
        "name": resource.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    subresources = _subresources(resource)
    if subresources:
        version["subresources"] = subresources
    columns = _columns(resource)
    if columns:
        version["additionalPrinterColumns"] = columns
    if resource.selectable_fields[2:]:
        version["selectableFields"] = [{"jsonPath": "." + path} for path in resource.selectable_fields[2:]]
    names: dict[str, Any] = {"plural": resource.plural, "singular": resource.singular, "kind": resource.kind}
    names["listKind"] = resource.list_kind
    if resource.short_names:
        names["shortNames"] = list(resource.short_names)
    if resource.categories:
        names["categories"] = list(resource.categories)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{resource.plural}.{resource.group}"},
        "spec": {
            "group": resource.group,
            "names": names,
            "scope": "Namespaced" if resource.namespaced else "Cluster",
            "versions": [version],
        },
    }


def _inline(definitions: dict[str, Any], name: str, seen: tuple[str, ...]) -> dict[str, Any]:
    if name in SPECIAL:
        return copy.deepcopy(SPECIAL[name])
    if name in seen:
        raise ProtoError(f"{name} refers to itself: a structural schema cannot state a recursive type")
    return _resolve(copy.deepcopy(definitions[name]), definitions, (*seen, name))


def _resolve(schema: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(schema, list):
        return [_resolve(s, definitions, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return _inline(definitions, schema["$ref"].rsplit("/", 1)[-1], seen)
    if "allOf" in schema and len(schema["allOf"]) == 1:  # a reference with siblings (default, description)
        target = _resolve(schema.pop("allOf")[0], definitions, seen)
        return {**target, **{k: _resolve(v, definitions, seen) for k, v in schema.items() if _kept(k, v)}}
    out = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {n: _resolve(s, definitions, seen) for n, s in value.items()}
        elif _kept(key, value):
            out[key] = _resolve(value, definitions, seen)
    return out


def _kept(key: str, value: Any) -> bool:
    """What a CRD schema keeps: not the kind's group-version-kind, nor strategic merge patch's
    extensions (JSONSchemaProps has no such fields: custom resources take no strategic merge patch),
    nor an empty struct's or list's zero value as a default (a CRD would materialize it, and its
    required fields would be missing)."""
    if key == "x-kubernetes-group-version-kind" or key.startswith("x-kubernetes-patch-"):
        return False
    return not (key == "default" and value in ({}, []))


def _subresources(resource: Resource) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if "status" in resource.subresources:
        found["status"] = {}
    if "scale" in resource.subresources:
        scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
        found["scale"] = scale
    return found


def _columns(resource: Resource) -> list[dict[str, Any]]:
    columns = []
    for c in resource.printer_columns:
        if c.json_path == ".metadata.name":
            continue  # every custom resource's first column
        if c.cell == "age":
            columns.append(AGE_CELL)
            continue
        if not c.json_path:
            print(f"protokube: column {c.name!r} is computed by the server ({c.cell}): left out", file=sys.stderr)
            continue
        column: dict[str, Any] = {"name": c.name, "type": c.type, "jsonPath": c.json_path}
        if c.description:
            column["description"] = c.description
        if c.priority:
            column["priority"] = c.priority
        if c.format and c.format != "name":
            column["format"] = c.format
        columns.append(column)
    return columns


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="protokube crd-from-proto", description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="the .proto file defining the kind")
    parser.add_argument("message", help="the kind's message (full name, or the kind's name)")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="format (default: yaml)")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        parser.error(f"{args.file}: no such file")
    try:
        crd = crd_for(load(compile_file(args.file)), args.message)
    except ProtoError as err:
        print(f"protokube crd-from-proto: {err}", file=sys.stderr)
        return 1
    if args.output == "json":
        print(json.dumps(crd, indent=2))
    else:
        print(yaml.safe_dump(crd, sort_keys=False), end="")
    return 0
