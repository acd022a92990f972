"""What the URL addresses — verb, group, version, namespace, resource, name, subresource — read
once, for every filter after this one and for routing (upstream's WithRequestInfo)."""

from __future__ import annotations

from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.requestinfo import request_info


class WithRequestInfo:
    def __init__(self, next_handler: Handler) -> None:
        self.next = next_handler

    async def __call__(self, request: ApiRequest) -> Response:
        request.info = request_info(request.method, request.path, request.args.get("watch"))
        return await self.next(request)
