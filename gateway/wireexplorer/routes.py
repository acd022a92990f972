"""/debug/wire: the explorer's page and files, and POST /debug/wire/decode.

The decode endpoint takes raw bytes (the page sends what it was given, or what it fetched from this
server as protobuf) and answers the annotated tree that ``protokube wire`` prints — the same decoder
(protokube/schema/wire.py) — with each node's byte range. For an enveloped object of a served kind it
adds the object's JSON and the sizes of its JSON, YAML, CBOR and protobuf encodings, and what each
top-level field costs in JSON and in protobuf. It decodes only what it is given; it fetches nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import yaml
from google.protobuf.message import DecodeError as ProtobufDecodeError

from protokube.gateway import errors
from protokube.gateway.codecs import codec_for
from protokube.gateway.request import ApiRequest, Response
from protokube.schema import envelope, wire
from protokube.schema.registry import GroupVersionKind, Registry

STATIC = Path(__file__).with_name("static")
FILES = {"explorer.js": "text/javascript; charset=utf-8", "explorer.css": "text/css; charset=utf-8"}
FORMS = ("auto", "envelope", "watch", "message")
Route = Callable[[ApiRequest], Awaitable[Response]]


def _file(name: str, content_type: str) -> Route:
    body = (STATIC / name).read_bytes()

    async def serve(request: ApiRequest) -> Response:
        response = Response(body, 200, content_type=content_type)
        response.headers["Cache-Control"] = "no-cache, private"
        return response

    return serve


def get_routes() -> dict[tuple[str, ...], Route]:
    routes = {("debug", "wire"): _file("index.html", "text/html; charset=utf-8")}
    routes.update({("debug", "wire", name): _file(name, kind) for name, kind in FILES.items()})
    return routes


def post_routes(registry: Registry) -> dict[tuple[str, ...], Route]:
    async def decode(request: ApiRequest) -> Response:
        data = await request.body()
        query = request.query()
        form = query.get("form") or "auto"
        if form not in FORMS:
            raise errors.bad_request(f'form: unsupported value "{form}": supported values: {", ".join(FORMS)}')
        if not data:
            raise errors.bad_request("no bytes to decode: send them as the request body")
        try:
            root = wire.decode(data, form, query.get("type") or None)
        except wire.WireError as err:
            raise errors.bad_request(f"not protobuf wire format: {err}") from None
        except (wire.UnknownType, KeyError) as err:
            raise errors.bad_request(str(err.args[0] if err.args else err)) from None
        answer: dict[str, Any] = {"size": len(data), "tree": [child.to_dict() for child in root.children]}
        if data.startswith(envelope.MAGIC):
            encodings = _encodings(registry, data, root)
            if encodings is not None:
                answer.update(encodings)
        return Response(orjson.dumps(answer), 200, content_type="application/json")

    return {("debug", "wire", "decode"): decode}


def _encodings(registry: Registry, data: bytes, root: wire.Node) -> dict[str, Any] | None:
    """The object's JSON, its size in each encoding, and each top-level field's cost."""
    try:
        unknown = envelope.unwrap(data)
    except envelope.EnvelopeError:
        return None
    group, _, version = unknown.typeMeta.apiVersion.rpartition("/")
    resource = registry.resource_for_kind(GroupVersionKind(group, version, unknown.typeMeta.kind))
    if resource is None:
        return None
    codec = codec_for(resource)
    if not codec.protobuf:
        return None
    try:
        obj = codec.from_protobuf(unknown.raw)
    except (ValueError, ProtobufDecodeError):  # not the kind's bytes: no sizes (the tree shows why)
        return None
    as_json = codec.json_object(codec.json_item(obj))
    value = orjson.loads(as_json)
    sizes = {
        "protobuf": len(data),
        "json": len(as_json),
        "yaml": len(yaml.safe_dump(value, sort_keys=False).encode()),
        "cbor": len(codec.cbor_object(obj)),
    }
    object_node = _find(root, lambda n: n.text.startswith("object "))
    protobuf_cost = {n.name: n.end - n.start for n in object_node.children} if object_node else {}
    fields = [
        {"name": key, "json": len(orjson.dumps({key: item})) - 2, "protobuf": protobuf_cost.get(key, 0)}
        for key, item in value.items()
    ]
    return {"object": value, "sizes": sizes, "fields": fields}


def _find(node: wire.Node, wanted: Callable[[wire.Node], bool]) -> wire.Node | None:
    for child in node.children:
        if wanted(child):
            return child
        found = _find(child, wanted)
        if found is not None:
            return found
    return None
