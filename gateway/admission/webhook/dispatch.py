"""What both webhook plugins share (upstream's generic.Webhook): the webhooks a request calls,
in order, and the codecs of the versions they are called with."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from protokube.gateway.admission.webhook.configurations import MUTATING, VALIDATING, Configurations, Webhook
from protokube.gateway.admission.webhook.rules import NAMESPACES, Invocation, exempt
from protokube.gateway.admission.webhook.selection import Selection
from protokube.gateway.objects.codec import Codec
from protokube.gateway.registry.admission import Attributes
from protokube.gateway.webhooks.client import Caller
from protokube.schema.registry import GroupVersionKind, Resource

if TYPE_CHECKING:
    from protokube.gateway.admission.context import PluginContext

D = TypeVar("D", bound="Dispatcher")


class Dispatcher:
    """The configurations, which of their webhooks a request calls, and the caller."""

    def __init__(self, configurations: Configurations, selection: Selection, caller: Caller) -> None:
        self.configurations = configurations
        self.selection = selection
        self.caller = caller

    async def webhooks(self, attributes: Attributes) -> tuple[Webhook, ...]:
        """The configured webhooks, none for admission's own configurations."""
        return () if exempt(attributes) else await self.configurations.webhooks()

    async def invocations(self, attributes: Attributes) -> list[tuple[Webhook, Invocation]]:
        """The webhooks the request calls, with how."""
        found = []
        for hook in await self.webhooks(attributes):
            invocation = await self.selection.invocation(hook, attributes)
            if invocation is not None:
                found.append((hook, invocation))
        return found

    def codec(self, resource: Resource, kind: GroupVersionKind) -> Codec:
        return self.selection.codec(resource, kind)

    @classmethod
    def of(cls: type[D], context: PluginContext, mutating: bool) -> D:
        """The plugin as the chain makes it, on the server's watch caches and stores."""
        configurations = Configurations(context.cachers[MUTATING if mutating else VALIDATING], mutating)
        selection = Selection(context.cachers[NAMESPACES], context.registry, context.stores, context.authorizer)
        return cls(configurations, selection, Caller(context.cachers))
