"""/openapi/v2, /openapi/v3 and /openapi/v3/<group version>: kube-openapi's handlers.

- /openapi/v2: JSON, or gnostic protobuf for Accept ``application/com.github.proto-openapi.spec.v2
  @v1.0+protobuf`` (and its ``.v2.v1.0`` spelling); 406 with no body for anything else; gzipped
  when the client accepts it.
- /openapi/v3: the index, ``{"paths": {"apis/apps/v1": {"serverRelativeURL": ...?hash=ETAG}}}``, as
  kube-aggregator serves it: sniffed as text, Last-Modified now, no ETag.
- /openapi/v3/NAME: the document as JSON. With ``?hash=`` equal to its ETag it may be cached
  forever (``Cache-Control: public, immutable``, ``Expires`` a year ahead); with another hash,
  301 to the current URL; without, the default ``no-cache, private``. An unknown name gets an
  empty 404, as kube-aggregator's handler, in front of kube-openapi's, answers (kube-openapi's own
  empty 200 is never reached in kube-apiserver).

Every other answer carries its ETag and Last-Modified, and a matching If-None-Match (or an
If-Modified-Since not before Last-Modified) gets 304, as Go's http.ServeContent does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from protokube.gateway import errors
from protokube.gateway.negotiation.mediatypes import parse_accept
from protokube.gateway.openapi.service import OpenAPIService, Served, server_relative_url
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import accepts_gzip, not_modified

JSON = "application/json"
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
V2_PROTOBUF_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _not_modified(request: ApiRequest, served: Served) -> bool:
    """Go's checkIfNoneMatch / checkIfModifiedSince for GET and HEAD."""
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
        return "*" in tags or f'"{served.etag}"' in tags
    if_modified_since = request.headers.get("If-Modified-Since")
    return bool(if_modified_since) and _not_before(if_modified_since, served.last_modified.replace(microsecond=0))


def _not_before(http_date: str, moment: datetime) -> bool:
    """Whether an If-Modified-Since date is not before ``moment`` (False when unreadable)."""
    try:
        return moment <= parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return False


def _http_date(moment: datetime) -> str:
    return format_datetime(moment.astimezone(UTC), usegmt=True)


class OpenAPIRoutes:
    """The non-resource handler of every path below /openapi/."""

    def __init__(self, service: OpenAPIService) -> None:
        self.service = service

    async def __call__(self, request: ApiRequest) -> Response:
        assert request.info is not None
        parts = request.info.parts
        if parts == ("openapi", "v2"):
            return self.v2(request)
        if parts == ("openapi", "v3"):
            return self.index(request)
        if len(parts) > 2 and parts[1] == "v3":
            return self.v3(request, "/".join(parts[2:]))
        raise errors.path_not_found()

    def index(self, request: ApiRequest) -> Response:
        """kube-aggregator's merged index (specProxier.handleDiscovery): Go's http.ServeContent with
        the request's time as Last-Modified and no type set (sniffed as text), no ETag, no Vary."""
        now = datetime.now(UTC).replace(microsecond=0)
        headers = {"Cache-Control": "no-cache, private", "Last-Modified": _http_date(now)}
        if_modified_since = request.headers.get("If-Modified-Since")
        if if_modified_since and _not_before(if_modified_since, now):
            del headers["Last-Modified"]
            return not_modified(headers)
        headers["Accept-Ranges"] = "bytes"
        return Response(self.service.v3_index().body, 200, content_type="text/plain; charset=utf-8", headers=headers)

    def v2(self, request: ApiRequest) -> Response:
        for media in parse_accept(request.headers.get("Accept")):
            if media.matches(JSON):
                return self.serve(request, self.service.v2_json(), JSON, compress=True)
            if media.matches(V2_PROTOBUF) or media.matches(V2_PROTOBUF_DEPRECATED):
                return self.serve(request, self.service.v2_protobuf(), V2_PROTOBUF, compress=True)
        return Response(b"", 406, headers={"Vary": "Accept"})

    def v3(self, request: ApiRequest, name: str) -> Response:
        served = self.service.v3(name)
        if served is None:  # kube-aggregator's handler: no group version of that name, before kube-openapi's
            response = Response(b"", 404, headers={"Cache-Control": "no-cache, private"})
            del response.headers["Content-Type"]
            return response
        if not any(media.matches(JSON) for media in parse_accept(request.headers.get("Accept"))):
            return Response(b"", 406, headers={"Vary": "Accept"})
        wanted = request.args.get("hash")
        if wanted and wanted != served.etag:
            location = server_relative_url(name, served.etag)
            body = f'<a href="{location}">Moved Permanently</a>.\n\n'  # Go's http.Redirect
            headers = {"Location": location, "Vary": "Accept", "Etag": f'"{served.etag}"'}
            return Response(body, 301, content_type="text/html; charset=utf-8", headers=headers)
        immutable = {}
        if wanted:
            # A year ahead, in Go's time.RFC1123 layout (the server's zone, UTC).
            expires = (datetime.now(UTC) + timedelta(days=365)).strftime("%a, %d %b %Y %H:%M:%S UTC")
            immutable = {"Cache-Control": "public, immutable", "Expires": expires}
        return self.serve(request, served, JSON, immutable)

    def serve(
        self,
        request: ApiRequest,
        served: Served,
        content_type: str,
        headers: dict[str, str] | None = None,
        compress: bool = False,
    ) -> Response:
        base = {
            "Cache-Control": "no-cache, private",
            "Etag": f'"{served.etag}"',
            "Last-Modified": _http_date(served.last_modified),
            "Vary": "Accept",
            **(headers or {}),
        }
        if _not_modified(request, served):
            base.pop("Last-Modified")
            return not_modified(base)
        body = served.body
        if compress and accepts_gzip(request.headers.get("Accept-Encoding")):
            body = served.gzipped
            base["Content-Encoding"] = "gzip"
            base["Vary"] = "Accept, Accept-Encoding"
        return Response(body, 200, content_type=content_type, headers={**base, "Accept-Ranges": "bytes"})
