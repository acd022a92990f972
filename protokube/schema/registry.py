"""The resource registry: every kind and resource the server knows, read from descriptor options.

Nothing here names a kind. A message with ``option (protokube.options.v1.kind)`` is a kind of its
group/version; one that also has ``option (protokube.options.v1.resource)`` is served as a REST
resource, with its list kind ``<Kind>List`` from the same package.

The registry can change while the server runs: ``add`` and ``remove`` tell every subscriber, so
that routing, discovery and watch caches follow. Resources added that way may have no compiled
message (``message == ""``): their objects are unstructured JSON.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import Descriptor

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.schema import descriptors


class RegistryError(Exception):
    """A malformed resource option: names the message and what is wrong."""


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        """The apiVersion string: "v1" for the core group, "apps/v1" otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    name: str
    type: str
    format: str
    description: str
    priority: int
    json_path: str
    cell: str


@dataclass(frozen=True, slots=True)
class Subresource:
    name: str
    gvk: GroupVersionKind
    message: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoredKind:
    """The kind a resource's objects are stored as, when another version's (see Resource)."""

    gvk: GroupVersionKind
    message: str


@dataclass(frozen=True, slots=True)
class Resource:
    gvk: GroupVersionKind
    plural: str
    singular: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    namespaced: bool
    verbs: tuple[str, ...]
    subresources: dict[str, Subresource]
    printer_columns: tuple[PrinterColumn, ...]
    # Field selector keys, metadata.name and metadata.namespace first.
    selectable_fields: tuple[str, ...]
    storage_prefix: str
    name_rule: int
    allow_create_on_update: bool
    return_deleted_object: bool
    # The kind stored for it when another version's is (objects converted on reads and writes).
    storage_kind: StoredKind | None
    # Protobuf full names of the kind and its list ("" for a kind without a compiled message, and
    # the list of a resource that cannot be listed).
    message: str
    list_message: str
    # What the code that added a run-time resource keeps with it (a CRD version: its schema, scale
    # paths, deprecation warning); not part of the resource's identity. The server asks it for the
    # resource's codec(resource), strategy(resource, codec) and object_type() (what apply merges with).
    extension: Any = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.gvk.group, self.gvk.version, self.plural)

    @property
    def group(self) -> str:
        return self.gvk.group

    @property
    def version(self) -> str:
        return self.gvk.version

    @property
    def kind(self) -> str:
        return self.gvk.kind

    @property
    def list_kind(self) -> str:
        return self.gvk.kind + "List"

    @property
    def virtual(self) -> bool:
        """Create-only resources without storage of their own: their answer is computed (access and
        token reviews) or written to other objects (bindings), as upstream's virtual resources."""
        return "get" not in self.verbs

    @property
    def has_status(self) -> bool:
        """Status is written only through the status subresource (upstream's status strategy)."""
        return "status" in self.subresources

    @property
    def group_resource(self) -> str:
        """ "pods" for core, "deployments.apps" otherwise (as upstream names resources in messages)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


ADDED, REMOVED = "added", "removed"
# Called with ADDED or REMOVED and the resource, after the registry changed.
Listener = Callable[[str, Resource], None]


@dataclass
class Registry:
    kinds: dict[GroupVersionKind, str] = field(default_factory=dict)
    gvk_by_message: dict[str, GroupVersionKind] = field(default_factory=dict)
    resources: dict[tuple[str, str, str], Resource] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def add(self, resource: Resource) -> None:
        """Serve a resource from now on (its kind and list kind become known too)."""
        if resource.key in self.resources:
            raise RegistryError(f"resource {resource.plural} of {resource.gvk.api_version} is already served")
        self.resources[resource.key] = resource
        self.kinds.setdefault(resource.gvk, resource.message)
        self.kinds.setdefault(
            GroupVersionKind(resource.group, resource.version, resource.list_kind), resource.list_message
        )
        for listener in list(self.listeners):
            listener(ADDED, resource)

    def remove(self, group: str, version: str, plural: str) -> Resource:
        """Stop serving a resource; its kinds are forgotten unless compiled messages define them."""
        resource = self.resources.pop((group, version, plural))
        for gvk in (resource.gvk, GroupVersionKind(group, version, resource.list_kind)):
            if not self.kinds.get(gvk):
                self.kinds.pop(gvk, None)
        for listener in list(self.listeners):
            listener(REMOVED, resource)
        return resource

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        return self.resources.get((group, version, plural))

    def resource_for_kind(self, gvk: GroupVersionKind) -> Resource | None:
        return next((r for r in self.resources.values() if r.gvk == gvk), None)

    def group_versions(self) -> dict[str, list[str]]:
        """Group → versions served, preferred first (Kubernetes' version order); core ("") first,
        then groups in name order."""
        result: dict[str, list[str]] = {}
        for group, version, _ in sorted(self.resources, key=lambda k: (k[0] != "", k[0], version_order(k[1]))):
            versions = result.setdefault(group, [])
            if version not in versions:
                versions.append(version)
        return result

    def resources_in(self, group: str, version: str) -> list[Resource]:
        return sorted(
            (r for (g, v, _), r in self.resources.items() if (g, v) == (group, version)),
            key=lambda r: r.plural,
        )


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 0, "beta": 1, "alpha": 2}


def version_order(version: str) -> tuple[int, int, int, str]:
    """A sort key putting versions in Kubernetes' order (upstream's CompareKubeAwareVersionStrings):
    GA before beta before alpha, higher numbers first, then anything else by name."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stability, minor = match.groups()
    return (_STABILITY[stability], -int(major), -int(minor or 0), "")


def _parse_gvk(text: str, where: str) -> GroupVersionKind:
    parts = text.split("/")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        raise RegistryError(f"{where}: kind {text!r} must be GROUP/VERSION/Kind (empty group for core)")
    return GroupVersionKind(*parts)


def _build_resource(desc: Descriptor, gvk: GroupVersionKind, option: opts.Resource, reg: Registry) -> Resource:
    where = desc.full_name
    if not option.plural or option.plural != option.plural.lower():
        raise RegistryError(f"{where}: resource option needs a lower-case plural")
    if option.scope == opts.SCOPE_UNSPECIFIED:
        raise RegistryError(f"{where}: resource option needs a scope")
    list_message = desc.full_name + "List"
    if "list" not in option.verbs:
        list_message = ""
    elif list_message not in reg.gvk_by_message and not _defined(list_message):
        raise RegistryError(f"{where}: resource has no list message {list_message}")
    subresources = {}
    for sub in option.subresources:
        sub_gvk = _parse_gvk(sub.kind, f"{where} subresource {sub.name}") if sub.kind else gvk
        if sub_gvk not in reg.kinds:
            raise RegistryError(f"{where}: subresource {sub.name} serves unknown kind {sub.kind}")
        subresources[sub.name] = Subresource(sub.name, sub_gvk, reg.kinds[sub_gvk], tuple(sub.verbs))
    storage_kind = None
    if option.storage_kind:
        storage_gvk = _parse_gvk(option.storage_kind, f"{where} storage_kind")
        if storage_gvk not in reg.kinds:
            raise RegistryError(f"{where}: storage_kind {option.storage_kind} is not a known kind")
        storage_kind = StoredKind(storage_gvk, reg.kinds[storage_gvk])
    columns = tuple(
        PrinterColumn(c.name, c.type, c.format, c.description, c.priority, c.json_path, c.cell)
        for c in option.printer_columns
    )
    for column in columns:
        if bool(column.json_path) == bool(column.cell):
            raise RegistryError(f"{where}: printer column {column.name!r} needs exactly one of json_path, cell")
    return Resource(
        gvk=gvk,
        plural=option.plural,
        singular=option.singular or gvk.kind.lower(),
        short_names=tuple(option.short_names),
        categories=tuple(option.categories),
        namespaced=option.scope == opts.SCOPE_NAMESPACED,
        verbs=tuple(option.verbs),
        subresources=subresources,
        printer_columns=columns,
        selectable_fields=("metadata.name", "metadata.namespace", *option.selectable_fields),
        storage_prefix=option.storage_prefix or option.plural,
        name_rule=option.name_rule,
        allow_create_on_update=option.allow_create_on_update,
        return_deleted_object=option.return_deleted_object,
        storage_kind=storage_kind,
        message=desc.full_name,
        list_message=list_message,
    )


def _defined(full_name: str) -> bool:
    try:
        descriptors.descriptor(full_name)
    except KeyError:
        return False
    return True


def build(messages: list[Descriptor]) -> Registry:
    """Build a registry from message descriptors (all of gen/ by default, see ``registry()``)."""
    reg = Registry()
    resource_options: list[tuple[Descriptor, GroupVersionKind, opts.Resource]] = []
    for desc in messages:
        options = desc.GetOptions()
        if not options.HasExtension(opts.kind):
            if options.HasExtension(opts.resource):
                raise RegistryError(f"{desc.full_name}: a resource option needs a kind option too")
            continue
        kind_option = options.Extensions[opts.kind]
        if not kind_option.version:
            raise RegistryError(f"{desc.full_name}: kind option needs a version")
        gvk = GroupVersionKind(kind_option.group, kind_option.version, desc.name)
        if gvk in reg.kinds:
            raise RegistryError(f"{desc.full_name}: kind {gvk} is defined twice (also {reg.kinds[gvk]})")
        reg.kinds[gvk] = desc.full_name
        reg.gvk_by_message[desc.full_name] = gvk
        if options.HasExtension(opts.resource):
            resource_options.append((desc, gvk, options.Extensions[opts.resource]))
    for desc, gvk, option in resource_options:
        resource = _build_resource(desc, gvk, option, reg)
        key = (gvk.group, gvk.version, resource.plural)
        if key in reg.resources:
            raise RegistryError(f"{desc.full_name}: resource {resource.plural} is defined twice")
        reg.resources[key] = resource
        list_gvk = GroupVersionKind(gvk.group, gvk.version, resource.list_kind)
        reg.kinds.setdefault(list_gvk, resource.list_message)
        reg.gvk_by_message.setdefault(resource.list_message, list_gvk)
    return reg


@functools.cache
def registry() -> Registry:
    """The registry of everything generated under gen/."""
    return build(descriptors.all_messages())
