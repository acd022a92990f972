"""ValidatingAdmissionWebhook: every matching validating webhook is called at once, after the
object is complete (its place in the validating phase); the first refusal, in the webhooks'
order, is the answer."""

from __future__ import annotations

import asyncio

from protokube.gateway.admission.webhook.call import call
from protokube.gateway.admission.webhook.dispatch import Dispatcher
from protokube.gateway.admission.webhook.objects import as_json, convert
from protokube.gateway.registry.admission import Attributes


class ValidatingAdmissionWebhook(Dispatcher):
    async def validate(self, attributes: Attributes) -> None:
        invocations = await self.invocations(attributes)
        if not invocations:
            return
        source = self.codec(attributes.resource, attributes.kind)
        objects: dict[tuple[str, str, str], tuple[bytes | None, bytes | None]] = {}
        for _, invocation in invocations:
            if invocation.resource.key not in objects:
                target = self.codec(invocation.resource, invocation.kind)
                objects[invocation.resource.key] = (
                    as_json(target, convert(attributes.obj, source, target)),
                    as_json(target, convert(attributes.old, source, target)),
                )
        results = await asyncio.gather(
            *(
                call(self.caller, hook, invocation, attributes, objects[invocation.resource.key], mutating=False)
                for hook, invocation in invocations
            ),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
