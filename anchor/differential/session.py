"""One server's side of a differential run: requests made through an admin HTTPS client, each
answer kept as a normalized Observation under the scenario's name for it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx
from google.protobuf.message import DecodeError, Message

from anchor.differential import normalize
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta_pb2
from protokube.schema import descriptors, envelope, jsonencode
from protokube.schema.registry import GroupVersionKind, registry

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
PROTOBUF = envelope.CONTENT_TYPE


@dataclass(slots=True)
class Observation:
    """A response as compared: status, headers and body, normalized."""

    status: int
    headers: dict[str, str]
    body: Any


@dataclass(slots=True)
class Session:
    """A server under test: its client and what the scenarios observed of it, by name."""

    label: str
    client: httpx.Client
    observed: dict[str, Observation] = field(default_factory=dict)

    def call(self, name: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request, observed as ``name``; kwargs as httpx.Client.request takes them."""
        response = self.client.request(method, path, **kwargs)
        self.observe(name, response)
        return response

    def observe(self, name: str, response: httpx.Response, body: Any = None) -> None:
        if name in self.observed:
            raise ValueError(f"observation {name!r} made twice")
        shown = decode(response) if body is None else body
        self.observed[name] = Observation(
            response.status_code, normalize.headers(dict(response.headers)), normalize.body(shown)
        )

    def watch(self, name: str, path: str, params: dict[str, str], until: int = 0) -> list[dict[str, Any]]:
        """A watch's events (JSON frames), read until the server ends it (``timeoutSeconds`` in
        params) or ``until`` events came; observed as the list of events."""
        events: list[dict[str, Any]] = []
        with self.client.stream("GET", path, params={**params, "watch": "true"}) as response:
            if response.status_code == 200:
                for line in response.iter_lines():
                    if line.strip():
                        events.append(json.loads(line))
                    if until and len(events) >= until:
                        break
            else:
                response.read()
            self.observe(name, response, events if response.status_code == 200 else None)
        return events


@cache
def _kinds() -> dict[GroupVersionKind, str]:
    return registry().kinds


def _message_for(api_version: str, kind: str) -> type[Message] | None:
    """The compiled message of a kind in an apiVersion (meta.k8s.io's own kinds included)."""
    group, _, version = api_version.rpartition("/")
    name = _kinds().get(GroupVersionKind(group, version, kind))
    if not name and api_version in ("v1", "meta.k8s.io/v1"):
        name = META + kind
    try:
        return descriptors.message_class(name) if name else None
    except KeyError:
        return None


def _envelope(data: bytes) -> dict[str, Any]:
    """A protobuf envelope decoded by protokube's codecs, ``_protobuf`` naming its typeMeta."""
    try:
        unknown = envelope.unwrap(data)
    except envelope.EnvelopeError as err:
        return {"_unreadable_protobuf": str(err)}
    api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
    message_class = _message_for(api_version, kind)
    if message_class is None:
        return {"_protobuf": f"{api_version} {kind}", "_raw": "<no compiled message>"}
    message = message_class()
    message.ParseFromString(unknown.raw)
    return {"_protobuf": f"{api_version} {kind}", **jsonencode.object_to_dict(message, kind, api_version)}


def _watch_frames(data: bytes) -> list[dict[str, Any]]:
    """A protobuf watch stream: frames of a 4-byte big-endian length and a WatchEvent (not enveloped;
    its object is)."""
    events = []
    while len(data) >= 4:
        size = int.from_bytes(data[:4], "big")
        frame, data = data[4 : 4 + size], data[4 + size :]
        try:
            event = meta_pb2.WatchEvent()
            event.ParseFromString(frame)
        except DecodeError as err:
            events.append({"_unreadable_frame": str(err)})
            continue
        events.append({"type": event.type, "object": _envelope(event.object.raw)})
    return events


def decode(response: httpx.Response) -> Any:
    """The body as JSON: parsed JSON, protobuf decoded by protokube's codecs (a watch stream as its
    list of events), or a short description of anything else."""
    content_type = response.headers.get("content-type", "")
    data = response.content
    if content_type.startswith(PROTOBUF):
        return _watch_frames(data) if "stream=watch" in content_type else _envelope(data)
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return {"_text": normalize.text(data.decode(errors="replace"))[:300]}
