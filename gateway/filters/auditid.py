"""Audit-Id: every request has an id, sent back on every response (upstream's WithAuditID).

A client may name the request itself with an Audit-ID header; otherwise the server makes one.
"""

from __future__ import annotations

from typing import Final

from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.uuids import random_uuid

HEADER: Final = "Audit-Id"
MAX_CLIENT_ID: Final = 128


class AuditId:
    def __init__(self, next_handler: Handler) -> None:
        self.next = next_handler

    async def __call__(self, request: ApiRequest) -> Response:
        given = request.header(HEADER)
        request.request_id = given if 0 < len(given) <= MAX_CLIENT_ID else random_uuid()
        response = await self.next(request)
        response.headers[HEADER] = request.request_id
        return response
