"""OpenAPI: the v3 document of apps/v1 (what kubectl's default validation fetches), first and after.

On a fresh gateway, the first GET builds and serializes the document; later GETs must be served
from the cache (the document is built once per registry state), and a GET with the ETag in
If-None-Match, as kubectl's HTTP cache sends it, answers 304 without a body. Limits in the same
run: the first request for the cached one, the full body for the 304. Goals: a repeated GET at
least 5× faster than the first; a 304 no slower than the full body (on loopback, sending the body
costs little next to the request's fixed path through the filter chain: the 304's gain is the
650 KiB a client neither receives nor parses).
"""

from __future__ import annotations

import tempfile
import time
from http.client import HTTPConnection
from pathlib import Path

from bench.common import Row, at_least, fmt_bytes, fmt_ms, gateway, percentile, ratio_row

PATH = "/openapi/v3/apis/apps/v1"
CACHED_GOAL = 5.0
NOT_MODIFIED_GOAL = 1.0


def _timed_get(conn: HTTPConnection, headers: dict[str, str]) -> tuple[float, int, bytes, str]:
    start = time.perf_counter()
    conn.request("GET", PATH, headers=headers)
    response = conn.getresponse()
    body = response.read()
    return time.perf_counter() - start, response.status, body, response.getheader("Etag") or ""


def run(quick: bool) -> dict:
    requests = 30 if quick else 300
    with tempfile.TemporaryDirectory(prefix="bench-openapi-") as tmp, gateway(Path(tmp) / "data") as gw:
        conn = HTTPConnection(gw.host, gw.port, timeout=60)
        try:
            first, status, body, etag = _timed_get(conn, {})
            assert status == 200 and etag, status
            full, not_modified = [], []
            for _ in range(requests):
                seconds, status, _, _ = _timed_get(conn, {})
                assert status == 200
                full.append(seconds)
                seconds, status, empty, _ = _timed_get(conn, {"If-None-Match": etag})
                assert status == 304 and not empty
                not_modified.append(seconds)
        finally:
            conn.close()
    return {
        "first_ms": first * 1000,
        "full_ms_p50": percentile(full, 0.5) * 1000,
        "not_modified_ms_p50": percentile(not_modified, 0.5) * 1000,
        "document_bytes": len(body),
        "requests": requests,
    }


def rows(results: dict) -> list[Row]:
    first, full, not_modified = results["first_ms"], results["full_ms_p50"], results["not_modified_ms_p50"]
    size = fmt_bytes(results["document_bytes"])
    return [
        ratio_row(
            "openapi",
            f"v3 apps/v1 ({size}), repeated GET, p50",
            fmt_ms(full),
            f"first GET {fmt_ms(first)}",
            first / full,
            at_least,
            CACHED_GOAL,
        ),
        ratio_row(
            "openapi",
            "v3 apps/v1, If-None-Match (304), p50",
            fmt_ms(not_modified),
            f"full body {fmt_ms(full)}",
            full / not_modified,
            at_least,
            NOT_MODIFIED_GOAL,
        ),
    ]
