"""Request headers beyond kube-apiserver's MaxHeaderBytes (1 MiB, plus Go's 4 KiB of slack) get Go's
plain-text 431. The native server refuses them itself; hypercorn's parser (h11) only while the
headers are still incomplete: when the last read completes an oversized header block, it passes,
so the limit is checked here again on what arrived."""

from __future__ import annotations

from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.serving.limits import HEADER_LIMIT

GO_431 = "431 Request Header Fields Too Large"


class HeaderLimit:
    def __init__(self, next_handler: Handler) -> None:
        self.next = next_handler

    async def __call__(self, request: ApiRequest) -> Response:
        if request.headers.size(4) > HEADER_LIMIT:  # ": " and CRLF
            response = Response(GO_431, status=431, content_type="text/plain; charset=utf-8")
            response.headers["Connection"] = "close"
            return response
        return await self.next(request)
