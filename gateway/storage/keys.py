"""Storage keys, laid out as kube-apiserver lays them out in etcd.

/registry/<prefix>/<namespace>/<name> for namespaced resources, /registry/<prefix>/<name> for
cluster-scoped ones; <prefix> is the plural unless the resource option says otherwise (nodes are
under "minions", services under "services/specs").
"""

from __future__ import annotations

from protokube.schema.registry import Resource

ROOT = "/registry/"


def collection_prefix(resource: Resource, namespace: str = "") -> bytes:
    """The prefix of every key of a collection (of one namespace, when given)."""
    if resource.namespaced and namespace:
        return f"{ROOT}{resource.storage_prefix}/{namespace}/".encode()
    return f"{ROOT}{resource.storage_prefix}/".encode()


def object_key(resource: Resource, namespace: str, name: str) -> bytes:
    if resource.namespaced:
        return f"{ROOT}{resource.storage_prefix}/{namespace}/{name}".encode()
    return f"{ROOT}{resource.storage_prefix}/{name}".encode()


def split_key(resource: Resource, key: bytes) -> tuple[str, str]:
    """(namespace, name) of an object key of this resource."""
    rest = key.decode()[len(ROOT) + len(resource.storage_prefix) + 1 :]
    if resource.namespaced:
        namespace, _, name = rest.partition("/")
        return namespace, name
    return "", rest
