"""The garbage collector's graph: every object that owns or is owned, by uid, with its owner
references and its dependents (upstream's GraphBuilder, without virtual nodes: owners that are
not in the graph are looked up live when it matters).

Informers of every served resource feed it; each change says which objects the collector must
look at again (``Attention``): a dependent whose owner went away, an owner deleting in foreground
whose dependents changed, an owner to orphan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from sys import intern

from protokube.gateway.objects.codec import Obj
from protokube.gateway.registry.deletion import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as metav1

ResourceKey = tuple[str, str, str]  # (group, version, plural)
# What the collector does with an object: check whether it is garbage (and, for an owner deleting
# in foreground, whether its dependents are gone), or orphan its dependents.
ATTEMPT_DELETE, ATTEMPT_ORPHAN = "delete", "orphan"


# OwnerRef and Node are plain classes, made for every event of every resource: a dataclass's generated
# ``__init__`` runs as Python, even compiled, and a frozen one's sets each field through
# ``object.__setattr__`` (README). Neither is changed once made; they compare by value.
class OwnerRef:
    __slots__ = ("api_version", "block", "kind", "name", "uid")

    def __init__(self, api_version: str, kind: str, name: str, uid: str, block: bool) -> None:
        self.api_version = api_version
        self.kind = kind
        self.name = name
        self.uid = uid
        self.block = block  # blockOwnerDeletion

    @classmethod
    def of(cls, ref: metav1.OwnerReference) -> OwnerRef:
        """An object's owner reference; its strings interned (siblings name the same owner)."""
        return cls(intern(ref.apiVersion), intern(ref.kind), intern(ref.name), intern(ref.uid), ref.blockOwnerDeletion)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OwnerRef)
            and self.uid == other.uid
            and self.name == other.name
            and self.kind == other.kind
            and self.api_version == other.api_version
            and self.block == other.block
        )


class Node:
    __slots__ = ("deleting", "foreground", "name", "namespace", "orphaning", "owners", "resource", "uid")

    def __init__(
        self,
        resource: ResourceKey,
        namespace: str,
        name: str,
        uid: str,
        owners: tuple[OwnerRef, ...],
        deleting: bool,
        orphaning: bool,
        foreground: bool,
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.uid = uid
        self.owners = owners
        self.deleting = deleting  # metadata.deletionTimestamp is set
        self.orphaning = orphaning  # ... and the orphan finalizer holds it
        self.foreground = foreground  # ... and the foregroundDeletion finalizer holds it

    @classmethod
    def of(cls, resource: ResourceKey, obj: Obj) -> Node:
        """The node of an object. The graph holds one for every object of every resource, so the
        strings many nodes share (namespaces, owners' references) are interned, not held once per
        node."""
        meta = obj.metadata
        deleting = meta.HasField("deletionTimestamp")
        return cls(
            resource,
            intern(meta.namespace),
            meta.name,
            meta.uid,
            tuple(OwnerRef.of(ref) for ref in meta.ownerReferences[:]),  # sliced: see jsonencode.to_dict
            deleting,
            deleting and ORPHAN_FINALIZER in meta.finalizers,
            deleting and FOREGROUND_FINALIZER in meta.finalizers,
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Node)
            and self.uid == other.uid
            and self.name == other.name
            and self.namespace == other.namespace
            and self.resource == other.resource
            and self.owners == other.owners
            and self.deleting == other.deleting
            and self.orphaning == other.orphaning
            and self.foreground == other.foreground
        )


Attention = tuple[str, str]  # (ATTEMPT_DELETE or ATTEMPT_ORPHAN, uid)


@dataclass
class Graph:
    nodes: dict[str, Node] = field(default_factory=dict)
    _dependents: dict[str, set[str]] = field(default_factory=dict)  # owner uid -> dependent uids
    _by_resource: dict[ResourceKey, set[str]] = field(default_factory=dict)

    def dependents(self, owner: Node) -> Iterator[Node]:
        """The objects that name ``owner`` among their owners (in its namespace, if it has one)."""
        for uid in self._dependents.get(owner.uid, ()):
            node = self.nodes.get(uid)
            if node is not None and (not owner.namespace or node.namespace == owner.namespace):
                yield node

    def blocking(self, owner: Node) -> list[Node]:
        """Dependents that keep a foreground deletion of ``owner`` waiting (blockOwnerDeletion)."""
        return [d for d in self.dependents(owner) if any(r.uid == owner.uid and r.block for r in d.owners)]

    # ---- changes --------------------------------------------------------------------------------
    def replace(self, resource: ResourceKey, nodes: Iterable[Node]) -> list[Attention]:
        """Every object of a resource, as an informer (re)lists them."""
        fresh = {node.uid: node for node in nodes}
        found: list[Attention] = []
        for uid in self._by_resource.get(resource, set()) - fresh.keys():
            found += self.remove(uid)
        for node in fresh.values():
            found += self.put(node)
        return found

    def put(self, node: Node) -> list[Attention]:
        old = self.nodes.get(node.uid)
        if old == node:
            return []
        if old is not None:
            self._unlink(old)
        self.nodes[node.uid] = node
        self._by_resource.setdefault(node.resource, set()).add(node.uid)
        for ref in node.owners:
            self._dependents.setdefault(ref.uid, set()).add(node.uid)
        found: list[Attention] = []
        if node.owners and (old is None or old.owners != node.owners):
            found.append((ATTEMPT_DELETE, node.uid))  # owners to check (again)
        if node.orphaning:
            found.append((ATTEMPT_ORPHAN, node.uid))
        if node.foreground:
            found.append((ATTEMPT_DELETE, node.uid))
            found += [(ATTEMPT_DELETE, d.uid) for d in self.dependents(node)]
        return found

    def remove(self, uid: str) -> list[Attention]:
        node = self.nodes.pop(uid, None)
        if node is None:
            return []
        self._unlink(node)
        self._by_resource.get(node.resource, set()).discard(uid)
        found = [(ATTEMPT_DELETE, d.uid) for d in self.dependents(node)]  # maybe garbage now
        for ref in node.owners:  # an owner deleting in foreground may wait for this one no more
            owner = self.nodes.get(ref.uid)
            if owner is not None and owner.foreground:
                found.append((ATTEMPT_DELETE, owner.uid))
        return found

    def forget(self, resource: ResourceKey) -> None:
        """A resource no longer served: its objects leave the graph."""
        for uid in self._by_resource.pop(resource, set()):
            node = self.nodes.pop(uid, None)
            if node is not None:
                self._unlink(node)

    def _unlink(self, node: Node) -> None:
        for ref in node.owners:
            dependents = self._dependents.get(ref.uid)
            if dependents is not None:
                dependents.discard(node.uid)
                if not dependents:
                    del self._dependents[ref.uid]

    def needing_attention(self) -> list[Attention]:
        """What a periodic resync looks at: owners deleting with a collector's finalizer, and
        dependents with an owner missing from the graph or deleting."""
        found: list[Attention] = []
        for node in self.nodes.values():
            if node.orphaning:
                found.append((ATTEMPT_ORPHAN, node.uid))
            if node.foreground or any(ref.uid not in self.nodes or self.nodes[ref.uid].deleting for ref in node.owners):
                found.append((ATTEMPT_DELETE, node.uid))
        return found
