"""The gateway's own Response (gateway/request.py) lays out its headers as Quart's Response did,
which the API answered with before: the same operations give the same headers in the same order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from quart import Response as QuartResponse

from protokube.gateway.request import RequestHeaders, Response

Ops = Callable[[Any], None]


def _set_twice(r: Any) -> None:
    r.headers["Cache-Control"] = "no-cache, private"
    r.headers.add("Warning", '299 - "a"')
    r.headers.add("warning", '299 - "b"')
    r.headers["Audit-Id"] = "1"
    r.headers["WARNING"] = '299 - "c"'  # replaces the first in place, drops the second


def _delete(r: Any) -> None:
    del r.headers["Content-Type"]
    del r.headers["content-length"]


def _update(r: Any) -> None:
    r.headers.update({"Retry-After": "1", "content-type": "text/plain", "X-Number": 7})


CASES: list[tuple[dict[str, Any], Ops]] = [
    ({"response": b"{}", "status": 200, "content_type": "application/json"}, _set_twice),
    ({"response": b"", "status": 304, "headers": {"ETag": '"1"', "Vary": "Accept"}}, _delete),
    ({"response": "text", "status": 404}, _update),
    ({"response": b"x", "status": 301, "headers": {"Content-Type": "a/b", "Location": "/y"}}, _update),
    ({"response": b"x", "status": 200, "headers": {"Location": "/y"}, "content_type": "text/html"}, _set_twice),
]


@pytest.mark.parametrize(("made", "ops"), CASES)
def test_the_same_headers_in_the_same_order(made: dict[str, Any], ops: Ops) -> None:
    ours = Response(made["response"], made["status"], made.get("headers"), made.get("content_type"))
    theirs = QuartResponse(made["response"], made["status"], made.get("headers"), content_type=made.get("content_type"))
    ops(ours)
    ops(theirs)
    assert ours.headers.items() == list(theirs.headers.items())
    assert ours.status_code == theirs.status_code
    assert ours.content_length == theirs.content_length


def test_a_line_break_in_a_value_is_refused() -> None:
    with pytest.raises(ValueError, match="newline"):
        Response(b"").headers["Location"] = "/a\r\nSet-Cookie: x"


def test_request_headers_any_case_repeated_in_order() -> None:
    headers = RequestHeaders([(b"impersonate-group", b"a"), (b"Accept", b"x/y"), (b"Impersonate-Group", b"\xe9")])
    assert headers.getlist("IMPERSONATE-GROUP") == ["a", "é"]  # latin-1, in the request's order
    assert headers.get("accept") == "x/y" and headers.get("absent") is None and headers.get("absent", "") == ""
    assert headers.items() == [("impersonate-group", "a"), ("Accept", "x/y"), ("Impersonate-Group", "é")]
