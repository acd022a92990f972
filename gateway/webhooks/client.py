"""The HTTPS call to a webhook (k8s.io/apiserver pkg/util/webhook's client manager, as
kube-apiserver makes it with --enable-aggregator-routing=true):

- clientConfig ``url``: posted to as written, with ``?timeout=<n>s`` as client-go adds it;
- clientConfig ``service``: the Service resolved to one ready address of its EndpointSlices on the
  service port's name; the TLS server name (and Host) is ``<name>.<namespace>.svc``;
- ``caBundle`` verifies the server (none: the system's roots); the call ends at ``timeoutSeconds``.

Failures raise ``CallFailed`` with client-go's wording (``Post "<url>": <reason>``), which the
dispatchers turn into upstream's ``failed calling webhook`` errors. An answer is read up to
``MAX_RESPONSE_BYTES`` (a protokube bound: upstream reads it whole).
"""

from __future__ import annotations

import asyncio
import random
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import h11
import orjson

from protokube.gateway import errors
from protokube.gateway.params import ListOptions
from protokube.gateway.selectors import NO_FIELDS, Filter, LabelSelector, Requirement
from protokube.gateway.watchcache.cacher import Cacher
from protokube.gateway.webhooks.transport import Destination, Reply, TooLarge, Transport

SERVICES = ("", "v1", "services")
ENDPOINT_SLICES = ("discovery.k8s.io", "v1", "endpointslices")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
FOLLOWED_REDIRECTS = (307, 308)  # Go's http.Client repeats the method and body on these
MAX_REDIRECTS = 10
ROUTABLE_TYPES = ("", "ClusterIP", "NodePort", "LoadBalancer")


@dataclass(frozen=True, slots=True)
class Service:
    namespace: str
    name: str
    path: str
    port: int


@dataclass(frozen=True, slots=True)
class ClientConfig:
    url: str  # "" when ``service`` is given
    service: Service | None
    ca_bundle: bytes  # PEM; empty: the system's roots


class CallFailed(Exception):
    """The webhook could not be called or its answer not read (upstream's ErrCallingWebhook
    reason, e.g. ``failed to call webhook: Post "https://...": ...``)."""


class _Unresolved(Exception):
    """The Service has no address to call (the dialer's error in client-go)."""


class Caller:
    """Posts reviews (AdmissionReview, ConversionReview); ``cachers``: the server's watch caches
    (Services, EndpointSlices)."""

    def __init__(self, cachers: Mapping[tuple[str, str, str], Cacher]) -> None:
        self.cachers = cachers
        self.transport = Transport()
        self._contexts: dict[bytes, ssl.SSLContext] = {}

    async def post(self, config: ClientConfig, timeout: float, body: bytes) -> bytes:
        """The answer's body (2xx), or CallFailed. A 307 or 308 with a Location is followed with
        the same POST, up to 10 times, as Go's http.Client does (envtest's webhook URLs have a
        double slash, which Go's ServeMux answers with a 307 to the clean path)."""
        context = self._context(config.ca_bundle)
        url = f"{_url(config)}?timeout={int(timeout)}s"
        host, port = urlsplit(url).hostname or "", _port(url)
        try:
            async with asyncio.timeout(timeout):
                server_name = host
                if config.service is not None:
                    server_name = _server_name(config.service)
                    host, port = await self._resolve(config.service)
                destination = Destination(host, port, server_name, context)
                for _ in range(MAX_REDIRECTS + 1):
                    parts = urlsplit(url)
                    headers = [
                        ("Host", parts.netloc),
                        ("Content-Type", "application/json"),
                        ("Accept", "application/json"),
                    ]
                    target = f"{parts.path or '/'}?{parts.query}" if parts.query else parts.path or "/"
                    answer = await self.transport.post(destination, target, headers, body, MAX_RESPONSE_BYTES)
                    if answer.status not in FOLLOWED_REDIRECTS or not answer.location:
                        break
                    following = urljoin(url, answer.location)
                    if urlsplit(following).netloc != parts.netloc:
                        host = urlsplit(following).hostname or ""
                        port = _port(following)
                        destination = Destination(host, port, host, context)
                    url = following
                else:
                    raise CallFailed(f'failed to call webhook: Post "{url}": stopped after {MAX_REDIRECTS} redirects')
        except TimeoutError:
            raise CallFailed(f'failed to call webhook: Post "{url}": context deadline exceeded') from None
        except _Unresolved as err:
            raise CallFailed(f'failed to call webhook: Post "{url}": {err}') from None
        except TooLarge:
            raise CallFailed(f"failed to call webhook: the answer is larger than {MAX_RESPONSE_BYTES} bytes") from None
        except (OSError, h11.ProtocolError) as err:
            raise CallFailed(f'failed to call webhook: Post "{url}": {_reason(err, host, port)}') from None
        if not 200 <= answer.status < 300:
            raise CallFailed(f"failed to call webhook: {_status_message(answer)}")
        return answer.body

    def _context(self, ca_bundle: bytes) -> ssl.SSLContext:
        """The TLS context verifying servers with ``ca_bundle`` (PEM; none: the system's roots).
        Every certificate of the bundle is a trust anchor, as Go's crypto/x509 takes its roots: a
        bundle holding the serving certificate itself (controller-runtime's envtest registers its
        webhooks so) verifies that server, which OpenSSL refuses without partial chains."""
        context = self._contexts.get(ca_bundle)
        if context is None:
            try:
                context = ssl.create_default_context(cadata=ca_bundle.decode("ascii") if ca_bundle else None)
            except (ssl.SSLError, ValueError):
                raise CallFailed(
                    "could not get REST client: unable to load root certificates: unable to parse bytes as PEM block"
                ) from None
            context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
            self._contexts[ca_bundle] = context
        return context

    async def _resolve(self, service: Service) -> tuple[str, int]:
        """A ready endpoint of the Service's port (upstream's ResolveEndpoint)."""
        services = self.cachers.get(SERVICES)
        view = None
        if services is not None:
            view = services.cached(service.namespace, service.name) or await services.get_latest(
                service.namespace, service.name
            )
        if view is None:
            raise _Unresolved(f'service "{service.name}" not found')
        spec = view.obj.spec
        if spec.type not in ROUTABLE_TYPES:
            raise _Unresolved(f'unsupported service type "{spec.type}"')
        port = next((p for p in spec.ports if p.port == service.port), None)
        if port is None:
            raise _Unresolved(f'no service port {service.port} found for service "{service.name}"')
        addresses = await self._ready_addresses(service, port.name)
        if not addresses:
            raise _Unresolved(f'no endpoints available for service "{service.name}"')
        return random.choice(addresses)

    async def _ready_addresses(self, service: Service, port_name: str) -> list[tuple[str, int]]:
        slices = self.cachers.get(ENDPOINT_SLICES)
        if slices is None:
            return []
        selector = LabelSelector((Requirement(SERVICE_NAME_LABEL, "=", (service.name,)),))
        wanted = Filter(service.namespace, selector, NO_FIELDS)
        if slices.cache.ready.is_set():  # as upstream's lister: the cache, without a consistent read
            views = [entry.view for entry in slices.cache.select(wanted)]
        else:
            views = (await slices.list(wanted, ListOptions())).items
        found = []
        for view in views:
            endpoint_slice = view.obj
            port = next((p.port for p in endpoint_slice.ports if p.name == port_name), None)
            if port is None:
                continue
            for endpoint in endpoint_slice.endpoints:
                conditions = endpoint.conditions
                if conditions.HasField("ready") and not conditions.ready:
                    continue
                found += [(address, port) for address in endpoint.addresses]
        return found


def _status_message(answer: Reply) -> str:
    """What client-go makes of a non-2xx answer: the Status it carries, or a generic message with
    the body when it is text ("unknown" otherwise)."""
    try:
        status = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        status = None
    if isinstance(status, dict) and status.get("kind") == "Status" and isinstance(status.get("message"), str):
        return status["message"]
    text = answer.body.decode("utf-8", "replace").strip() if answer.content_type.startswith("text/") else "unknown"
    return errors.generic_server_response(answer.status, text).status.message


def _reason(err: BaseException, host: str, port: int) -> str:
    """A transport error as Go's net/http words it."""
    if isinstance(err, ssl.SSLCertVerificationError):
        if "mismatch" in str(err.verify_message):
            return f"tls: failed to verify certificate: x509: {err.verify_message}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(err, ConnectionRefusedError):
        return f"dial tcp {_host_port(host, port)}: connect: connection refused"
    if isinstance(err, ConnectionResetError):
        return "EOF"
    if isinstance(err, socket.gaierror):
        return f"dial tcp: lookup {host}: no such host"
    return str(err) or type(err).__name__


def _url(config: ClientConfig) -> str:
    """The URL as client-go makes it: the configured one, or the Service's; "/" when no path."""
    if config.service is None:
        rest = config.url.partition("://")[2]
        return config.url if "/" in rest else f"{config.url}/"
    return f"https://{_service_host(config.service)}{config.service.path or '/'}"


def _port(url: str) -> int:
    """The URL's port (443 when none); out of range: Go's url.Parse takes it, its dialer refuses it."""
    parts = urlsplit(url)
    try:
        return parts.port or 443
    except ValueError:
        port = parts.netloc.rpartition(":")[2]
        raise CallFailed(f'failed to call webhook: Post "{url}": dial tcp: address {port}: invalid port') from None


def _service_host(service: Service) -> str:
    return f"{_server_name(service)}:{service.port}"


def _server_name(service: Service) -> str:
    return f"{service.name}.{service.namespace}.svc"


def _host_port(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
