"""Kubernetes' CEL IP and CIDR libraries: ip(), isIP(), cidr(), isCIDR(), string(); an IP's
family, isUnspecified, isLoopback, isLinkLocalMulticast, isLinkLocalUnicast, isGlobalUnicast; a
CIDR's ip, masked, prefixLength, containsIP, containsCIDR. As upstream, IPv4-mapped IPv6
addresses and zones are refused."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from celpy import celtypes

from protokube.gateway.cel.library import fail, function, method
from protokube.gateway.cel.values import INT

String = celtypes.StringType
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


@dataclass(frozen=True)
class IP:
    address: Address

    def __str__(self) -> str:
        return str(self.address)


@dataclass(frozen=True)
class CIDR:
    interface: Interface  # the address as written, with its prefix (host bits kept)

    def __str__(self) -> str:
        return str(self.interface)


def _address(text: str) -> Address | str:
    """The address, or why it is refused (upstream's words)."""
    if "%" in text:
        return "IP Address with zone value is not allowed"
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return f'IP Address "{text}" parse error during conversion from string: ParseAddr("{text}"): unable to parse IP'
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return "IPv4-mapped IPv6 address is not allowed"
    return address


def _interface(text: str) -> Interface | str:
    address, slash, bits = text.partition("/")
    if "%" in address:
        return "CIDR with zone value is not allowed"
    try:
        if not slash or not bits.isdigit():
            raise ValueError(text)
        interface = ipaddress.ip_interface(text)
    except ValueError:
        return f'network address parse error during conversion from string: netip.ParsePrefix("{text}"): bad prefix'
    if isinstance(interface, ipaddress.IPv6Interface) and interface.ip.ipv4_mapped is not None:
        return "IPv4-mapped IPv6 address is not allowed"
    return interface


@function("ip", String)
def ip(text: String) -> Any:
    address = _address(text)
    return fail(address) if isinstance(address, str) else IP(address)


@method("ip", CIDR)
def cidr_ip(value: CIDR) -> IP:
    return IP(value.interface.ip)


@function("isIP", String)
def is_ip(text: String) -> celtypes.BoolType:
    return celtypes.BoolType(not isinstance(_address(text), str))


@function("cidr", String)
def cidr(text: String) -> Any:
    interface = _interface(text)
    return fail(interface) if isinstance(interface, str) else CIDR(interface)


@function("isCIDR", String)
def is_cidr(text: String) -> celtypes.BoolType:
    return celtypes.BoolType(not isinstance(_interface(text), str))


@function("string", (IP, CIDR))
def string(value: IP | CIDR) -> String:
    return String(str(value))


@method("family", IP)
def family(value: IP) -> celtypes.IntType:
    return INT(value.address.version)


@method("isUnspecified", IP)
def is_unspecified(value: IP) -> celtypes.BoolType:
    return celtypes.BoolType(value.address.is_unspecified)


@method("isLoopback", IP)
def is_loopback(value: IP) -> celtypes.BoolType:
    return celtypes.BoolType(value.address.is_loopback)


@method("isLinkLocalMulticast", IP)
def is_link_local_multicast(value: IP) -> celtypes.BoolType:
    address = value.address
    if address.version == 4:
        return celtypes.BoolType(address in ipaddress.ip_network("224.0.0.0/24"))
    return celtypes.BoolType(address in ipaddress.ip_network("ff02::/16"))


@method("isLinkLocalUnicast", IP)
def is_link_local_unicast(value: IP) -> celtypes.BoolType:
    return celtypes.BoolType(value.address.is_link_local and not value.address.is_multicast)


@method("isGlobalUnicast", IP)
def is_global_unicast(value: IP) -> celtypes.BoolType:
    """Go's IsGlobalUnicast: private ranges included, broadcast and link-local not."""
    address = value.address
    broadcast = address == ipaddress.IPv4Address("255.255.255.255")
    special = address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local
    return celtypes.BoolType(not (special or broadcast))


@method("prefixLength", CIDR)
def prefix_length(value: CIDR) -> celtypes.IntType:
    return INT(value.interface.network.prefixlen)


@method("masked", CIDR)
def masked(value: CIDR) -> CIDR:
    network = value.interface.network
    return CIDR(ipaddress.ip_interface(f"{network.network_address}/{network.prefixlen}"))


@method("containsIP", CIDR)
def contains_ip(value: CIDR, other: Any) -> Any:
    if isinstance(other, String):
        other = ip(other)
    if not isinstance(other, IP):
        return other if isinstance(other, Exception) else fail("no such overload")
    return celtypes.BoolType(other.address in value.interface.network)


@method("containsCIDR", CIDR)
def contains_cidr(value: CIDR, other: Any) -> Any:
    if isinstance(other, String):
        other = cidr(other)
    if not isinstance(other, CIDR):
        return other if isinstance(other, Exception) else fail("no such overload")
    inner = other.interface.network
    return celtypes.BoolType(inner.version == value.interface.version and inner.subnet_of(value.interface.network))
