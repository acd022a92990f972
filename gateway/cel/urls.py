"""Kubernetes' CEL URL library: url(), isURL(), getScheme, getHost, getHostname, getPort,
getEscapedPath, getQuery. A URL is what Go's url.ParseRequestURI accepts: an absolute URI or an
absolute path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qs, quote, urlsplit

from celpy import celtypes

from protokube.gateway.cel.library import fail, function, method

String = celtypes.StringType


@dataclass(frozen=True)
class URL:
    parts: SplitResult

    def __str__(self) -> str:
        return self.parts.geturl()


def _parse(text: str) -> URL | None:
    if not text or any(ord(c) < 0x20 or c == "\x7f" for c in text):
        return None  # Go: invalid control character in URL
    try:
        parts = urlsplit(text, allow_fragments=False)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return None
    rest = text[len(parts.scheme) + 1 :] if parts.scheme else text
    if not rest.startswith("/") or " " in parts.netloc:
        return None  # neither an absolute URI nor an absolute path
    return URL(parts)


@function("url", String)
def url(text: String) -> Any:
    parsed = _parse(text)
    if parsed is None:
        return fail(f'URL parse error during conversion from string: parse "{text}": invalid URI for request')
    return parsed


@function("isURL", String)
def is_url(text: String) -> celtypes.BoolType:
    return celtypes.BoolType(_parse(text) is not None)


@method("getScheme", URL)
def get_scheme(value: URL) -> String:
    return String(value.parts.scheme)


@method("getHost", URL)
def get_host(value: URL) -> String:
    return String(value.parts.netloc.rpartition("@")[2])


@method("getHostname", URL)
def get_hostname(value: URL) -> String:
    host = value.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        return String(host[1 : host.find("]")])
    return String(host.partition(":")[0])


@method("getPort", URL)
def get_port(value: URL) -> String:
    host = value.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        host = host[host.find("]") + 1 :]
    return String(host.partition(":")[2])


@method("getEscapedPath", URL)
def get_escaped_path(value: URL) -> String:
    return String(quote(value.parts.path, safe="/:@!$&'()*+,;=-._~%"))


@method("getQuery", URL)
def get_query(value: URL) -> celtypes.MapType:
    query = parse_qs(value.parts.query, keep_blank_values=True)
    return celtypes.MapType({String(k): celtypes.ListType(String(v) for v in values) for k, values in query.items()})
