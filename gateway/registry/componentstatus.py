"""componentstatuses: computed on every read, never stored (upstream's pkg/registry/core/componentstatus).

Upstream probes the scheduler and the controller manager on their local health ports and every
etcd server; so does this server: ``controller-manager`` and ``scheduler`` are Healthy only if
something answers ``/healthz`` there (nothing does unless you run them against this server), and
``etcd-0`` is the storage this gateway talks to. One Healthy condition each, as upstream words it.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from protokube.gateway import errors
from protokube.gateway.objects.codec import Codec
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.selectors import label_selector
from protokube.gateway.watchcache.cacher import Listed
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import Resource

PROBE_TIMEOUT = 2.0
# upstream's component servers: the kube-controller-manager and kube-scheduler secure ports.
LOCAL_COMPONENTS = {"controller-manager": 10257, "scheduler": 10259}


@dataclass(frozen=True, slots=True)
class Probe:
    healthy: bool
    message: str = ""
    error: str = ""


async def probe_http(port: int) -> Probe:
    """GET https://127.0.0.1:PORT/healthz without verifying the certificate (as upstream does)."""
    import httpx  # here: its import costs a server's start ~0.1 s of CPU (with its command line's rich and pygments)

    url = f"https://127.0.0.1:{port}/healthz"
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        async with httpx.AsyncClient(verify=context, timeout=PROBE_TIMEOUT) as client:
            answer = await client.get(url)
    except httpx.ConnectError:
        return Probe(False, error=f'Get "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused')
    except httpx.HTTPError as err:
        return Probe(False, error=f'Get "{url}": {err}')
    if not 200 <= answer.status_code < 400:
        return Probe(False, answer.text, f"unhealthy http status code: {answer.status_code} ({answer.reason_phrase})")
    return Probe(True, answer.text)


class ComponentStatuses:
    """get and list of componentstatuses; ``storage_health`` raises when the storage is not well."""

    def __init__(self, resource: Resource, codec: Codec, storage_health: Callable[[], Awaitable[object]]) -> None:
        self.resource = resource
        self.codec = codec
        self.storage_health = storage_health

    async def _etcd(self) -> Probe:
        try:
            await asyncio.wait_for(self.storage_health(), PROBE_TIMEOUT)
        except Exception as err:
            return Probe(False, error=str(err) or type(err).__name__)
        return Probe(True, "ok")

    def _probes(self) -> dict[str, Callable[[], Awaitable[Probe]]]:
        """Each component's probe, by name (not started)."""
        probes: dict[str, Callable[[], Awaitable[Probe]]] = {
            name: functools.partial(probe_http, port) for name, port in LOCAL_COMPONENTS.items()
        }
        probes["etcd-0"] = self._etcd
        return probes

    def _view(self, name: str, probe: Probe) -> ObjectView:
        status = self.codec.new()
        status.metadata.name = name
        status.conditions.add(
            type="Healthy", status="True" if probe.healthy else "False", message=probe.message, error=probe.error
        )
        return ObjectView.of(self.codec, status, 0)

    async def get(self, namespace: str, name: str, resource_version: str | None) -> ObjectView:
        probe = self._probes().get(name)
        if probe is None:
            raise errors.not_found(self.resource, name)
        return self._view(name, await probe())

    async def list(self, namespace: str, options: ListOptions) -> Listed:
        """Every component, probed at once; a label selector selects none (they have no labels)."""
        selector = label_selector(options.label_selector)
        probes = sorted(self._probes().items())
        results = await asyncio.gather(*(probe() for _, probe in probes))
        views = [self._view(name, result) for (name, _), result in zip(probes, results, strict=True)]
        return Listed([v for v in views if selector.matches({})], meta.ListMeta())
