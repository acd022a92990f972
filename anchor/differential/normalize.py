"""What two servers may rightly answer differently, made equal: uids, timestamps, resourceVersions,
continue tokens, generated names, allocated cluster IPs and the numbers inside messages that are
resourceVersions; and the headers whose values are per request (dates, audit ids, APF uids)."""

from __future__ import annotations

import re
from typing import Any

UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# The projected token volume the ServiceAccount admission plugin adds has a random suffix.
TOKEN_VOLUME = re.compile(r"kube-api-access-[a-z0-9]{5}")
# Listening addresses (discovery's serverAddressByClientCIDRs): each server has its own free port.
LOOPBACK_PORT = re.compile(r"127\.0\.0\.1:\d+")
# Table cells that are ages ("3s", "2m10s") or allocated service addresses.
AGE = re.compile(r"\d+[smhdy](\d+[smh])?")
CLUSTER_IP = re.compile(r"10\.\d+\.\d+\.\d+")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
# A resourceVersion inside a message: "resource version: 12 (34)", "current: 56", "resourceVersion 7".
MESSAGE_RV = re.compile(r"(?i)((?:resource ?version|current|revision)[:= ]*\"?)(\d+)|\((\d+)\)")
PER_REQUEST_KEYS = frozenset({"uid", "resourceVersion", "continue", "creationTimestamp", "deletionTimestamp", "time"})
IP_KEYS = frozenset({"clusterIP", "clusterIPs"})
# Headers compared by name only (their values differ per request or per process).
VALUE_FREE_HEADERS = frozenset(
    {"audit-id", "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid", "last-modified", "etag"}
)
# Framing and connection headers: a property of the HTTP server and the request, not of the API.
IGNORED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date"})


def text(value: str) -> str:
    """A string with uids and timestamps replaced."""
    value = LOOPBACK_PORT.sub("127.0.0.1:<port>", TIME.sub("<time>", UID.sub("<uid>", value)))
    return TOKEN_VOLUME.sub("kube-api-access-<random>", value)


def _cell(value: Any) -> Any:
    if isinstance(value, str) and AGE.fullmatch(value):
        return "<age>"
    if isinstance(value, str) and CLUSTER_IP.fullmatch(value):
        return "<ip>"
    return body(value)


def message(value: str) -> str:
    """A Status message or cause: also its resourceVersions."""
    return MESSAGE_RV.sub(lambda m: f"{m.group(1)}<rv>" if m.group(1) is not None else "(<rv>)", text(value))


def _generated_name(obj: dict[str, Any]) -> None:
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        prefix, name = meta.get("generateName"), meta.get("name")
        if isinstance(prefix, str) and prefix and isinstance(name, str) and name.startswith(prefix):
            meta["name"] = prefix + "<generated>"


def body(value: Any, key: str = "") -> Any:
    """A JSON value with its per-request parts replaced by placeholders (kept apart from empty ones)."""
    if isinstance(value, dict):
        out = {k: body(v, k) for k, v in value.items()}
        _generated_name(out)
        if out.get("kind") == "Status" and isinstance(out.get("message"), str):
            out["message"] = message(value["message"])
        return out
    if isinstance(value, list):
        return [_cell(v) for v in value] if key == "cells" else [body(v, key) for v in value]
    if isinstance(value, str):
        if key in PER_REQUEST_KEYS and value:
            return f"<{key}>"
        if key in IP_KEYS and value not in ("", "None"):
            return "<ip>"
        if key in ("message", "reason", "field"):
            return message(value)
        return text(value)
    return value


def headers(raw: dict[str, str]) -> dict[str, str]:
    """Response headers by lower-case name: framing ones dropped, per-request values replaced."""
    out: dict[str, str] = {}
    for name, value in raw.items():
        name = name.lower()
        if name in IGNORED_HEADERS:
            continue
        out[name] = "<set>" if name in VALUE_FREE_HEADERS else message(value)
    return out
