"""Legacy discovery, generated from the registry: /version, /api, /api/v1, /apis, /apis/G, /apis/G/V.

kubectl resolves resource names from these documents (and caches them for 6 hours).
"""

from __future__ import annotations

import base64
import hashlib
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.negotiation.encoders import JSONEncoder
from protokube.gateway.negotiation.negotiate import Encoder
from protokube.gateway.registry.apiservicepriorities import discovery_order
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import jsonencode
from protokube.schema.registry import GroupVersionKind, Registry, Resource

# kubectl's dispatcher picks its build by the server's minor version.
SERVER_MAJOR, SERVER_MINOR = "1", "32"
GIT_VERSION = "v1.32.0+protokube"


def version_info() -> dict[str, str]:
    return {
        "major": SERVER_MAJOR,
        "minor": SERVER_MINOR,
        "gitVersion": GIT_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": f"python{platform.python_version()}",
        "compiler": "cpython",
        "platform": f"{platform.system().lower()}/{platform.machine()}",
    }


def storage_version_hash(gvk: GroupVersionKind) -> str:
    """upstream's StorageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind")."""
    digest = hashlib.sha256(f"{gvk.group}/{gvk.version}/{gvk.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


@dataclass(frozen=True, slots=True)
class SubresourceEntry:
    """A subresource as discovery shows it: its kind's group and version only when they are not
    the parent's (pods/eviction is policy/v1 Eviction; pods/binding is Binding)."""

    name: str
    group: str
    version: str
    kind: str
    verbs: list[str]


def subresource_entries(resource: Resource) -> list[SubresourceEntry]:
    entries = []
    for sub in sorted(resource.subresources.values(), key=lambda s: s.name):
        same_version = (sub.gvk.group, sub.gvk.version) == (resource.group, resource.version)
        group, version = ("", "") if same_version else (sub.gvk.group, sub.gvk.version)
        entries.append(SubresourceEntry(sub.name, group, version, sub.gvk.kind, sorted(sub.verbs)))
    return entries


# Whether a resource keeps objects in storage (only those have a storageVersionHash).
Stored = Callable[[Resource], bool]


def api_resource_list(registry: Registry, group: str, version: str, stored: Stored) -> meta.APIResourceList:
    resources = registry.resources_in(group, version)
    if not resources:
        raise errors.path_not_found()
    result = meta.APIResourceList(groupVersion=f"{group}/{version}" if group else version)
    entries: list[meta.APIResource] = []
    for res in resources:
        entry = meta.APIResource(
            name=res.plural,
            singularName=res.singular,
            namespaced=res.namespaced,
            kind=res.kind,
            shortNames=res.short_names,
            categories=res.categories,
        )
        if stored(res):
            entry.storageVersionHash = storage_version_hash(res.storage_kind.gvk if res.storage_kind else res.gvk)
        entry.verbs.items.extend(sorted(res.verbs))
        entries.append(entry)
        for sub in subresource_entries(res):
            sub_entry = meta.APIResource(
                name=f"{res.plural}/{sub.name}",
                singularName="",
                namespaced=res.namespaced,
                kind=sub.kind,
                group=sub.group,
                version=sub.version,
            )
            sub_entry.verbs.items.extend(sub.verbs)
            entries.append(sub_entry)
    result.resources.extend(sorted(entries, key=lambda e: e.name))
    return result


def _api_group(group: str, versions: list[str]) -> meta.APIGroup:
    document = meta.APIGroup(name=group)
    for version in versions:
        document.versions.add(groupVersion=f"{group}/{version}", version=version)
    document.preferredVersion.CopyFrom(document.versions[0])
    return document


def api_group(registry: Registry, group: str) -> meta.APIGroup:
    versions = registry.group_versions().get(group)
    if not group or not versions:
        raise errors.path_not_found()
    return _api_group(group, discovery_order({group: versions})[0][1])


def api_group_list(registry: Registry) -> meta.APIGroupList:
    """Every group but the core one, in the aggregator's order."""
    groups = meta.APIGroupList()
    for group, versions in discovery_order(registry.group_versions()):
        if group:
            groups.groups.append(_api_group(group, versions))
    return groups


def api_versions(server_address: str) -> meta.APIVersions:
    versions = meta.APIVersions(versions=["v1"])
    versions.serverAddressByClientCIDRs.add(clientCIDR="0.0.0.0/0", serverAddress=server_address)
    return versions


def encode(encoder: Encoder, message: Message, kind: str, with_api_version: bool = True) -> bytes:
    """Discovery documents; /api and /api/v1 carry no apiVersion in JSON, as upstream serves them."""
    gvk = GroupVersionKind("", "v1", kind)
    if isinstance(encoder, JSONEncoder) and not with_api_version:
        body: dict[str, Any] = {"kind": kind}
        body.update(jsonencode.to_dict(message))
        return encoder.finish(jsonencode.dumps(body))
    return encoder.message(message, gvk)
