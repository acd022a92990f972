"""The operations of the API, as kube-apiserver's route installer lays them out for OpenAPI.

Each resource of the registry yields the routes upstream installs for it (pkg/endpoints/
installer.go): list, create and deletecollection on the collection, get, replace, patch and delete
on an item, the deprecated /watch/ forms, list and watch across namespaces, and its subresources.
Operations here say what each route is, in neither OpenAPI version; ``documents`` writes them out.

Names follow upstream: an operation is named verb + Namespaced + Kind + Subresource (+ suffix),
then the group and version go in after the verb (``listCoreV1NamespacedPod``,
``patchAppsV1NamespacedDeploymentScale``, ``deleteAppsV1CollectionNamespacedDeployment``); its
query parameters are the fields of the verb's options message (ListOptions, CreateOptions ...).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from protokube.gateway.negotiation.mediatypes import JSON, PROTOBUF, YAML
from protokube.gateway.openapi import descriptions
from protokube.gateway.openapi.schemas import unstructured_name
from protokube.schema.registry import GroupVersionKind, Resource
from protokube.schema.shape import BOOL, INT, MESSAGE, META, shape

PRETTY_DOC = (
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a "
    "browser or command-line HTTP tool (curl and wget)."
)
NAMESPACE_DOC = "object name and auth scope, such as for teams and projects"
STATUS = META + "Status"
WATCH_EVENT = META + "WatchEvent"
PATCH = META + "Patch"
DELETE_OPTIONS = META + "DeleteOptions"
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
# Option fields not in kube-apiserver 1.32 (alpha, behind a feature gate, not served here).
UNSERVED_OPTIONS = frozenset({"shardSelector"})
# Upstream's route verbs whose first letters name the operation (the rest is kind and suffix).
_OPERATION_VERBS = ("get", "log", "read", "replace", "patch", "delete", "watch", "connect", "proxy", "list", "create")


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    location: str  # "path" or "query"
    description: str
    type: str  # "string", "boolean" or "integer"


@dataclass(frozen=True, slots=True)
class Body:
    message: str
    required: bool
    consumes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Operation:
    method: str  # lower-case HTTP method
    path: str
    operation_id: str
    description: str
    tags: tuple[str, ...]
    action: str  # x-kubernetes-action
    gvk: GroupVersionKind | None
    params: tuple[Param, ...]
    body: Body | None
    # (status code, description, message of the response body)
    responses: tuple[tuple[int, str, str], ...]
    produces: tuple[str, ...]


def to_valid_operation_id(text: str, capitalize_first: bool) -> str:
    """upstream's ToValidOperationID: letters, digits (not first) and "_" kept, camel-cased at the rest."""
    out, capitalize = [], capitalize_first
    for i, char in enumerate(text):
        if char.isalpha() or char == "_" or (i != 0 and char.isdigit()):
            out.append(char.upper() if capitalize else char)
            capitalize = False
        else:
            capitalize = True
    return "".join(out)


def group_segment(group: str) -> str:
    """The group as operation ids and tags name it: "core" for the legacy group, no ".k8s.io"."""
    return group.removesuffix(".k8s.io") if group else "core"


def operation_id_and_tags(route_operation: str, group: str, version: str) -> tuple[str, tuple[str, ...]]:
    """upstream's GetOperationIDAndTags for a route under /api/v1 or /apis/GROUP/VERSION."""
    verb = next(v for v in sorted(_OPERATION_VERBS, key=len) if route_operation.startswith(v))
    rest = route_operation[len(verb) :]
    segment = group_segment(group)
    prefix = verb + to_valid_operation_id(segment, True) + to_valid_operation_id(version, True)
    tag = to_valid_operation_id(segment, False) + "_" + to_valid_operation_id(version, False)
    return prefix + to_valid_operation_id(rest, True), (tag,)


def group_version_path(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


@functools.cache
def option_params(options_message: str, *excluded: str) -> tuple[Param, ...]:
    """Query parameters from an options message's top-level scalar fields (upstream's AddObjectParams)."""
    full_name = META + options_message
    params = []
    for field in shape(full_name).fields:
        name = field.json_name
        if field.kind == MESSAGE or name in excluded or name in UNSERVED_OPTIONS:
            continue
        kind = "boolean" if field.kind == BOOL else "integer" if field.kind == INT else "string"
        params.append(Param(name, "query", descriptions.of_field(full_name, field.name), kind))
    return tuple(params)


def _article(kind: str) -> str:
    """upstream's GetArticleForNoun with " " padding: none for plurals, "a" or "an" otherwise."""
    if kind.endswith("s") and not kind.endswith("ss"):
        return " "
    return " an " if kind[0] in "aeiouAEIOU" else " a "


class _Routes:
    """The routes of one resource or subresource, as upstream's registerResourceHandlers makes them."""

    def __init__(self, resource: Resource, subresource: str) -> None:
        self.resource = resource
        self.subresource = subresource
        sub = resource.subresources.get(subresource)
        self.gvk = sub.gvk if sub else resource.gvk
        message = sub.message if sub else resource.message
        # What the operations read and write: a message, or the definition of a kind without one.
        self.message = message or unstructured_name(self.gvk)
        list_gvk = GroupVersionKind(resource.group, resource.version, resource.list_kind)
        self.list_message = resource.list_message or unstructured_name(list_gvk)
        self.verbs = sub.verbs if sub else resource.verbs
        self.base = group_version_path(resource.group, resource.version)
        self.ops: list[Operation] = []
        protobuf = bool(message)
        self.media = (JSON, YAML, PROTOBUF) if protobuf else (JSON, YAML)
        streams = (f"{JSON};stream=watch", f"{PROTOBUF};stream=watch") if protobuf else (f"{JSON};stream=watch",)
        self.all_media = self.media + streams

    def add(
        self,
        method: str,
        action: str,
        route_operation: str,
        path: str,
        description: str,
        params: tuple[Param, ...],
        responses: tuple[tuple[int, str, str], ...],
        body: Body | None = None,
        produces: tuple[str, ...] | None = None,
    ) -> None:
        operation_id, tags = operation_id_and_tags(route_operation, self.resource.group, self.resource.version)
        pretty = Param("pretty", "query", PRETTY_DOC, "string")
        self.ops.append(
            Operation(
                method=method,
                path=self.base + "/" + path,
                operation_id=operation_id,
                description=description,
                tags=tags,
                action=action,
                gvk=self.gvk,
                params=(pretty, *params),
                body=body,
                responses=responses,
                produces=produces or self.media,
            )
        )

    def build(self) -> list[Operation]:
        r, sub = self.resource, self.subresource
        kind = r.kind
        namespaced = "Namespaced" if r.namespaced else ""
        title = sub[:1].upper() + sub[1:]
        name = Param("name", "path", f"name of the {kind}", "string")
        namespace = Param("namespace", "path", NAMESPACE_DOC, "string")
        scope_params = (namespace,) if r.namespaced else ()
        collection = ("namespaces/{namespace}/" if r.namespaced else "") + r.plural
        item = collection + "/{name}"
        item_params = (*scope_params, name)
        if sub:
            item += "/" + sub
            collection, scope_params = item, item_params
        listable = "list" in self.verbs
        watchable = "watch" in self.verbs
        obj = self.message
        ok, created, accepted = (200, "OK", obj), (201, "Created", obj), (202, "Accepted", obj)
        list_params = option_params("ListOptions")
        specified = f"{sub} of the specified {kind}" if sub else f"the specified {kind}"

        if listable:
            verb_doc = "list or watch" if watchable else "list"
            doc = f"{verb_doc} {sub} of objects of kind {kind}" if sub else f"{verb_doc} objects of kind {kind}"
            self.add(
                "get",
                "list",
                f"list{namespaced}{kind}{title}",
                collection,
                doc,
                (*scope_params, *list_params),
                ((200, "OK", self.list_message),),
                produces=self.all_media,
            )
        if "create" in self.verbs:
            doc = f"create{_article(kind)}{kind}" if not sub else f"create {sub} of{_article(kind)}{kind}"
            self.add(
                "post",
                "post",
                f"create{namespaced}{kind}{title}",
                collection,
                doc,
                (*scope_params, *option_params("CreateOptions")),
                (ok, created, accepted),
                Body(obj, True, ("*/*",)),
            )
        if "deletecollection" in self.verbs:
            doc = f"delete collection of {kind}" if not sub else f"delete collection of {sub} of a {kind}"
            self.add(
                "delete",
                "deletecollection",
                f"deletecollection{namespaced}{kind}{title}",
                collection,
                doc,
                (
                    *scope_params,
                    *option_params("DeleteOptions"),
                    *option_params("ListOptions", "watch", "allowWatchBookmarks"),
                ),
                ((200, "OK", STATUS),),
                Body(DELETE_OPTIONS, False, ("*/*",)),
            )
        if listable and watchable:
            listed = f"{sub} of {kind}" if sub else kind
            doc = f"watch individual changes to a list of {listed}"
            self.add(
                "get",
                "watchlist",
                f"watch{namespaced}{kind}{title}List",
                "watch/" + collection,
                doc + ". deprecated: use the 'watch' parameter with a list operation instead.",
                (*scope_params, *list_params),
                ((200, "OK", WATCH_EVENT),),
                produces=self.all_media,
            )
        if "get" in self.verbs:
            self.add("get", "get", f"read{namespaced}{kind}{title}", item, f"read {specified}", item_params, (ok,))
        if "update" in self.verbs:
            self.add(
                "put",
                "put",
                f"replace{namespaced}{kind}{title}",
                item,
                f"replace {specified}",
                (*item_params, *option_params("UpdateOptions")),
                (ok, created),
                Body(obj, True, ("*/*",)),
            )
        if "patch" in self.verbs:
            self.add(
                "patch",
                "patch",
                f"patch{namespaced}{kind}{title}",
                item,
                f"partially update {specified}",
                (*item_params, *option_params("PatchOptions")),
                (ok, created),
                Body(PATCH, True, PATCH_TYPES),
            )
        if "delete" in self.verbs:
            doc = f"delete{_article(kind)}{kind}" if not sub else f"delete {sub} of{_article(kind)}{kind}"
            returned = obj if r.return_deleted_object else STATUS
            self.add(
                "delete",
                "delete",
                f"delete{namespaced}{kind}{title}",
                item,
                doc,
                (*item_params, *option_params("DeleteOptions")),
                ((200, "OK", returned), (202, "Accepted", returned)),
                Body(DELETE_OPTIONS, False, ("*/*",)),
            )
        if watchable and not sub:
            self.add(
                "get",
                "watch",
                f"watch{namespaced}{kind}{title}",
                "watch/" + item,
                f"watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list "
                "operation instead, filtered to a single item with the 'fieldSelector' parameter.",
                (*item_params, *list_params),
                ((200, "OK", WATCH_EVENT),),
                produces=self.all_media,
            )
        if r.namespaced and not sub:
            if listable:
                self.add(
                    "get",
                    "list",
                    f"list{kind}ForAllNamespaces",
                    r.plural,
                    f"{'list or watch' if watchable else 'list'} objects of kind {kind}",
                    list_params,
                    ((200, "OK", self.list_message),),
                    produces=self.all_media,
                )
            if listable and watchable:
                self.add(
                    "get",
                    "watchlist",
                    f"watch{kind}ListForAllNamespaces",
                    "watch/" + r.plural,
                    f"watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a "
                    "list operation instead.",
                    list_params,
                    ((200, "OK", WATCH_EVENT),),
                    produces=self.all_media,
                )
        return self.ops


def resource_operations(resource: Resource) -> list[Operation]:
    """Every route of a resource and of its subresources."""
    ops = _Routes(resource, "").build()
    for sub in resource.subresources:
        ops += _Routes(resource, sub).build()
    return ops


def discovery_operation(path: str, operation_id: str, description: str, tag: str, message: str) -> Operation:
    """A discovery endpoint (/api/, /apis/, /apis/GROUP/, /apis/GROUP/VERSION/): a plain GET."""
    return Operation(
        method="get",
        path=path,
        operation_id=operation_id,
        description=description,
        tags=(tag,),
        action="",
        gvk=None,
        params=(),
        body=None,
        responses=((200, "OK", message),),
        produces=(JSON, YAML, PROTOBUF),
    )
