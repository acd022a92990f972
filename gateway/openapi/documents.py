"""The OpenAPI documents: v3 one per group version (and per discovery path), v2 one for everything.

Operations (``operations``) and schemas (``schemas``) are written out as kube-openapi's builders
write them: parameters shared by every operation of a path move to the path, all parameters sorted
by location then name, every response also answering 401 Unauthorized, and only the definitions
the document's operations reach.
"""

from __future__ import annotations

import functools
from typing import Any

from protokube.gateway.handlers import discovery
from protokube.gateway.openapi import operations
from protokube.gateway.openapi.operations import Operation, Param, discovery_operation
from protokube.gateway.openapi.schemas import IN_EVERY_GROUP_VERSION, V2, V3, SchemaBuilder, unstructured_name
from protokube.schema.registry import GroupVersionKind, Registry
from protokube.schema.shape import META

Document = dict[str, Any]
UNAUTHORIZED = {"description": "Unauthorized"}
BEARER_TOKEN = {"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header"}


def served_gvks(registry: Registry) -> dict[str, list[GroupVersionKind]]:
    """Message → the group-version-kinds it is served as, sorted as upstream sorts them."""
    result: dict[str, set[GroupVersionKind]] = {}
    group_versions = [(g, v) for g, versions in registry.group_versions().items() for v in versions]
    for gvk, message in registry.kinds.items():
        if not message:
            continue
        kinds = result.setdefault(message, set())
        kinds.add(gvk)
        if gvk.group == IN_EVERY_GROUP_VERSION:
            kinds.update(GroupVersionKind(g, v, gvk.kind) for g, v in group_versions)
    return {m: sorted(k, key=lambda g: (g.group, g.version, g.kind)) for m, k in result.items()}


def unstructured_kinds(registry: Registry) -> dict[str, GroupVersionKind]:
    """Definition name → kind, for the kinds (and list kinds) served without a compiled message."""
    kinds = {}
    for resource in registry.resources.values():
        if not resource.message:
            for kind in (resource.kind, resource.list_kind):
                gvk = GroupVersionKind(resource.group, resource.version, kind)
                kinds[unstructured_name(gvk)] = gvk
    return kinds


def custom_schemas(registry: Registry) -> dict[str, dict[str, Any]]:
    """Definition name → schema, for the kinds whose resource carries one (a CRD version's)."""
    return {
        unstructured_name(r.gvk): r.extension.props
        for r in registry.resources.values()
        if getattr(r.extension, "props", None) is not None
    }


def _sort_params(params: list[Param]) -> list[Param]:
    return sorted(params, key=lambda p: (p.location, p.name))


def _common_params(ops: list[Operation]) -> list[Param]:
    """Parameters every operation of a path has (kube-openapi's findCommonParameters)."""
    first, *rest = ops
    return _sort_params([p for p in first.params if all(p in op.params for op in rest)])


def _group_by_path(ops: list[Operation]) -> dict[str, list[Operation]]:
    by_path: dict[str, list[Operation]] = {}
    for op in ops:
        by_path.setdefault(op.path, []).append(op)
    return by_path


def _extensions(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if op.action:
        out["x-kubernetes-action"] = op.action
    if op.gvk is not None:
        out["x-kubernetes-group-version-kind"] = {"group": op.gvk.group, "kind": op.gvk.kind, "version": op.gvk.version}
    return out


class _V3Writer:
    def __init__(self, builder: SchemaBuilder) -> None:
        self.builder = builder

    @staticmethod
    def param(p: Param) -> dict[str, Any]:
        out: dict[str, Any] = {"description": p.description, "in": p.location, "name": p.name}
        if p.location == "path":
            out["required"] = True
        out["schema"] = {"type": p.type, "uniqueItems": True}
        return out

    def operation(self, op: Operation, common: list[Param]) -> dict[str, Any]:
        out: dict[str, Any] = {"description": op.description, "operationId": op.operation_id}
        own = _sort_params([p for p in op.params if p not in common])
        if own:
            out["parameters"] = [self.param(p) for p in own]
        if op.body is not None:
            schema = self.builder.ref(op.body.message)
            out["requestBody"] = {"content": {media: {"schema": schema} for media in op.body.consumes}}
            if op.body.required:
                out["requestBody"]["required"] = True
        responses: dict[str, Any] = {}
        for code, description, message in op.responses:
            schema = self.builder.ref(message)
            responses[str(code)] = {"content": {m: {"schema": schema} for m in op.produces}, "description": description}
        responses["401"] = UNAUTHORIZED
        out["responses"] = responses
        out["tags"] = list(op.tags)
        out.update(_extensions(op))
        return out


class _V2Writer:
    def __init__(self, builder: SchemaBuilder) -> None:
        self.builder = builder

    @staticmethod
    def param(p: Param) -> dict[str, Any]:
        out: dict[str, Any] = {"description": p.description, "in": p.location, "name": p.name}
        if p.location == "path":
            out["required"] = True
        out["type"] = p.type
        out["uniqueItems"] = True
        return out

    def operation(self, op: Operation, common: list[Param]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "consumes": list(op.body.consumes) if op.body else ["*/*"],
            "description": op.description,
            "operationId": op.operation_id,
        }
        params = [self.param(p) for p in _sort_params([p for p in op.params if p not in common])]
        if op.body is not None:
            body = {"in": "body", "name": "body", "schema": self.builder.ref(op.body.message)}
            if op.body.required:
                body["required"] = True
            params.insert(0, body)
        if params:
            out["parameters"] = params
        out["produces"] = list(op.produces)
        responses: dict[str, Any] = {
            str(code): {"description": description, "schema": self.builder.ref(message)}
            for code, description, message in op.responses
        }
        responses["401"] = UNAUTHORIZED
        out["responses"] = responses
        out["schemes"] = ["https"]
        out["tags"] = list(op.tags)
        out.update(_extensions(op))
        return out


def _paths(ops: list[Operation], writer: _V3Writer | _V2Writer) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for path, path_ops in _group_by_path(ops).items():
        common = _common_params(path_ops)
        item: dict[str, Any] = {op.method: writer.operation(op, common) for op in path_ops}
        if common:
            item["parameters"] = [writer.param(p) for p in common]
        paths[path] = item
    return paths


def _info() -> dict[str, str]:
    return {"title": "Kubernetes", "version": discovery.version_info()["gitVersion"]}


def _v3(ops: list[Operation], builder: SchemaBuilder) -> Document:
    paths = _paths(ops, _V3Writer(builder))
    return {
        "openapi": "3.0.0",
        "info": _info(),
        "paths": paths,
        "components": {"schemas": builder.definitions, "securitySchemes": {"BearerToken": BEARER_TOKEN}},
    }


class DocumentSet:
    """Every OpenAPI document of one registry state (built on demand, each at most once)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.gvks = served_gvks(registry)
        self.unstructured = unstructured_kinds(registry)
        self.custom = custom_schemas(registry)

    @functools.cached_property
    def v3_paths(self) -> list[str]:
        """The v3 document names, as /openapi/v3 lists them: "api", "api/v1", "apis", "apis/apps" ..."""
        names = ["api", "apis"]
        for group, versions in self.registry.group_versions().items():
            if group:
                names.append(f"apis/{group}")
            names += [operations.group_version_path(group, v).lstrip("/") for v in versions]
        return names

    def v3(self, name: str) -> Document | None:
        """The v3 document of a name from ``v3_paths``; None for any other name."""
        if name not in self.v3_paths:
            return None
        return _v3(self._operations(name), SchemaBuilder(V3, self.gvks, self.unstructured, self.custom))

    def v2(self) -> Document:
        builder = SchemaBuilder(V2, self.gvks, self.unstructured, self.custom)
        ops = [op for name in self.v3_paths for op in self._operations(name)]
        return {
            "swagger": "2.0",
            "info": _info(),
            "paths": _paths(ops, _V2Writer(builder)),
            "definitions": builder.definitions,
            "securityDefinitions": {"BearerToken": BEARER_TOKEN},
            "security": [{"BearerToken": []}],
        }

    def _operations(self, name: str) -> list[Operation]:
        parts = name.split("/")
        if name == "api":
            return [discovery_operation("/api/", "getCoreAPIVersions", VERSIONS_DOC, "core", META + "APIVersions")]
        if name == "apis":
            return [discovery_operation("/apis/", "getAPIVersions", VERSIONS_DOC, "apis", META + "APIGroupList")]
        if len(parts) == 2 and parts[0] == "apis":
            group = parts[1]
            segment = operations.to_valid_operation_id(operations.group_segment(group), True)
            tag = operations.to_valid_operation_id(operations.group_segment(group), False)
            return [
                discovery_operation(
                    f"/apis/{group}/", f"get{segment}APIGroup", "get information of a group", tag, META + "APIGroup"
                )
            ]
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        operation_id, tags = operations.operation_id_and_tags("getAPIResources", group, version)
        ops = [
            discovery_operation(
                operations.group_version_path(group, version) + "/",
                operation_id,
                "get available resources",
                tags[0],
                META + "APIResourceList",
            )
        ]
        for resource in self.registry.resources_in(group, version):
            ops += operations.resource_operations(resource)
        return ops


VERSIONS_DOC = "get available API versions"
