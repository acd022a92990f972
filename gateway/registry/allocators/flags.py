"""The flags of the service ranges: --service-cluster-ip-range and --service-node-port-range (what
reading the flags needs, apart from the allocator in service.py)."""

from __future__ import annotations

import argparse
import ipaddress

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
DEFAULT_NODE_PORTS = "30000-32767"


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


def parse_port_range(text: str) -> tuple[int, int]:
    """``30000-32767``, ``30000+2767`` or a single port (upstream's net.ParsePortRange)."""
    base, plus, extent = text.partition("+")
    if plus:
        first, last = int(base), int(base) + int(extent)
    else:
        low, _, high = text.partition("-")
        first, last = int(low), int(high or low)
    if not 0 <= first <= last <= 65535:
        raise ValueError(f"invalid port range: {text!r}")
    return first, last
