"""Admission: changes and checks that run on writes after decoding and before storage.

Upstream runs admission plugins in a chain for every create, update, delete and connect; each
plugin looks at the request's attributes and may refuse it with a StatusError. Mutating plugins
change the object first (``Admission.admit``, before the kind's strategy and validation); the
store calls ``Admission.validate`` for every write it is about to make.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gateway.auth.user import UserInfo
from gateway.objects.codec import Obj
from protokube.schema.registry import Resource

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"


@dataclass(frozen=True, slots=True)
class Attributes:
    operation: str  # CREATE, UPDATE or DELETE
    resource: Resource
    subresource: str
    namespace: str
    name: str
    obj: Obj | None  # the object to be written (None for DELETE)
    old: Obj | None  # the object as stored (None for CREATE)
    user: UserInfo  # who asks


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

    async def admit(self, attributes: Attributes) -> None:
        for plugin in self.mutating:
            await plugin.admit(attributes)

    async def validate(self, attributes: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.validate(attributes)
