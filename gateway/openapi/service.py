"""The served OpenAPI documents: each serialized once per registry state, with its ETag.

The registry can change while the server runs; every change drops what was built, and the next
request builds the documents of the new state. Nothing is built per request otherwise. The ETag
is kube-openapi's: the upper-case hex SHA-512 of the JSON bytes (the protobuf form of a document
shares its JSON form's, as upstream's does); the v3 index names each document by it (``?hash=``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import orjson

from protokube.gateway.openapi import gnostic
from protokube.gateway.openapi.documents import DocumentSet
from protokube.gateway.responses import GZIP_LEVEL
from protokube.schema.jsonencode import go_escape
from protokube.schema.registry import Registry, Resource


@dataclass(frozen=True)
class Served:
    body: bytes
    etag: str  # without quotes
    last_modified: datetime

    @functools.cached_property
    def gzipped(self) -> bytes:
        """The body gzip-compressed (made on first use, once)."""
        return gzip.compress(self.body, GZIP_LEVEL)


def _json(document: Any) -> bytes:
    """Compact JSON with sorted keys, escaped as Go's encoder escapes."""
    return go_escape(orjson.dumps(document, option=orjson.OPT_SORT_KEYS))


def _etag(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


def server_relative_url(name: str, etag: str) -> str:
    return f"/openapi/v3/{name}?{urlencode({'hash': etag})}"


class OpenAPIService:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._built: dict[str, Served] = {}
        self._documents: DocumentSet | None = None
        self._built_at = datetime.now(UTC)
        registry.subscribe(self._registry_changed)

    def _registry_changed(self, change: str, resource: Resource) -> None:
        self._built.clear()
        self._documents = None
        self._built_at = datetime.now(UTC)

    @property
    def documents(self) -> DocumentSet:
        if self._documents is None:
            self._documents = DocumentSet(self.registry)
        return self._documents

    def _cached(self, key: str, build: Callable[[], bytes], etag: Callable[[bytes], str] = _etag) -> Served:
        served = self._built.get(key)
        if served is None:
            body = build()
            served = self._built[key] = Served(body, etag(body), self._built_at)
        return served

    def v3(self, name: str) -> Served | None:
        """The v3 document of a group version (or discovery path); None for an unknown name."""
        if name not in self.documents.v3_paths:
            return None
        return self._cached("v3:" + name, lambda: _json(self.documents.v3(name)))

    def v3_index(self) -> Served:
        def build() -> bytes:
            paths = {}
            for name in self.documents.v3_paths:
                served = self.v3(name)
                assert served is not None
                paths[name] = {"serverRelativeURL": server_relative_url(name, served.etag)}
            return _json({"paths": paths})

        return self._cached("v3-index", build)

    def v2_json(self) -> Served:
        return self._cached("v2", lambda: _json(self.documents.v2()))

    def v2_protobuf(self) -> Served:
        json_form = self.v2_json()
        return self._cached(
            "v2-protobuf", lambda: gnostic.document_bytes(orjson.loads(json_form.body)), lambda _: json_form.etag
        )
