"""One webhook's call, from the request's attributes to its answer (upstream's callHook and
callAttrMutatingHook): the dry-run check, the AdmissionReview, the HTTPS call, warnings, and the
errors upstream makes of a denial or a failure."""

from __future__ import annotations

import logging

from protokube.gateway import errors
from protokube.gateway.admission import warnings
from protokube.gateway.admission.webhook import review
from protokube.gateway.admission.webhook.configurations import Webhook
from protokube.gateway.admission.webhook.review import Answer
from protokube.gateway.admission.webhook.rules import Invocation
from protokube.gateway.registry.admission import Attributes
from protokube.gateway.webhooks.client import Caller, CallFailed
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

log = logging.getLogger(__name__)
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")


def denied(hook: Webhook, status: meta.Status | None) -> errors.StatusError:
    """upstream's ToStatusErr (1.32): the webhook's Status, with a code of at least 400, status
    Failure, and a message naming the webhook."""
    result = meta.Status()
    if status is not None:
        result.CopyFrom(status)
    result.metadata.SetInParent()
    if result.code < 400:
        result.code = 400
    if result.status in ("", "Success"):
        result.status = "Failure"
    denied_by = f'admission webhook "{hook.name}" denied the request'
    if result.message:
        result.message = f"{denied_by}: {result.message}"
    elif result.reason:
        result.message = f"{denied_by}: {result.reason}"
    else:
        result.message = f"{denied_by} without explanation"
    return errors.StatusError(result)


def failed(hook: Webhook, reason: str) -> errors.StatusError:
    """A call that failed with failurePolicy Fail: upstream's NewInternalError(ErrCallingWebhook)."""
    log.warning("Failed calling webhook, failing closed %s: %s", hook.name, reason)
    return errors.internal(f'failed calling webhook "{hook.name}": {reason}')


async def call(
    caller: Caller,
    hook: Webhook,
    invocation: Invocation,
    attributes: Attributes,
    objects: tuple[bytes | None, bytes | None],
    *,
    mutating: bool,
) -> Answer | None:
    """The webhook's answer when it allowed the request; None when the call failed and the
    webhook's failurePolicy is Ignore. Raises the denial, or the failure (Fail)."""
    if attributes.dry_run and hook.side_effects not in NO_SIDE_EFFECTS:
        raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
    try:
        if not hook.review_version:
            raise CallFailed(
                "could not create admission objects: webhook does not accept known AdmissionReview versions "
                "(v1, v1beta1)"
            )
        uid, body = review.request(attributes, invocation, hook.review_version, *objects)
        answer = review.answer(await caller.post(hook.client, hook.timeout, body), uid, hook.review_version, mutating)
    except CallFailed as err:
        if hook.ignore_failures:
            log.warning("Failed calling webhook, failing open %s: %s", hook.name, err)
            return None
        raise failed(hook, str(err)) from None
    for text in answer.warnings:
        warnings.add(text)
    if not answer.allowed:
        raise denied(hook, answer.status)
    return answer
