"""Where storage is: ``--storage`` as one endpoint or a cluster's members, and what their etcd
versions promise.

``host:port``, ``unix:///path``, or several ``host:port`` separated by commas (an ``http://``,
``https://`` or ``etcd://`` prefix is accepted, as in etcd's own flags). Several members become
one gRPC channel over all their addresses with pick-first balancing: it talks to one member and
moves to the next when that one fails. Host names are resolved once at start; with TLS, the
certificate is checked against the name given.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from protokube.cliargs import is_ip

SCHEMES = ("etcd://", "http://", "https://")
UNIX = "unix://"


class EndpointError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str  # as given (a name or an IP literal); "" for a unix socket
    port: int
    address: str  # as given, without scheme


def parse(text: str) -> list[Endpoint]:
    if text.startswith(UNIX):
        return [Endpoint("", 0, text)]
    found = []
    for item in (part.strip() for part in text.split(",")):
        for scheme in SCHEMES:
            item = item.removeprefix(scheme)
        host, sep, port = item.rstrip("/").rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise EndpointError(f"storage endpoint must be HOST:PORT, got {item!r}")
        found.append(Endpoint(host.strip("[]"), int(port), item))
    return found


def _ip(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        return str(infos[0][4][0])


def grpc_target(members: list[Endpoint]) -> str:
    """One endpoint as given (gRPC resolves it); several as an address list gRPC fails over."""
    if len(members) == 1:
        return members[0].address
    addresses = [(_ip(m.host), m.port) for m in members]
    families = {ipaddress.ip_address(ip).version for ip, _ in addresses}
    if families == {4}:
        return "ipv4:" + ",".join(f"{ip}:{port}" for ip, port in addresses)
    if families == {6}:
        return "ipv6:" + ",".join(f"[{ip}]:{port}" for ip, port in addresses)
    raise EndpointError("storage members must all be IPv4 or all be IPv6")


def tls_name_options(members: list[Endpoint], tls: bool) -> list[tuple[str, str]]:
    """With TLS over resolved addresses, check the certificate against the first name given."""
    if not tls or len(members) == 1:
        return []
    names = [m.host for m in members if not is_ip(m.host)]
    return [("grpc.ssl_target_name_override", names[0])] if names else []


def orders_progress_notifications(version: str) -> bool:
    """etcd sends a progress notification only after the events it covers from 3.4.31 and 3.5.13
    on (upstream's storage feature checker requires these for RequestWatchProgress)."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return False
    found = tuple(int(p) for p in match.groups())
    if found[:2] == (3, 4):
        return found >= (3, 4, 31)
    return found >= (3, 5, 13)
