"""Whether a request calls a webhook (upstream's ShouldCallHook): its namespaceSelector (on the
labels of the request's namespace; of the namespace itself when one is written), its
objectSelector (on the new or the old object's labels), its rules, then its matchConditions."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from protokube.gateway import errors
from protokube.gateway.admission.webhook import conditions
from protokube.gateway.admission.webhook.configurations import Webhook
from protokube.gateway.admission.webhook.objects import as_value, codec_of, convert
from protokube.gateway.admission.webhook.rules import NAMESPACES, Invocation, invocation
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.cel.cost import offloaded
from protokube.gateway.objects.codec import Codec
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import GroupVersionKind, Registry, Resource


class Selection:
    """``namespaces``: the namespaces' watch cache (its labels for namespaceSelectors); ``stores``:
    the server's stores by key (their codecs, for the objects matchConditions see)."""

    def __init__(
        self, namespaces: Cacher, registry: Registry, stores: Mapping[Any, Any], authorizer: Authorizer
    ) -> None:
        self.namespaces = namespaces
        self.registry = registry
        self.stores = stores
        self.authorizer = authorizer

    async def invocation(self, hook: Webhook, attributes: Attributes) -> Invocation | None:
        """How ``hook`` is called for the request, None when it is not."""
        if not _object_matches(hook, attributes):
            return None
        found = invocation(hook.rules, hook.equivalent, attributes, self.registry)
        if found is None or not await self._namespace_matches(hook, attributes):
            return None
        if hook.match_conditions and not await self._conditions_match(hook, found, attributes):
            return None
        return found

    async def _conditions_match(self, hook: Webhook, invocation: Invocation, attributes: Attributes) -> bool:
        source = self.codec(attributes.resource, attributes.kind)
        target = self.codec(invocation.resource, invocation.kind)
        obj, old = (convert(o, source, target) for o in (attributes.obj, attributes.old))
        values = [None if o is None else as_value(target, o) for o in (obj, old)]
        fail = not hook.ignore_failures
        return await offloaded(
            functools.partial(conditions.matches, hook.match_conditions, fail, attributes, *values, self.authorizer)
        )

    def codec(self, resource: Resource, kind: GroupVersionKind) -> Codec:
        """The codec of the objects a request on ``resource`` carries as ``kind``."""
        return codec_of(resource, kind, self.stores[resource.key].codec)

    async def _namespace_matches(self, hook: Webhook, attributes: Attributes) -> bool:
        resource = attributes.resource
        is_namespace = resource.key == NAMESPACES
        if hook.namespace_selector.empty or (not attributes.namespace and not is_namespace):
            return True  # cluster-scoped objects are never exempted
        if is_namespace and not attributes.subresource and attributes.operation in (CREATE, UPDATE):
            assert attributes.obj is not None
            return hook.namespace_selector.matches(attributes.obj.metadata.labels)
        name = attributes.name if is_namespace else attributes.namespace
        view = self.namespaces.cached("", name) or await self.namespaces.get_latest("", name)
        if view is None:
            raise errors.not_found(self.namespaces.resource, name)
        return hook.namespace_selector.matches(view.obj.metadata.labels)


def _object_matches(hook: Webhook, attributes: Attributes) -> bool:
    selector = hook.object_selector
    if selector.empty:
        return True
    return any(obj is not None and selector.matches(obj.metadata.labels) for obj in (attributes.obj, attributes.old))
