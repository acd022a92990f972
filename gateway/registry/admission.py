"""The admission interface the store calls (upstream's k8s.io/apiserver/pkg/admission): changes and
checks that run on writes after decoding and before storage. The plugins are admission/'s.

Upstream runs admission plugins in a chain for every create, update, delete and connect; each
plugin looks at the request's attributes and may refuse it with a StatusError. Mutating plugins
change the object first (``Admission.admit``, before the kind's strategy and validation); the
store calls ``Admission.validate`` for every write it is about to make. Which plugins run, and in
which order, is admission/chain.py's (kube-apiserver's plugin names and flags).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from protokube.gateway import errors
from protokube.gateway.objects.codec import Obj
from protokube.gateway.params import DeleteOptions, WriteOptions
from protokube.gateway.user import UserInfo
from protokube.schema.registry import GroupVersionKind, Resource

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"


# Not frozen: made per request, and a frozen dataclass costs three times as much to make (README).
@dataclass(slots=True)
class Attributes:
    operation: str  # CREATE, UPDATE or DELETE
    resource: Resource
    subresource: str
    namespace: str
    name: str
    obj: Obj | None  # the object to be written (None for DELETE)
    old: Obj | None  # the object as stored (None for CREATE)
    options: WriteOptions | DeleteOptions  # the request's Create/Update/Patch/DeleteOptions
    # the objects' kind when it is not the resource's: a subresource's own (autoscaling/v1 Scale)
    subresource_kind: GroupVersionKind | None = None

    @property
    def kind(self) -> GroupVersionKind:
        """The kind of ``obj`` and ``old`` (upstream's GetKind): the resource's, or its subresource's."""
        return self.subresource_kind or self.resource.gvk

    @property
    def user(self) -> UserInfo:
        """Who asks."""
        return self.options.user

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run


def forbidden(attributes: Attributes, reason: str) -> errors.StatusError:
    """upstream's admission.NewForbidden: 403 naming the resource and the object (its name, or
    its generateName when it has none yet)."""
    name = attributes.name
    if not name and attributes.obj is not None:
        name = attributes.obj.metadata.name or attributes.obj.metadata.generateName
    return errors.forbidden(attributes.resource.group, attributes.resource.plural, name, reason)


def _handles(plugin: object, resource: Resource) -> bool:
    """A plugin's ``handles(resource)``: False only for a resource it never acts on, whatever the
    write; a plugin without it may act on any resource."""
    handles = getattr(plugin, "handles", None)
    return handles is None or handles(resource)


class Plugin(Protocol):
    async def validate(self, attributes: Attributes) -> None:
        """Raise a StatusError to refuse the request."""


class MutatingPlugin(Protocol):
    async def admit(self, attributes: Attributes) -> None:
        """Change ``attributes.obj`` in place, or raise a StatusError to refuse the request."""


class Admission:
    """The plugins, in order; the first refusal wins."""

    def __init__(self, plugins: Sequence[Plugin] = (), mutating: Sequence[MutatingPlugin] = ()) -> None:
        self.plugins = tuple(plugins)
        self.mutating = tuple(mutating)

    def for_resource(self, resource: Resource) -> Admission:
        """The chain of ``resource``'s writes: without the plugins whose ``handles`` (when they have
        one) says they never act on it, decided once for its store instead of on every write."""
        return Admission(
            [p for p in self.plugins if _handles(p, resource)], [p for p in self.mutating if _handles(p, resource)]
        )

    async def admit(self, attributes: Attributes) -> None:
        for plugin in self.mutating:
            await plugin.admit(attributes)

    async def validate(self, attributes: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.validate(attributes)
