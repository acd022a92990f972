"""DELETE of one object, and of a collection (deletecollection).

The options come from the query and/or a DeleteOptions body (kubectl sends
``{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}``). The answer is
the object while it still exists (finalizers, graceful deletion) or for kinds that return deleted
objects; otherwise a Success Status naming what was deleted.
"""

from __future__ import annotations

import dataclasses

from k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from quart import Response

from gateway import errors, reads
from gateway.context import RequestContext
from gateway.errors import FieldError
from gateway.negotiation.negotiate import COLLECTION
from gateway.params import DeleteOptions, delete_options_from_query
from gateway.representation import list_body, object_body
from gateway.responses import STATUS_GVK, respond, success_status
from protokube.schema import jsondecode
from protokube.schema.jsondecode import DecodeError

DELETE_OPTIONS = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"
DELETE_OPTIONS_VERSIONS = ("v1", "meta.k8s.io/v1", "")
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


async def delete_options(ctx: RequestContext) -> DeleteOptions:
    options = delete_options_from_query(ctx.query_lists())
    body = await ctx.request.get_data(cache=False)
    if body.strip():
        try:
            decoded = jsondecode.decode_bytes(body, DELETE_OPTIONS)
        except DecodeError as err:
            raise errors.bad_request(
                f"the object provided is unrecognized (must be of type DeleteOptions): {err}"
            ) from None
        if decoded.kind not in ("DeleteOptions", "") or decoded.api_version not in DELETE_OPTIONS_VERSIONS:
            raise errors.bad_request(
                f'{decoded.kind} in version "{decoded.api_version}" cannot be handled as a DeleteOptions'
            )
        options = _merge(options, decoded.message)
    if options.propagation_policy and options.propagation_policy not in PROPAGATION_POLICIES:
        raise errors.invalid_options(
            "DeleteOptions",
            [FieldError.not_supported("propagationPolicy", options.propagation_policy, PROPAGATION_POLICIES)],
        )
    if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
        options = dataclasses.replace(options, grace_period_seconds=0)
    return options


def _merge(options: DeleteOptions, body: meta.DeleteOptions) -> DeleteOptions:
    changes: dict[str, object] = {}
    if body.HasField("gracePeriodSeconds"):
        changes["grace_period_seconds"] = body.gracePeriodSeconds
    if body.propagationPolicy:
        changes["propagation_policy"] = body.propagationPolicy
    if body.HasField("orphanDependents"):
        changes["orphan_dependents"] = body.orphanDependents
    if body.HasField("preconditions"):
        if body.preconditions.HasField("uid"):
            changes["precondition_uid"] = body.preconditions.uid
        if body.preconditions.HasField("resourceVersion"):
            changes["precondition_resource_version"] = body.preconditions.resourceVersion
    if list(body.dryRun):
        if any(v != "All" for v in body.dryRun):
            raise errors.invalid_options(
                "DeleteOptions", [FieldError.not_supported("dryRun", list(body.dryRun), ["All"])]
            )
        changes["dry_run"] = True
    return dataclasses.replace(options, **changes)


async def delete(ctx: RequestContext) -> Response:
    target = ctx.target()
    encoder = target.encoder
    options = await delete_options(ctx)
    result = await ctx.store.delete(ctx.namespace, ctx.info.name, options)
    if not result.deleted or ctx.resource.return_deleted_object:
        return respond(object_body(ctx, target, result.view), 200, encoder)
    obj_meta = result.view.message.metadata
    details = meta.StatusDetails(name=obj_meta.name, kind=ctx.resource.plural, uid=obj_meta.uid)
    if ctx.resource.group:
        details.group = ctx.resource.group
    status = success_status(details)
    return respond(encoder.message(status, STATUS_GVK), 200, encoder)


async def delete_collection(ctx: RequestContext) -> Response:
    """Delete every object the list options select; answers with the list of them."""
    target = ctx.target(COLLECTION)
    options = await delete_options(ctx)
    listed = await reads.list_objects(ctx)
    removed = []
    for view in listed.items:
        try:
            result = await ctx.store.delete(view.message.metadata.namespace, view.message.metadata.name, options)
        except errors.StatusError as err:
            if err.code == 404:
                continue  # deleted meanwhile
            raise
        removed.append(result.view)
    return respond(list_body(ctx, target, removed, listed.list_meta), 200, target.encoder)
