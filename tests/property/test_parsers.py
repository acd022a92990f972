"""Parsers of what a client puts in a URL or a header: label and field selectors, continue tokens,
list/write/delete options, resourceVersion, Accept and Content-Type, request paths. Each answers a
result or its documented error (StatusError 4xx, SelectorError, ContinueTokenError), nothing else."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from protokube.gateway import params, selectors
from protokube.gateway.errors import StatusError
from protokube.gateway.negotiation import mediatypes, negotiate
from protokube.gateway.negotiation.negotiate import Formats
from protokube.gateway.requestinfo import request_info
from protokube.gateway.storage import continuetoken

from .strategies import ANY_CHAR, INTEGERS, JSON_VALUES, STRINGS, URL_TEXT

SELECTOR_PIECES = st.sampled_from(
    ["a", "b", "app", "x.io/k", "=", "==", "!=", "!", ",", " ", "in", "notin", "(", ")", "1", "-", "\\", "\\,", "é"]
)
SELECTOR_TEXT = st.one_of(st.lists(SELECTOR_PIECES, max_size=12).map("".join), URL_TEXT)
SELECTABLE = ("metadata.name", "metadata.namespace", "spec.nodeName", "status.phase")


def _is_client_error(err: StatusError) -> None:
    assert 400 <= err.code < 500, err.status
    assert err.status.message


@given(text=SELECTOR_TEXT, labels=st.dictionaries(SELECTOR_PIECES, SELECTOR_PIECES, max_size=3))
@example(text="a in (b", labels={})
@example(text="!", labels={})
def test_label_selectors(text: str, labels: dict[str, str]) -> None:
    try:
        selector = selectors.label_selector(text)
    except StatusError as err:
        _is_client_error(err)
        return
    assert selector.matches(labels) in (True, False)
    # What parses once parses again from its requirements (no state hidden in the text).
    assert selectors.label_selector(text) == selector


@given(text=SELECTOR_TEXT, fields=st.dictionaries(st.sampled_from(SELECTABLE), STRINGS, max_size=3))
@example(text="metadata.name=a\\", fields={})
@example(text="metadata.name==", fields={})
def test_field_selectors(text: str, fields: dict[str, str]) -> None:
    try:
        selector = selectors.field_selector(text, SELECTABLE)
    except StatusError as err:
        _is_client_error(err)
        return
    assert selector.matches(fields) in (True, False)
    name = selector.exact_name()
    assert name is None or isinstance(name, str)


@given(revision=st.integers(-(2**63) + 1, 2**63 - 1).filter(bool), start=st.text(max_size=30))
def test_continue_tokens_round_trip(revision: int, start: str) -> None:
    key = "/" + start
    try:
        decoded = continuetoken.decode(continuetoken.encode(revision, start))
    except continuetoken.ContinueTokenError:
        assert not start or ".." in start or "//" in start or start.endswith("/") or "/." in key
        return
    assert decoded[0] == revision


@st.composite
def _tokens(draw: st.DrawFn) -> str:
    """Tokens as clients forge them: arbitrary text, or base64 of arbitrary JSON near the real shape."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.text(ANY_CHAR, max_size=40))
    payload: Any = {"v": draw(st.sampled_from([continuetoken.VERSION, "x"])), "rv": draw(JSON_VALUES | INTEGERS)}
    payload["start"] = draw(JSON_VALUES | STRINGS)
    if kind == 2:
        payload = draw(JSON_VALUES)
    raw = json.dumps(payload).encode("utf-8", "surrogatepass")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=" if draw(st.booleans()) else "")


@given(token=_tokens())
def test_forged_continue_tokens(token: str) -> None:
    try:
        revision, start = continuetoken.decode(token)
    except continuetoken.ContinueTokenError as err:
        assert str(err).startswith(continuetoken.INVALID)
        return
    assert 0 < abs(revision) < 2**63
    start.encode()  # valid text


LIST_PARAMS = st.dictionaries(
    st.sampled_from(
        [
            "labelSelector",
            "fieldSelector",
            "watch",
            "allowWatchBookmarks",
            "resourceVersion",
            "resourceVersionMatch",
            "timeoutSeconds",
            "limit",
            "continue",
            "sendInitialEvents",
        ]
    ),
    st.one_of(URL_TEXT, st.sampled_from(["Exact", "NotOlderThan", "99999999999999999999", "18446744073709551616"])),
    max_size=6,
)


@given(query=LIST_PARAMS)
@example(query={"resourceVersion": "99999999999999999999", "resourceVersionMatch": "Exact"})
def test_list_options(query: dict[str, str]) -> None:
    try:
        options = params.validate_list_options(params.list_options(query))
    except StatusError as err:
        _is_client_error(err)
        return
    revision = params.parse_resource_version(options.resource_version)
    assert revision is None or 0 <= revision < 2**64


WRITE_PARAMS = st.dictionaries(
    st.sampled_from(
        [
            "dryRun",
            "fieldManager",
            "fieldValidation",
            "force",
            "gracePeriodSeconds",
            "orphanDependents",
            "propagationPolicy",
        ]
    ),
    st.lists(st.one_of(st.sampled_from(["All", "Strict", "Warn", "Ignore", "true"]), URL_TEXT), max_size=2),
    max_size=5,
)


@pytest.mark.parametrize("kind", ["CreateOptions", "UpdateOptions", "PatchOptions"])
@given(
    query=WRITE_PARAMS, patch_type=st.sampled_from(["", "application/apply-patch+yaml", "application/merge-patch+json"])
)
def test_write_options(kind: str, query: dict[str, list[str]], patch_type: str) -> None:
    try:
        params.write_options(query, kind, patch_type)
    except StatusError as err:
        _is_client_error(err)


@given(query=WRITE_PARAMS)
def test_delete_options(query: dict[str, list[str]]) -> None:
    try:
        options = params.delete_options_from_query(query)
    except StatusError as err:
        _is_client_error(err)
        return
    assert options.grace_period_seconds is None or -(2**63) <= options.grace_period_seconds < 2**63


@given(value=st.one_of(URL_TEXT, INTEGERS.map(str)))
def test_resource_versions(value: str) -> None:
    try:
        revision = params.parse_resource_version(value)
    except StatusError as err:
        _is_client_error(err)
        return
    assert revision is None or 0 <= revision < 2**64


MEDIA_PIECES = st.sampled_from(
    [
        "application/json",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        "application/cbor",
        "*/*",
        "application/*",
        "text/plain",
        ";q=0",
        ";q=0.5",
        ";q=nan",
        ";q=1e999",
        ";as=Table;g=meta.k8s.io;v=v1",
        ";as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
        ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        ";stream=watch",
        ";charset=utf-8",
        ",",
        " ",
        "/",
        ";",
        "=",
        '"',
    ]
)
# Header values arrive as Latin-1 text.
HEADER = st.one_of(
    st.lists(MEDIA_PIECES, max_size=8).map("".join), st.text(st.characters(max_codepoint=255), max_size=40), st.none()
)
FORMATS = st.builds(Formats, cbor=st.booleans(), protobuf=st.booleans())


@given(accept=HEADER, formats=FORMATS, pretty=st.booleans())
def test_accept_negotiation(accept: str | None, formats: Formats, pretty: bool) -> None:
    for allowed in (negotiate.SINGLE, negotiate.COLLECTION, negotiate.OBJECT_ONLY):
        try:
            target = negotiate.response_target(accept, pretty, formats, allowed)
        except StatusError as err:
            _is_client_error(err)
            continue
        assert target.representation in allowed
    try:
        watch = negotiate.watch_target(accept, pretty, formats)
    except StatusError as err:
        _is_client_error(err)
        return
    assert watch.encoder.watch_content_type


@given(content_type=HEADER, formats=FORMATS)
def test_content_types(content_type: str | None, formats: Formats) -> None:
    try:
        media_type = negotiate.request_media_type(content_type, formats)
    except StatusError as err:
        _is_client_error(err)
        return
    assert media_type in formats.media_types or media_type == mediatypes.JSON


PATH_PIECES = st.sampled_from(
    ["/", "api", "apis", "v1", "apps", "namespaces", "default", "pods", "p", "status", "..", ".", "%2F", "watch", ""]
)


@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "FOO"]),
    path=st.one_of(st.lists(PATH_PIECES, max_size=9).map("/".join), URL_TEXT),
    watch=st.one_of(st.none(), URL_TEXT),
)
def test_request_info(method: str, path: str, watch: str | None) -> None:
    try:
        info = request_info(method, path, watch)
    except StatusError as err:
        _is_client_error(err)
        return
    assert info.verb
