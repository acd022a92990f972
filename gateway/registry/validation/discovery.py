"""discovery.k8s.io/v1 EndpointSlices (k8s.io/kubernetes pkg/apis/discovery/validation): address
type (immutable), endpoints' addresses by that type, node names, zones, hints, ports."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import check, enum, immutable, invalid_each, labels_errors, parse_ip
from protokube.gateway.registry.validation.pods import PROTOCOLS, special_ip_problems
from protokube.gateway.syntax import dns1123_label_problems, dns1123_subdomain_problems, qualified_name_problems

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS, MAX_TOPOLOGY_LABELS, MAX_HINTS = 1000, 100, 20000, 16, 8


def _address_errors(address: str, kind: str, field: str) -> list[FieldError]:
    if kind in ("IPv4", "IPv6"):
        ip = parse_ip(address)
        if ip is None or (ip.version == 4) != (kind == "IPv4"):
            return [FieldError.invalid(field, address, f"must be a valid {kind} address")]
        return invalid_each(field, address, special_ip_problems(address))
    if kind == "FQDN":
        name = address.removesuffix(".")
        problems = dns1123_subdomain_problems(name)
        if problems:
            return [FieldError.invalid(field, name, ",".join(problems))]
        if len(name.split(".")) < 2:
            return [FieldError.invalid(field, name, "should be a domain with at least two segments separated by dots")]
        for label in name.split("."):
            label_problems = dns1123_label_problems(label)
            if label_problems:
                return [FieldError.invalid(field, label, ",".join(label_problems))]
    return []


def _endpoint_errors(endpoint: Message, kind: str, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    addresses = f"{field}.addresses"
    if not endpoint.addresses:
        found.append(FieldError.required(addresses, "must contain at least 1 address"))
    elif len(endpoint.addresses) > MAX_ADDRESSES:
        found.append(FieldError.too_many(addresses, len(endpoint.addresses), MAX_ADDRESSES))
    for i, address in enumerate(endpoint.addresses):
        found += _address_errors(address, kind, f"{addresses}[{i}]")
    if endpoint.HasField("nodeName"):
        found += check(f"{field}.nodeName", endpoint.nodeName, dns1123_subdomain_problems)
    topology = dict(endpoint.deprecatedTopology)
    if len(topology) > MAX_TOPOLOGY_LABELS:
        found.append(FieldError.too_many(f"{field}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
    found += labels_errors(topology, f"{field}.deprecatedTopology")
    for name in ("zone", "hostname"):
        if endpoint.HasField(name):
            found += check(f"{field}.{name}", getattr(endpoint, name), dns1123_label_problems)
    if endpoint.HasField("hints"):
        zones = endpoint.hints.forZones
        if len(zones) > MAX_HINTS:
            found.append(FieldError.too_many(f"{field}.hints.forZones", len(zones), MAX_HINTS))
        seen: set[str] = set()
        for i, zone in enumerate(zones):
            where = f"{field}.hints.forZones[{i}].name"
            found += check(where, zone.name, dns1123_label_problems)
            if zone.name in seen:
                found.append(FieldError.duplicate(where, zone.name))
            seen.add(zone.name)
    return found


@validator("k8s.io.api.discovery.v1.EndpointSlice")
def validate_endpoint_slice(slice_: Message, old: Message | None) -> list[FieldError]:
    found = enum("addressType", slice_.addressType, ADDRESS_TYPES, required=True)
    if len(slice_.endpoints) > MAX_ENDPOINTS:
        found.append(FieldError.too_many("endpoints", len(slice_.endpoints), MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(slice_.endpoints):
            found += _endpoint_errors(endpoint, slice_.addressType, f"endpoints[{i}]")
    if len(slice_.ports) > MAX_PORTS:
        found.append(FieldError.too_many("ports", len(slice_.ports), MAX_PORTS))
    else:
        names: set[str] = set()
        for i, port in enumerate(slice_.ports):
            where = f"ports[{i}]"
            if port.name:
                found += check(f"{where}.name", port.name, dns1123_label_problems)
            if port.name in names:
                found.append(FieldError.duplicate(f"{where}.name", port.name))
            names.add(port.name)
            found += enum(f"{where}.protocol", port.protocol, PROTOCOLS)
            if port.HasField("appProtocol"):
                found += check(f"{where}.appProtocol", port.appProtocol, qualified_name_problems)
    if old is not None:
        found += immutable("addressType", slice_.addressType, old.addressType)
    return found
