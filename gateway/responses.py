"""Building HTTP responses: bodies from encoders, Status errors, warnings and standard headers."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from typing import Final

from protokube.gateway.errors import PageNotFound, StatusError
from protokube.gateway.negotiation.negotiate import Encoder
from protokube.gateway.request import ApiRequest, Response
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import GroupVersionKind
from protokube.schema.validtext import valid_text

STATUS_GVK: Final = GroupVersionKind("", "v1", "Status")
# APIResponseCompression: responses from this size up are gzipped (upstream's threshold, 128 KiB).
GZIP_THRESHOLD: Final = 128 * 1024
GZIP_LEVEL: Final = 4
# Upstream caps all Warning headers of a response at 4 KiB, and each at 256 runes when over it.
WARNINGS_TOTAL_LIMIT: Final = 4096
WARNING_ITEM_LIMIT: Final = 256


def accepts_gzip(header: str | None) -> bool:
    for item in (header or "").split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() == "gzip":
            return "q=0" not in params.replace(" ", "") or "q=0." in params.replace(" ", "")
    return False


def respond(
    request: ApiRequest, body: bytes, code: int, encoder: Encoder, headers: dict[str, str] | None = None
) -> Response:
    """A complete (non-streaming) response; gzip-compressed when the client accepts it and it is big."""
    compress = len(body) >= GZIP_THRESHOLD and accepts_gzip(request.header("Accept-Encoding"))
    if compress:
        body = gzip.compress(body, GZIP_LEVEL)
    response = Response(body, status=code, content_type=encoder.content_type)
    response.headers["Cache-Control"] = "no-cache, private"
    if compress:
        response.headers["Content-Encoding"] = "gzip"
        response.headers["Vary"] = "Accept-Encoding"
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def not_modified(headers: dict[str, str]) -> Response:
    """A 304 as Go's net/http writes one: the validators and caching headers given, no Content-Type
    and no Content-Length (which would have to be the full body's; caches merge a 304's headers into
    the response they keep)."""
    response = Response(b"", 304, headers=headers)
    del response.headers["Content-Type"]
    del response.headers["Content-Length"]
    return response


def status_response(request: ApiRequest, error: StatusError, encoder: Encoder) -> Response:
    if isinstance(error, PageNotFound):
        response = Response(b"404 page not found\n", 404, content_type="text/plain; charset=utf-8")
        response.headers.update({"Cache-Control": "no-cache, private", "X-Content-Type-Options": "nosniff"})
        response.headers.update(error.headers)
        return response
    body = encoder.message(error.status, STATUS_GVK)
    return respond(request, body, error.code, encoder, error.headers)


def success_status(details: meta.StatusDetails) -> meta.Status:
    status = meta.Status(status="Success")
    status.metadata.SetInParent()
    status.details.CopyFrom(details)
    return status


def _quote(text: str) -> str:
    """upstream's makeQuotedString, for text that is valid UTF-8 without control characters
    (a header cannot carry those; they become spaces)."""
    text = _CONTROL.sub(" ", valid_text(text))
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")


def add_warnings(response: Response, warnings: Iterable[str]) -> None:
    """Warning: 299 - "text" headers, within upstream's size limits."""
    if not warnings:  # most answers carry none
        return
    items = list(dict.fromkeys(warnings))
    if not items:
        return
    if sum(len(w) for w in items) > WARNINGS_TOTAL_LIMIT:
        items = [w if len(w) <= WARNING_ITEM_LIMIT else w[:WARNING_ITEM_LIMIT] for w in items]
    total = 0
    for warning in items:
        total += len(warning)
        if total > WARNINGS_TOTAL_LIMIT:
            break
        response.headers.add("Warning", f"299 - {_quote(warning)}")
