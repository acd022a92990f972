"""What create, update and patch share: decoding the body and applying fieldValidation.

fieldValidation (default Warn): unknown and duplicate fields become Warning headers, or with
Strict a 400 listing them all, worded as upstream's strict decoding error; Ignore drops them.
"""

from __future__ import annotations

from gateway import errors
from gateway.context import RequestContext
from gateway.negotiation import negotiate
from gateway.negotiation.bodies import decode_body
from gateway.params import WriteOptions
from protokube.schema.jsondecode import Decoded


async def decode_request(ctx: RequestContext) -> Decoded:
    media_type = negotiate.request_media_type(ctx.request.headers.get("Content-Type"), ctx.gateway.formats)
    body = await ctx.request.get_data(cache=False)
    return decode_body(body, media_type, ctx.resource.gvk, ctx.resource.message)


def field_validation_warnings(decoded: Decoded, options: WriteOptions, resource_kind: str, version: str) -> list[str]:
    """The warnings to send (Warn), nothing (Ignore), or a 400 (Strict) for unknown/duplicate fields."""
    violations = decoded.violations
    if not violations or options.field_validation == "Ignore":
        return []
    if options.field_validation == "Strict":
        raise errors.bad_request(
            f'{resource_kind} in version "{version}" cannot be handled as a {resource_kind}: '
            f"strict decoding error: {', '.join(violations)}"
        )
    return violations
