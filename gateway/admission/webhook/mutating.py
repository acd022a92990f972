"""MutatingAdmissionWebhook: matching mutating webhooks are called one after the other, each on
the object as the ones before it left it; a JSONPatch answer changes the request's object.
reinvocationPolicy IfNeeded: a webhook that was called is called once more, after the others,
when a later webhook changed the object (upstream's single reinvocation round)."""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.admission.webhook.call import call, failed
from protokube.gateway.admission.webhook.configurations import Webhook
from protokube.gateway.admission.webhook.dispatch import Dispatcher
from protokube.gateway.admission.webhook.objects import as_json, as_value, convert, replace
from protokube.gateway.admission.webhook.patch import operations, patched
from protokube.gateway.admission.webhook.rules import Invocation
from protokube.gateway.registry.admission import Attributes
from protokube.gateway.webhooks.client import CallFailed


class MutatingAdmissionWebhook(Dispatcher):
    async def admit(self, attributes: Attributes) -> None:
        hooks = await self.webhooks(attributes)
        invoked: list[str] = []  # reinvocable webhooks called so far
        again: set[str] = set()  # those to call once more
        for hook in hooks:
            # Each webhook's selectors and conditions see the object as the ones before it left it.
            invocation = await self.selection.invocation(hook, attributes)
            if invocation is None:
                continue
            if await self._call(hook, invocation, attributes):
                again.update(invoked)
            if hook.reinvoke:
                invoked.append(hook.uid)
        for hook in hooks:
            if hook.uid in again:
                invocation = await self.selection.invocation(hook, attributes)
                if invocation is not None:
                    await self._call(hook, invocation, attributes)

    async def _call(self, hook: Webhook, invocation: Invocation, attributes: Attributes) -> bool:
        """Call one webhook and apply its patch; whether it changed the object."""
        source = self.codec(attributes.resource, attributes.kind)
        target = self.codec(invocation.resource, invocation.kind)
        obj = convert(attributes.obj, source, target)
        old = convert(attributes.old, source, target)
        answer = await call(
            self.caller, hook, invocation, attributes, (as_json(target, obj), as_json(target, old)), mutating=True
        )
        if answer is None or not answer.patch:
            return False
        try:
            ops = operations(answer.patch, answer.patch_type or "")
        except CallFailed as err:
            if hook.ignore_failures:
                return False
            raise failed(hook, str(err)) from None
        if not ops:
            return False
        if obj is None:
            raise errors.internal(
                f'admission webhook "{hook.name}" attempted to modify the object, which is not supported for this '
                "operation"
            )
        changed = patched(target, as_value(target, obj), ops)
        if changed is None:
            return False
        assert attributes.obj is not None
        replace(attributes.obj, convert(changed, target, source))
        return True
