"""A Python client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
typed dataclasses `make types` generates with betterproto2 (types/protokube_types). It reads a Pod,
a PodList and three watch events, and creates a ConfigMap — every body as
application/vnd.kubernetes.protobuf. Field names are Python's (snake_case); the wire is upstream's.

    make types
    PYTHONPATH=types python examples/clients/python-betterproto/client.py http://127.0.0.1:8080 default

Its only dependency besides the standard library is the betterproto2 runtime.
"""

from __future__ import annotations

import http.client
import itertools
import struct
import sys
from collections.abc import Iterator
from typing import TypeVar
from urllib.parse import urlsplit

import betterproto2
from protokube_types.k8s.io.api.core import v1 as core
from protokube_types.k8s.io.apimachinery.pkg import runtime
from protokube_types.k8s.io.apimachinery.pkg.apis.meta import v1 as meta

PROTOBUF = "application/vnd.kubernetes.protobuf"
# Every protobuf body starts with "k8s" and a zero byte, then a runtime.Unknown holding the object.
MAGIC = b"k8s\x00"
M = TypeVar("M", bound=betterproto2.Message)


def unwrap(body: bytes) -> runtime.Unknown:
    """Open an envelope: the magic, then a runtime.Unknown whose raw field holds the object."""
    if not body.startswith(MAGIC):
        raise ValueError(f"no k8s\\x00 envelope: {body[:40]!r}")
    return runtime.Unknown.parse(body[len(MAGIC) :])


def wrap(message: betterproto2.Message, api_version: str, kind: str) -> bytes:
    """Put an object into an envelope, naming its apiVersion and kind."""
    type_meta = runtime.TypeMeta(api_version=api_version, kind=kind)
    return MAGIC + bytes(runtime.Unknown(type_meta=type_meta, raw=bytes(message)))


def read(response: http.client.HTTPResponse, kind: type[M]) -> M:
    """The object of a response's enveloped body; an error's metav1.Status ends the program."""
    unknown = unwrap(response.read())
    if response.status >= 300:
        status = meta.Status.parse(unknown.raw or b"")
        raise SystemExit(f"{response.status} {status.reason}: {status.message}")
    return kind.parse(unknown.raw or b"")


def watch_events(response: http.client.HTTPResponse) -> Iterator[meta.WatchEvent]:
    """A watch's frames: each a 4-byte big-endian length, then a WatchEvent."""
    while header := response.read(4):
        (length,) = struct.unpack(">I", header)
        yield meta.WatchEvent.parse(response.read(length))


def main(server: str, namespace: str) -> None:
    url = urlsplit(server)
    base = f"/api/v1/namespaces/{namespace}"

    def request(method: str, path: str, body: bytes | None = None) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        headers = {"Accept": PROTOBUF} | ({"Content-Type": PROTOBUF} if body is not None else {})
        connection.request(method, path, body=body, headers=headers)
        return connection.getresponse()

    pod = read(request("GET", f"{base}/pods/web"), core.Pod)
    print(f"pod {pod.metadata.name} image {pod.spec.containers[0].image}")

    pods = read(request("GET", f"{base}/pods"), core.PodList)
    print(f"pods {len(pods.items)}")

    # The watch starts with an ADDED event for each pod there is; after three the client hangs up.
    with request("GET", f"{base}/pods?watch=1") as response:
        for event in itertools.islice(watch_events(response), 3):
            unknown = unwrap(event.object.raw or b"")
            name = core.Pod.parse(unknown.raw or b"").metadata.name
            print(f"event {event.type} {unknown.type_meta.kind} {name}")

    config_map = core.ConfigMap(
        metadata=meta.ObjectMeta(name="from-python-betterproto"), data={"language": "python-betterproto"}
    )
    created = request("POST", f"{base}/configmaps", wrap(config_map, "v1", "ConfigMap"))
    status = created.status
    stored = read(created, core.ConfigMap)
    print(f"created {status} {stored.metadata.name} uid {stored.metadata.uid}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: client.py SERVER_URL NAMESPACE")
    main(sys.argv[1], sys.argv[2])
