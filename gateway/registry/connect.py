"""The connect subresources: pods/NAME/log, exec, attach, portforward and proxy; nodes/NAME/proxy and
services/NAME/proxy (upstream's LogREST, ExecREST, …, ProxyREST).

Upstream finds where the request goes — a node's kubelet, a pod's or an endpoint's address — and
streams or proxies to it. protokube has no kubelets to talk to and does not proxy: each storage
finds the backend exactly as upstream does, with upstream's errors on the way (the pod or node is
missing, the container is not named, the pod has no node yet, the node has no address, …), then
dials it once, briefly, and answers with what the dial gave, worded as upstream's client reports it
(``dial tcp 10.0.0.5:10250: connect: connection refused``). Logs of a pod not on a node yet are
empty (204), as upstream's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import random
import socket
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protokube.gateway import errors
from protokube.gateway.errors import FieldError, StatusError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.registry.rest import Connection
from protokube.gateway.registry.store import Store

DIAL_TIMEOUT = 3.0  # seconds; upstream's dialer waits 30 s, which would hold the client as long
KUBELET_PORT = 10250
KUBELET_SCHEME = "https"
# kube-apiserver's default --kubelet-preferred-address-types.
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
HOSTNAME_LABEL = "kubernetes.io/hostname"
NOT_CONNECTED = "protokube does not connect to kubelets or proxy to pods; the backend answered at {}"


def join_host_port(host: str, port: int | str) -> str:
    """Go's net.JoinHostPort."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def dial(host: str, port: int) -> str:
    """Connect once to host:port; the error as Go's dialer words it, or "" when something answered."""
    address = join_host_port(host, port)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), DIAL_TIMEOUT)
    except TimeoutError:
        return f"dial tcp {address}: i/o timeout"
    except socket.gaierror:
        return f"dial tcp: lookup {host}: no such host"
    except OSError as err:
        reason = (err.strerror or str(err)).lower()
        return f"dial tcp {address}: connect: {reason}"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return ""


async def reach(host: str, port: int, describe: Callable[[str], str]) -> None:
    """Raise what reaching host:port gives: upstream's 500 for a dial error (``describe`` words it as
    the client that dialed would), a 503 when something answers (protokube goes no further)."""
    failure = await dial(host, port)
    if failure:
        raise errors.not_a_status(describe(failure))
    raise errors.service_unavailable(NOT_CONNECTED.format(join_host_port(host, port)))


def port_number(port: str, scheme: str) -> int:
    """A URL's port: given, or the scheme's (80, 443 for https); a name is no port."""
    if not port:
        return 443 if scheme == "https" else 80
    if not port.isdigit():
        raise errors.not_a_status(f"dial tcp: lookup tcp/{port}: unknown port")
    return int(port)


def split_scheme_name_port(text: str) -> tuple[str, str, str] | None:
    """upstream's SplitSchemeNamePort: "name", "name:port" or "scheme:name:port" (http or https)."""
    parts = text.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if not name or scheme not in ("", "http", "https"):
        return None
    return scheme, name, port


@dataclass(frozen=True, slots=True)
class Kubelet:
    host: str
    port: int


async def kubelet_of(nodes: Store, node_name: str) -> Kubelet:
    """Where a node's kubelet listens (upstream's NodeConnectionInfoGetter): its preferred address
    and its reported port (10250 when it reported none)."""
    node = (await nodes.get("", node_name, None)).obj
    addresses = list(node.status.addresses)
    host = ""
    for address_type in PREFERRED_ADDRESS_TYPES:
        host = next((a.address for a in addresses if a.type == address_type), "")
        if not host and address_type == "Hostname":
            host = node.metadata.labels.get(HOSTNAME_LABEL, "")
        if host:
            break
    if not host:
        known = " ".join(f"{{{a.type} {a.address}}}" for a in addresses)
        raise errors.not_a_status(f"no preferred addresses found; known addresses: [{known}]")
    port = node.status.daemonEndpoints.kubeletEndpoint.Port
    return Kubelet(host, port if port > 0 else KUBELET_PORT)


def container_of(pod: Obj, wanted: str) -> str:
    """The container a request names, or the pod's only one (upstream's validateContainer)."""
    spec, name = pod.spec, pod.metadata.name
    every = [c.name for group in (spec.initContainers, spec.containers) for c in group]
    every += [c.ephemeralContainerCommon.name for c in spec.ephemeralContainers]
    if wanted:
        if wanted not in every:
            raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    if len(spec.containers) == 1:
        return spec.containers[0].name
    if not spec.containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: [{' '.join(every)}]")


def _first(query: Mapping[str, list[str]], key: str) -> str:
    values = query.get(key) or [""]
    return values[0]


def _flag(query: Mapping[str, list[str]], key: str) -> bool:
    return _first(query, key).lower() in ("1", "t", "true")


def _int_param(query: Mapping[str, list[str]], key: str) -> int | None:
    text = _first(query, key)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None


class _PodConnecter:
    codec: Codec
    takes_path = False

    def __init__(self, pods: Store, nodes: Callable[[], Store | None], codec: Codec) -> None:
        self.pods = pods
        self.nodes = nodes
        self.codec = codec

    async def _kubelet(self, node_name: str) -> Kubelet:
        nodes = self.nodes()
        if nodes is None:
            raise errors.not_a_status(f"no node {node_name} to connect to")
        return await kubelet_of(nodes, node_name)


class LogStore(_PodConnecter):
    """pods/NAME/log: the kubelet's containerLogs of the container."""

    def _log_params(self, name: str, query: Mapping[str, list[str]]) -> dict[str, str]:
        """PodLogOptions from the query, validated as upstream's ValidatePodLogOptions."""
        params: dict[str, str] = {key: "true" for key in ("follow", "previous", "timestamps") if _flag(query, key)}
        problems = []
        for key, minimum, detail in (
            ("tailLines", 0, "must be greater than or equal to 0"),
            ("limitBytes", 1, "must be greater than 0"),
            ("sinceSeconds", 1, "must be greater than 0"),
        ):
            value = _int_param(query, key)
            if value is None:
                continue
            if value < minimum:
                problems.append(FieldError.invalid(key, value, detail))
            params[key] = str(value)
        since_time = _first(query, "sinceTime")
        if since_time:
            if "sinceSeconds" in params:
                problems.append(
                    FieldError.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified")
                )
            params["sinceTime"] = since_time
        if problems:
            raise errors.invalid("", "PodLogOptions", name, problems)
        return params

    async def connect(self, request: Connection) -> None:
        params = self._log_params(request.name, request.query)
        pod = (await self.pods.get(request.namespace, request.name, None)).obj
        container = container_of(pod, _first(request.query, "container"))
        if not pod.spec.nodeName:
            return  # not on a node yet: nothing to read (upstream streams nothing)
        kubelet = await self._kubelet(pod.spec.nodeName)
        path = f"/containerLogs/{request.namespace}/{request.name}/{container}"
        query = urllib.parse.urlencode(sorted(params.items()))
        url = f"{KUBELET_SCHEME}://{join_host_port(kubelet.host, kubelet.port)}{path}" + (f"?{query}" if query else "")
        await reach(kubelet.host, kubelet.port, lambda failure: f'Get "{url}": {failure}')


class StreamStore(_PodConnecter):
    """pods/NAME/exec, attach and portforward: an upgraded connection to the kubelet."""

    def __init__(
        self, pods: Store, nodes: Callable[[], Store | None], codec: Codec, names_container: bool = True
    ) -> None:
        super().__init__(pods, nodes, codec)
        self.names_container = names_container  # portforward goes to the pod, not a container

    async def connect(self, request: Connection) -> None:
        pod = (await self.pods.get(request.namespace, request.name, None)).obj
        if self.names_container:
            container_of(pod, _first(request.query, "container"))
        if not pod.spec.nodeName:
            raise errors.bad_request(f"pod {request.name} does not have a host assigned")
        kubelet = await self._kubelet(pod.spec.nodeName)
        if not request.upgrade:
            raise errors.bad_request("Upgrade request required")
        await reach(kubelet.host, kubelet.port, lambda failure: f"error dialing backend: {failure}")


class PodProxyStore(_PodConnecter):
    """pods/NAME[:PORT]/proxy[/PATH]: HTTP to the pod's IP."""

    takes_path = True

    async def connect(self, request: Connection) -> None:
        parsed = split_scheme_name_port(request.name)
        if parsed is None:
            raise errors.bad_request(f"invalid pod request {errors.go_quote(request.name)}")
        scheme, name, port = parsed
        pod = (await self.pods.get(request.namespace, name, None)).obj
        if not port:
            port = next((str(c.ports[0].containerPort) for c in pod.spec.containers if len(c.ports)), "")
        ip = pod.status.podIPs[0].ip if len(pod.status.podIPs) else ""
        if not _global_unicast(ip):
            raise errors.bad_request("address not allowed")
        await reach(ip, port_number(port, scheme), lambda failure: failure)


def _global_unicast(text: str) -> bool:
    """Go's IP.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or broadcast."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    broadcast = ip == ipaddress.IPv4Address("255.255.255.255")
    return not (ip.is_unspecified or ip.is_loopback or ip.is_multicast or ip.is_link_local or broadcast)


class NodeProxyStore:
    """nodes/NAME[:PORT]/proxy[/PATH]: HTTP to the node's kubelet, or to another port of the node."""

    takes_path = True

    def __init__(self, nodes: Store, codec: Codec) -> None:
        self.nodes = nodes
        self.codec = codec

    async def connect(self, request: Connection) -> None:
        parsed = split_scheme_name_port(request.name)
        if parsed is None:
            raise errors.bad_request(f"invalid node request {errors.go_quote(request.name)}")
        scheme, name, port = parsed
        kubelet = await kubelet_of(self.nodes, name)
        target = kubelet.port if port in ("", str(kubelet.port)) else port_number(port, scheme)
        await reach(kubelet.host, target, lambda failure: failure)


class ServiceProxyStore:
    """services/NAME[:PORT]/proxy[/PATH]: HTTP to one of the service's endpoints (pods only)."""

    takes_path = True

    def __init__(
        self, services: Store, endpoints: Callable[[], Store | None], pods: Callable[[], Store | None], codec: Codec
    ) -> None:
        self.services = services
        self.endpoints = endpoints
        self.pods = pods
        self.codec = codec

    async def connect(self, request: Connection) -> None:
        parsed = split_scheme_name_port(request.name)
        if parsed is None:
            raise errors.bad_request(f"invalid service request {errors.go_quote(request.name)}")
        scheme, name, port = parsed
        service = (await self.services.get(request.namespace, name, None)).obj
        if service.spec.type == "ExternalName":
            await reach(service.spec.externalName, port_number(port, scheme), lambda failure: failure)
        backend = await self._endpoint(request.namespace, name, self._port_name(service, name, port))
        if backend is None:
            raise errors.service_unavailable(f"no endpoints available for service {errors.go_quote(request.name)}")
        await reach(*backend, lambda failure: failure)

    def _port_name(self, service: Obj, name: str, port: str) -> str:
        """The service port a request names, by name or number (upstream's ResourceLocation)."""
        ports = list(service.spec.ports)
        if port.isdigit():
            found = next((p.name for p in ports if p.port == int(port)), None)
            if found is None:
                raise errors.service_unavailable(
                    f"no service port {int(port)} found for service {errors.go_quote(name)}"
                )
            return found
        if not port and len(ports) == 1:
            return ports[0].name
        return port

    async def _endpoint(self, namespace: str, name: str, port_name: str) -> tuple[str, int] | None:
        """A random address of an existing pod among the service's endpoints for the port."""
        endpoints = self.endpoints()
        if endpoints is None:
            return None
        found = (await endpoints.get(namespace, name, None)).obj
        for subset in found.subsets:
            for port in subset.ports:
                if port.name != port_name:
                    continue
                addresses = [a for a in subset.addresses if await self._is_pod_address(namespace, a)]
                if addresses:
                    return random.choice(addresses).ip, port.port
        return None

    async def _is_pod_address(self, namespace: str, address: Obj) -> bool:
        pods = self.pods()
        ref = address.targetRef
        if pods is None or not address.HasField("targetRef") or ref.kind != "Pod":
            return False
        try:
            pod = (await pods.get(ref.namespace or namespace, ref.name, None)).obj
        except StatusError:
            return False
        return any(ip.ip == address.ip for ip in pod.status.podIPs)
