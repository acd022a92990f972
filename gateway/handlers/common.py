"""What every handler does the same way: negotiating the response, reading the request body."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from protokube.gateway import errors
from protokube.gateway.auth.authorization import CreateAuthorization
from protokube.gateway.negotiation import negotiate
from protokube.gateway.negotiation.bodies import read_body
from protokube.gateway.objects.codec import DecodedObject
from protokube.gateway.params import WriteOptions, write_options
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.requestinfo import RequestInfo
from protokube.gateway.scope import RequestScope

# A verb's handler as the router calls it: bound, when the routes are installed, to its scope and
# to the storage typed by the role it needs (handlers/installer.py).
VerbHandler = Callable[[ApiRequest], Awaitable[Response]]


def info_of(request: ApiRequest) -> RequestInfo:
    """What the URL addresses (the request-info filter has read it)."""
    assert request.info is not None
    return request.info


def negotiated(
    request: ApiRequest, scope: RequestScope, allowed: frozenset[str] = negotiate.SINGLE
) -> negotiate.Target:
    """The response's format and representation from Accept (406 when none fits)."""
    return negotiate.response_target(request.header("Accept"), request.pretty, scope.formats, allowed)


async def decode_request(request: ApiRequest, scope: RequestScope) -> DecodedObject:
    media_type = negotiate.request_media_type(request.header("Content-Type"), scope.formats)
    return await read_body(await request.body(), media_type, scope.codec, scope.registry)


def field_validation_warnings(decoded: DecodedObject, options: WriteOptions, scope: RequestScope) -> list[str]:
    """The warnings to send (Warn), nothing (Ignore), or a 400 (Strict) for unknown/duplicate fields.

    fieldValidation (default Warn): unknown and duplicate fields become Warning headers, or with
    Strict a 400 listing them all, worded as upstream's strict decoding error; Ignore drops them.
    """
    violations = decoded.violations
    if not violations or options.field_validation == "Ignore":
        return []
    if options.field_validation == "Strict":
        kind, version = scope.resource.kind, scope.resource.version
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: '
            f"strict decoding error: {', '.join(violations)}"
        )
    return violations


def request_write_options(
    request: ApiRequest, kind: str, patch_type: str = "", authorize_create: Callable[[], None] | None = None
) -> WriteOptions:
    """The create/update/patch options of a request, its field manager resolved as upstream does:
    ?fieldManager=, else the product of its User-Agent (apply requires fieldManager)."""
    return write_options(
        request.query_lists(),
        kind,
        patch_type,
        user_agent=request.header("User-Agent"),
        user=request.user,
        authorize_create=authorize_create,
    )


def may_create_write_options(request: ApiRequest, scope: RequestScope, kind: str, patch_type: str = "") -> WriteOptions:
    """The options of a PUT or PATCH, which may turn into a create: the store then authorizes a
    create by the same user of the same object (upstream's withAuthorization)."""
    authorize_create = CreateAuthorization(scope.authorizer, request, info_of(request))
    return request_write_options(request, kind, patch_type, authorize_create)
