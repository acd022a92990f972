"""A request's query parameters (gateway/request.py QueryArgs) read as werkzeug's MultiDict of the
same parse read them before: first values, every value in order, blank and repeated parameters;
the parse kept for a query string is never changed by what a handler does with its answers."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from werkzeug.datastructures import MultiDict

from protokube.gateway.request import MEMO_QUERY_LENGTH, ApiRequest, QueryArgs, RequestBody

QUERIES = [
    "",
    "resourceVersion=0",
    "watch=1&resourceVersion=12&allowWatchBookmarks=true",
    "dryRun=All&dryRun=All&fieldManager=kubectl",
    "pretty&limit=&labelSelector=a%3Db%2Cc+in+(x,y)",
    "a=1&b=2&a=3&a=",
    "exclude=etcd&exclude=ping&verbose",
    "x=%ZZ&y=%E2%82%AC",
    "n=" + "v" * (MEMO_QUERY_LENGTH + 10) + "&n=2",  # too long to be kept: parsed each time
]
NAMES = ("resourceVersion", "watch", "dryRun", "pretty", "limit", "labelSelector", "a", "b", "exclude", "verbose")
NAMES += ("x", "y", "n", "absent")


def request(query: str) -> ApiRequest:
    scope = {"method": "GET", "path": "/api", "query_string": query.encode("latin-1"), "headers": [], "scheme": "http"}
    return ApiRequest(scope, RequestBody(complete=True))


@pytest.mark.parametrize("query", QUERIES)
def test_reads_as_the_multidict_of_the_same_parse(query: str) -> None:
    expected = MultiDict(parse_qsl(query, keep_blank_values=True))
    args = QueryArgs(query)
    for name in NAMES:
        assert args.get(name) == expected.get(name), name
        assert args.get(name, "default") == expected.get(name, "default"), name
        assert args.getlist(name) == expected.getlist(name), name
        assert (name in args) == (name in expected), name
    assert list(args) == list(expected)
    assert len(args) == len(expected)
    assert args.lists() == expected.to_dict(flat=False)
    made = request(query)
    assert made.query() == {k: v[0] for k, v in expected.to_dict(flat=False).items()}
    assert made.query_lists() == expected.to_dict(flat=False)


@pytest.mark.parametrize("query", ["a=1&a=2", "n=" + "v" * (MEMO_QUERY_LENGTH + 10)])
def test_answers_are_copies(query: str) -> None:
    """What a handler gets may be changed by it; the next request with that query reads it afresh."""
    first = request(query)
    first.args.getlist("a").append("changed")
    first.query_lists().setdefault("a", []).append("changed")
    first.query().clear()
    again = QueryArgs(query)
    assert again.lists() == MultiDict(parse_qsl(query, keep_blank_values=True)).to_dict(flat=False)
