"""Aggregated discovery (apidiscovery.k8s.io v2 and v2beta1): every group version with its resources
in one document — the core group at /api, all others at /apis — asked for with
``Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``.

The documents are generated from the registry, cached until it changes, and served with an ETag
(the SHA-512 of the v2 document, as upstream's) that an ``If-None-Match`` turns into a 304. A
clause of the Accept header without ``as=`` asks for the legacy documents instead; a clause asking
for any other ``as=`` is skipped (upstream's DiscoveryEndpointRestrictions).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway.handlers.discovery import SubresourceEntry, subresource_entries
from protokube.gateway.negotiation import mediatypes
from protokube.gateway.negotiation.encoders import JSONEncoder
from protokube.gateway.negotiation.negotiate import Encoder, Formats
from protokube.gateway.registry.apiservicepriorities import discovery_order
from protokube.gateway.request import ApiRequest, Response
from protokube.gateway.responses import not_modified, respond
from protokube.gen.k8s.io.api.apidiscovery.v2 import types_pb2 as v2
from protokube.gen.k8s.io.api.apidiscovery.v2beta1 import types_pb2 as v2beta1
from protokube.schema.registry import GroupVersionKind, Registry, Resource

GROUP, KIND = "apidiscovery.k8s.io", "APIGroupDiscoveryList"
MESSAGES: dict[str, type[Message]] = {"v2": v2.APIGroupDiscoveryList, "v2beta1": v2beta1.APIGroupDiscoveryList}
CORE, GROUPS = "api", "apis"  # the two documents, by the path that serves them
FRESHNESS_CURRENT = "Current"


@dataclass(frozen=True, slots=True)
class Wanted:
    """An aggregated document in one of its versions and formats."""

    version: str  # v2 or v2beta1
    media_type: str

    def content_type(self, encoder: Encoder) -> str:
        return f"{encoder.content_type};g={GROUP};v={self.version};as={KIND}"


def wanted(accept: str | None, formats: Formats) -> Wanted | None:
    """The aggregated document the Accept header asks for, or None for the legacy one."""
    for media in mediatypes.parse_accept(accept):
        media_type = next((t for t in formats.media_types if media.matches(t)), None)
        if media_type is None:
            continue
        if "as" not in media.params:
            return None
        params = media.params
        if params["as"] == KIND and params.get("g") == GROUP and params.get("v") in MESSAGES:
            return Wanted(params["v"], media_type)
    return None


def _resource(resource: Resource, subresources: list[SubresourceEntry]) -> v2.APIResourceDiscovery:
    entry = v2.APIResourceDiscovery(
        resource=resource.plural,
        scope="Namespaced" if resource.namespaced else "Cluster",
        singularResource=resource.singular,
        verbs=sorted(resource.verbs),
        shortNames=resource.short_names,
        categories=resource.categories,
    )
    entry.responseKind.kind = resource.kind
    for sub in subresources:
        added = entry.subresources.add(subresource=sub.name, verbs=sub.verbs)
        added.responseKind.SetInParent()
        added.responseKind.group, added.responseKind.version = sub.group, sub.version
        added.responseKind.kind = sub.kind
    return entry


def group_discovery_list(registry: Registry, document: str) -> v2.APIGroupDiscoveryList:
    """The v2 document of /api (the core group) or /apis (every other group)."""
    groups = [(g, vs) for g, vs in discovery_order(registry.group_versions()) if (g == "") == (document == CORE)]
    result = v2.APIGroupDiscoveryList()
    result.metadata.SetInParent()
    for group, versions in groups:
        entry = result.items.add()
        entry.metadata.name = group
        for version in versions:
            version_entry = entry.versions.add(version=version, freshness=FRESHNESS_CURRENT)
            for resource in registry.resources_in(group, version):
                version_entry.resources.append(_resource(resource, subresource_entries(resource)))
    return result


class AggregatedDiscovery:
    """The two documents, encoded on demand and kept until the registry changes."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._documents: dict[str, tuple[v2.APIGroupDiscoveryList, str]] = {}
        self._bodies: dict[tuple[str, Wanted, bool], bytes] = {}
        registry.subscribe(lambda change, resource: self._forget())

    def _forget(self) -> None:
        self._documents.clear()
        self._bodies.clear()

    def _document(self, document: str) -> tuple[v2.APIGroupDiscoveryList, str]:
        cached = self._documents.get(document)
        if cached is None:
            message = group_discovery_list(self.registry, document)
            etag = hashlib.sha512(JSONEncoder().message(message, _gvk("v2"))).hexdigest().upper()
            cached = self._documents[document] = (message, f'"{etag}"')
        return cached

    def _body(self, document: str, want: Wanted, encoder: Encoder, pretty: bool) -> bytes:
        key = (document, want, pretty)
        body = self._bodies.get(key)
        if body is None:
            message: Message = self._document(document)[0]
            if want.version != "v2":  # the same wire shape in another package
                message = MESSAGES[want.version].FromString(message.SerializeToString())
            body = self._bodies[key] = encoder.message(message, _gvk(want.version))
        return body

    def respond(self, request: ApiRequest, document: str, want: Wanted, encoder: Encoder) -> Response:
        _, etag = self._document(document)
        headers = {"ETag": etag, "Vary": "Accept", "Cache-Control": "public"}
        if request.headers.get("If-None-Match") == etag:
            return not_modified(headers)
        body = self._body(document, want, encoder, request.pretty)
        response = respond(request, body, 200, encoder, headers)
        response.headers["Content-Type"] = want.content_type(encoder)
        return response


def _gvk(version: str) -> GroupVersionKind:
    return GroupVersionKind(GROUP, version, KIND)
