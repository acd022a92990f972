"""Audit-Id: every request has an id, sent back on every response (upstream's WithAuditID).

A client may name the request itself with an Audit-ID header; otherwise the server makes one.
"""

from __future__ import annotations

import random

from protokube.gateway.request import ApiRequest, Handler, Response

HEADER = "Audit-Id"
MAX_CLIENT_ID = 128
# A random (version 4, RFC 4122 variant) UUID's fixed bits.
UUID4_BITS = (0x4000 << 64) | (0x8000 << 48)
UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))


def new_audit_id() -> str:
    """A random UUID in its text form, as upstream's uuid.New(): an id, not a secret, so drawn from
    ``random`` (about 1.5 µs; uuid.uuid4() reads os.urandom and builds a UUID object, about 5)."""
    text = f"{random.getrandbits(128) & UUID4_CLEAR | UUID4_BITS:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class AuditId:
    def __init__(self, next_handler: Handler) -> None:
        self.next = next_handler

    async def __call__(self, request: ApiRequest) -> Response:
        given = request.header(HEADER)
        request.request_id = given if 0 < len(given) <= MAX_CLIENT_ID else new_audit_id()
        response = await self.next(request)
        response.headers[HEADER] = request.request_id
        return response
