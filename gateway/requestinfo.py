"""What a request addresses, read from its URL and method (upstream's RequestInfoFactory).

/api/v1/namespaces/NS/pods/NAME/status → group "", version v1, namespace NS, resource pods,
name NAME, subresource status, verb from the method (get/list/watch, create, update, patch,
delete/deletecollection).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from protokube.gateway import errors

# Subresources of a namespace object itself (not namespaced resources of that name).
NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})

# Parsed paths are kept (a client asks for the same objects again), up to this many of up to this length.
MEMO_SIZE: Final = 4096
MEMO_PATH_LENGTH: Final = 256

# Go's strconv.ParseBool.
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(name: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise errors.bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax ({name})')


# Not frozen: made per request, and a frozen dataclass costs three times as much to make (README).
@dataclass(slots=True)
class RequestInfo:
    is_resource_request: bool
    path: str
    verb: str
    api_prefix: str = ""  # "api" or "apis"
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    parts: tuple[str, ...] = ()
    subpath: str = ""  # what follows the subresource (pods/NAME/proxy/SUBPATH)


def _verb_for(method: str, has_name: bool, watch: bool) -> str:
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if has_name else "list"
    if method == "DELETE":
        return "delete" if has_name else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def request_info(method: str, path: str, watch_param: str | None) -> RequestInfo:
    """Parse a request path; non-resource paths (/version, /api, /apis/apps) are flagged as such."""
    watch = watch_param is not None and watch_param.lower() not in ("false", "0")
    if len(path) > MEMO_PATH_LENGTH:
        return _parse(method, path, watch)
    return _memo(method, path, watch)


def _parse(method: str, path: str, watch: bool) -> RequestInfo:
    parts = tuple(p for p in path.strip("/").split("/") if p)
    if not parts or parts[0] not in ("api", "apis"):
        return RequestInfo(False, path, method.lower(), parts=parts)
    prefix, rest = parts[0], list(parts[1:])
    group = ""
    if prefix == "apis":
        if not rest:
            return RequestInfo(False, path, method.lower(), prefix, parts=parts)
        group = rest.pop(0)
    if not rest:
        return RequestInfo(False, path, method.lower(), prefix, group, parts=parts)
    version = rest.pop(0)
    if not rest:
        return RequestInfo(False, path, method.lower(), prefix, group, version, parts=parts)

    if rest[0] == "watch":  # deprecated /api/v1/watch/... form
        watch = True
        rest = rest[1:]
        if not rest:
            return RequestInfo(False, path, method.lower(), prefix, group, version, parts=parts)

    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    subpath = "/".join(rest[3:])  # only proxy subresources take one (the router decides)
    verb = _verb_for(method, bool(name), watch)
    return RequestInfo(True, path, verb, prefix, group, version, namespace, resource, name, subresource, parts, subpath)


_memo: Final = functools.lru_cache(maxsize=MEMO_SIZE)(_parse)
