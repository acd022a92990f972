"""The ``kubernetes`` Service of the default namespace and its endpoints, as kube-apiserver's
kubernetes-service controller keeps them: a ClusterIP service on the first IP of the service range
(port ``https`` 443 to the server's port), and an Endpoints (labelled not to be mirrored) and an
EndpointSlice naming the server's address. Made at start when missing; an existing service is
left as it is, the endpoints are pointed at this server.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
from typing import Any

from protokube.cliargs import is_ip
from protokube.gateway.errors import StatusError
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store

NAMESPACE, NAME = "default", "kubernetes"
log = logging.getLogger("protokube.kubernetesservice")
MANAGER = "kube-apiserver"


def advertised(address: str) -> tuple[str, int]:
    """The IP and port clients reach the server at: the listening host, or for a wildcard
    address, this host's own (upstream's --advertise-address default)."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    ip = ipaddress.ip_address(host) if is_ip(host) else None
    if ip is None or ip.is_unspecified:
        with contextlib.suppress(OSError):
            host = socket.gethostbyname(socket.gethostname())
        if not is_ip(host):
            host = "127.0.0.1"
    return host, int(port)


async def ensure_kubernetes_service(
    services: Store, endpoints: Store | None, slices: Store | None, cluster_ip: str, address: str
) -> None:
    ip, port = advertised(address)
    family = "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
    service = {
        "metadata": {"name": NAME, "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
            "sessionAffinity": "None",
        },
    }
    try:
        await services.get(NAMESPACE, NAME, None)
    except StatusError:  # not there yet
        try:
            await _create(services, service)
        except StatusError as err:  # its IP is another service's: upstream's controller logs and goes on
            log.warning("the kubernetes service cannot be made: %s", err.status.message)
    if ipaddress.ip_address(ip).is_loopback:
        # Endpoints may not name a loopback address (upstream's validation, which a kube-apiserver
        # advertising one meets too): a server listening on loopback only publishes no endpoints.
        return
    if endpoints is not None:
        await _put(
            endpoints,
            {
                "metadata": {"name": NAME, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
            },
        )
    if slices is not None:
        await _put(
            slices,
            {
                "metadata": {"name": NAME, "labels": {"kubernetes.io/service-name": NAME}},
                "addressType": family,
                "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
        )


async def _create(store: Store, data: dict[str, Any]) -> bool:
    """Create the object; False when it exists (made on an earlier start, or by another gateway)."""
    try:
        await store.create(NAMESPACE, store.codec.from_dict(data).obj, WriteOptions(field_manager=MANAGER))
    except StatusError as err:
        if err.code != 409:
            raise
        return False
    return True


async def _put(store: Store, data: dict[str, Any]) -> None:
    """Create, or replace with ``data`` (the server's address may have changed)."""
    if await _create(store, data):
        return
    wanted = store.codec.from_dict(data).obj

    def replace(current: Any) -> Any:
        return store.codec.copy(wanted)

    await store.update(NAMESPACE, NAME, replace, WriteOptions(field_manager=MANAGER))
