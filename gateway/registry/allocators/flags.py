"""The flags of the service ranges: --service-cluster-ip-range and --service-node-port-range."""

from __future__ import annotations

import argparse
import ipaddress

from protokube.gateway.registry.allocators.service import DEFAULT_NODE_PORTS, DEFAULT_SERVICE_CIDR, parse_port_range

__all__ = ["DEFAULT_NODE_PORTS", "DEFAULT_SERVICE_CIDR", "node_port_range", "service_cidr"]


def service_cidr(text: str) -> str:
    """One CIDR, at most 20 bits of addresses (upstream: a mask of at least /12, or /108 for IPv6)."""
    try:
        network = ipaddress.ip_network(text.strip())
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"not a CIDR: {text!r} ({err})") from None
    if network.max_prefixlen - network.prefixlen > 20:
        minimum = network.max_prefixlen - 20
        raise argparse.ArgumentTypeError(
            f"specified --service-cluster-ip-range is too large; for {network.max_prefixlen}-bit addresses, "
            f"the mask must be >= {minimum}"
        )
    return str(network)


def node_port_range(text: str) -> str:
    try:
        first, last = parse_port_range(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port range: {text!r} (e.g. 30000-32767)") from None
    return f"{first}-{last}"
