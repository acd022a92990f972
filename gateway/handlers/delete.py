"""DELETE of one object, and of a collection (deletecollection).

The options come from the query and/or a DeleteOptions body (kubectl sends
``{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}``). The answer is
the object while it still exists (finalizers, graceful deletion) or for kinds that return deleted
objects; otherwise a Success Status naming what was deleted.
"""

from __future__ import annotations

import dataclasses

from google.protobuf.message import DecodeError as ProtobufDecodeError

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.handlers.common import info_of, negotiated
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.bodies import parse_body
from protokube.gateway.negotiation.negotiate import COLLECTION
from protokube.gateway.params import (
    IGNORE_READ_ERROR,
    DeleteOptions,
    checked_delete_options,
    delete_options_from_query,
    list_options,
    merged_delete_options,
    validate_list_options,
)
from protokube.gateway.registry.deletion import default_policy_warnings
from protokube.gateway.registry.rest import CollectionDeleter, GracefulDeleter
from protokube.gateway.representation import list_body, object_body
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import STATUS_GVK, add_warnings, respond, success_status
from protokube.gateway.scope import RequestScope
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema import envelope, jsondecode
from protokube.schema.jsondecode import DecodeError

DELETE_OPTIONS = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"


async def delete_options(request: ApiRequest, scope: RequestScope) -> DeleteOptions:
    """The query's options merged with a body's, validated as upstream does; without the
    AllowUnsafeMalformedObjectDeletion gate ignoreStoreReadErrorWithClusterBreakingPotential is dropped."""
    options = delete_options_from_query(request.query_lists())
    body = await request.body()
    if body.strip():
        kind, api_version, message = _decoded_delete_options(body, request.header("Content-Type"))
        # Any apiVersion: upstream registers DeleteOptions unversioned ("to be decoded across all
        # versions"), and client-go's typed clients send their group's (apps/v1 for a Deployment).
        if kind not in ("DeleteOptions", ""):
            raise errors.bad_request(f'{kind} in version "{api_version}" cannot be handled as a DeleteOptions')
        options = merged_delete_options(options, message)
    if scope.unsafe_deleter is None:
        options = dataclasses.replace(options, ignore_store_read_error=None)
    return dataclasses.replace(checked_delete_options(options), user=request.user)


def _decoded_delete_options(body: bytes, content_type: str | None) -> tuple[str, str, meta.DeleteOptions]:
    """A DeleteOptions body: enveloped protobuf or CBOR when the Content-Type says so (client-go sends
    its DeleteOptions in the content type it is configured for), JSON otherwise."""
    parsed = mediatypes.parse_media_type(content_type or "")
    essence = parsed.essence if parsed is not None else mediatypes.JSON
    try:
        if essence == mediatypes.PROTOBUF:
            unknown = envelope.unwrap(body)
            message = meta.DeleteOptions()
            message.ParseFromString(unknown.raw)
            return unknown.typeMeta.kind, unknown.typeMeta.apiVersion, message
        decoded = jsondecode.decode(
            parse_body(body, essence if essence == mediatypes.CBOR else mediatypes.JSON), DELETE_OPTIONS
        )
    except (DecodeError, envelope.EnvelopeError, ProtobufDecodeError) as err:
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type DeleteOptions): {err}"
        ) from None
    assert isinstance(decoded.message, meta.DeleteOptions)  # the generated class DELETE_OPTIONS names
    return decoded.kind, decoded.api_version, decoded.message


async def delete(storage: GracefulDeleter, scope: RequestScope, request: ApiRequest) -> Response:
    target = negotiated(request, scope)
    encoder = target.encoder
    info = info_of(request)
    namespace = scope.namespace(info)
    options = await delete_options(request, scope)
    if options.unsafe:
        return await _delete_unsafely(request, scope, namespace, info.name, options)
    result = await storage.delete(namespace, info.name, options)
    # upstream answers 202 to an old client's cascading delete (orphanDependents=false) left waiting
    code = 202 if not result.deleted and options.orphan_dependents is False else 200
    if not result.deleted or scope.resource.return_deleted_object:
        response = respond(request, object_body(request, scope, target, result.view), code, encoder)
    else:
        obj_meta = result.view.obj.metadata
        details = meta.StatusDetails(name=obj_meta.name, kind=scope.resource.plural, uid=obj_meta.uid)
        if scope.resource.group:
            details.group = scope.resource.group
        response = respond(request, encoder.message(success_status(details), STATUS_GVK), code, encoder)
    add_warnings(response, default_policy_warnings(scope.resource.key, options))
    return response


async def _delete_unsafely(
    request: ApiRequest, scope: RequestScope, namespace: str, name: str, options: DeleteOptions
) -> Response:
    """ignoreStoreReadErrorWithClusterBreakingPotential: authorized, then the corrupt object removed;
    the answer names the kind, as upstream's for a deleter that returns no object."""
    deleter = scope.unsafe_deleter
    assert deleter is not None  # the option is dropped where there is none
    deleter.authorize(request.user, namespace, name)
    await deleter.delete(namespace, name, options)
    encoder = negotiated(request, scope).encoder
    status = success_status(meta.StatusDetails(name=name, kind=scope.resource.kind))
    status.code = 200
    return respond(request, encoder.message(status, STATUS_GVK), 200, encoder)


async def delete_collection(storage: CollectionDeleter, scope: RequestScope, request: ApiRequest) -> Response:
    """Delete every object the list options select; answers with the list of them."""
    target = negotiated(request, scope, COLLECTION)
    options = await delete_options(request, scope)
    if options.unsafe:
        problem = FieldError.invalid(
            IGNORE_READ_ERROR, True, "is not allowed with DELETECOLLECTION, try again after removing the option"
        )
        raise errors.invalid_options("DeleteOptions", [problem])
    list_opts = validate_list_options(list_options(request.query()))
    removed = await storage.delete_collection(scope.namespace(info_of(request)), options, list_opts)
    response = respond(
        request, list_body(request, scope, target, removed.items, removed.list_meta), 200, target.encoder
    )
    add_warnings(response, default_policy_warnings(scope.resource.key, options))
    return response
