"""core/v1 Services and Endpoints (core validation's ValidateService, ValidateServiceUpdate and
ValidateEndpoints). Allocation-related fields (clusterIPs, ipFamilies, nodePorts) are checked as far
as their values go; what the allocator assigns is its own concern."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    check,
    cidr_errors,
    enum,
    int_or_string,
    invalid_each,
    ip_errors,
    labels_errors,
    required_then,
)
from protokube.gateway.registry.validation.pods import PROTOCOLS, port_number_or_name_errors, special_ip_problems
from protokube.gateway.syntax import (
    dns1123_label_problems,
    dns1123_subdomain_problems,
    port_number_problems,
    qualified_name_problems,
)

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_MAX_AFFINITY_SECONDS = 86400
_LB_SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"


def _is_headless(spec: Message) -> bool:
    """clusterIPs is [None] (clusterIP when the allocator has not filled clusterIPs yet)."""
    return (spec.clusterIPs[0] if spec.clusterIPs else spec.clusterIP) == "None"


def _externally_accessible(spec: Message) -> bool:
    return spec.type in ("LoadBalancer", "NodePort") or (spec.type == "ClusterIP" and len(spec.externalIPs) > 0)


def _service_port(port: Message, require_name: bool, names: set[str], field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if require_name and not port.name:
        found.append(FieldError.required(f"{field}.name"))
    elif port.name:
        found += check(f"{field}.name", port.name, dns1123_label_problems)
        if port.name in names:
            found.append(FieldError.duplicate(f"{field}.name", port.name))
        names.add(port.name)
    found += invalid_each(f"{field}.port", port.port, port_number_problems(port.port))
    found += enum(f"{field}.protocol", port.protocol, PROTOCOLS)
    if int_or_string(port.targetPort) not in (0, ""):  # those are defaulted to the port
        found += port_number_or_name_errors(port.targetPort, f"{field}.targetPort")
    if port.HasField("appProtocol"):
        found += check(f"{field}.appProtocol", port.appProtocol, qualified_name_problems)
    return found


def _session_affinity(spec: Message) -> list[FieldError]:
    found = enum("spec.sessionAffinity", spec.sessionAffinity, ("ClientIP", "None"))
    field = "spec.sessionAffinityConfig"
    if spec.sessionAffinity == "ClientIP":
        detail = "when session affinity type is ClientIP"
        if not spec.HasField("sessionAffinityConfig"):
            return [*found, FieldError.required(field, detail)]
        if not spec.sessionAffinityConfig.HasField("clientIP"):
            return [*found, FieldError.required(f"{field}.clientIP", detail)]
        config = spec.sessionAffinityConfig.clientIP
        if not config.HasField("timeoutSeconds"):
            return [*found, FieldError.required(f"{field}.clientIP.timeoutSeconds", detail)]
        if not 0 < config.timeoutSeconds <= _MAX_AFFINITY_SECONDS:
            detail = f"must be greater than 0 and less than {_MAX_AFFINITY_SECONDS}"
            found.append(FieldError.invalid(f"{field}.clientIP.timeoutSeconds", config.timeoutSeconds, detail))
    elif spec.sessionAffinity == "None" and spec.HasField("sessionAffinityConfig"):
        found.append(FieldError.forbidden(field, "must not be set when session affinity is None"))
    return found


def _type_rules(spec: Message) -> list[FieldError]:
    found: list[FieldError] = []
    if spec.type in ("LoadBalancer", "NodePort") and _is_headless(spec):
        shown = spec.clusterIPs[0] if spec.clusterIPs else spec.clusterIP
        detail = f"may not be set to 'None' for {spec.type} services"
        found.append(FieldError.invalid("spec.clusterIPs[0]", shown, detail))
    elif spec.type == "ExternalName":
        if spec.clusterIPs:
            found.append(FieldError.forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if spec.ipFamilies:
            found.append(FieldError.forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.HasField("ipFamilyPolicy"):
            found.append(FieldError.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        found += required_then("spec.externalName", spec.externalName.removesuffix("."), dns1123_subdomain_problems)
    return found


def _ports(spec: Message) -> list[FieldError]:
    found: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(spec.ports):
        found += _service_port(port, len(spec.ports) > 1, names, f"spec.ports[{i}]")
    return found


def _port_uniqueness(spec: Message) -> list[FieldError]:
    found: list[FieldError] = []
    if spec.type == "ClusterIP":
        for i, port in enumerate(spec.ports):
            if port.nodePort:
                found.append(
                    FieldError.forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                )
    node_ports: set[tuple[str, int]] = set()
    for i, port in enumerate(spec.ports):
        if not port.nodePort:
            continue
        if (port.protocol, port.nodePort) in node_ports:
            found.append(FieldError.duplicate(f"spec.ports[{i}].nodePort", port.nodePort))
        node_ports.add((port.protocol, port.nodePort))
    ports: set[tuple[str, int]] = set()
    for i, port in enumerate(spec.ports):
        if (port.protocol, port.port) in ports:
            shown = GoText(
                f'core.ServicePort{{Name:"", Protocol:"{port.protocol}", AppProtocol:(*string)(nil), '
                f'Port:{port.port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}'
            )
            found.append(FieldError.duplicate(f"spec.ports[{i}]", shown))
        ports.add((port.protocol, port.port))
    return found


def _source_ranges(service: Message) -> list[FieldError]:
    spec = service.spec
    found: list[FieldError] = []
    if spec.loadBalancerSourceRanges:
        field = "spec.LoadBalancerSourceRanges"
        if spec.type != "LoadBalancer":
            found.append(FieldError.forbidden(field, "may only be used when `type` is 'LoadBalancer'"))
        for i, value in enumerate(spec.loadBalancerSourceRanges):
            found += cidr_errors(f"{field}[{i}]", value.strip())
    elif _LB_SOURCE_RANGES_ANNOTATION in service.metadata.annotations:
        field = f"metadata.annotations[{_LB_SOURCE_RANGES_ANNOTATION}]"
        if spec.type != "LoadBalancer":
            found.append(FieldError.forbidden(field, "may only be used when `type` is 'LoadBalancer'"))
        value = service.metadata.annotations[_LB_SOURCE_RANGES_ANNOTATION].strip()
        for cidr in value.split(",") if value else ():
            found += cidr_errors(field, cidr.strip())
    return found


def _traffic_policies(spec: Message) -> list[FieldError]:
    found: list[FieldError] = []
    if spec.HasField("allocateLoadBalancerNodePorts") and spec.type != "LoadBalancer":
        detail = "may only be used when `type` is 'LoadBalancer'"
        found.append(FieldError.forbidden("spec.allocateLoadBalancerNodePorts", detail))
    if spec.HasField("loadBalancerClass"):
        if spec.type != "LoadBalancer":
            detail = "may only be used when `type` is 'LoadBalancer'"
            found.append(FieldError.forbidden("spec.loadBalancerClass", detail))
        else:
            found += check("spec.loadBalancerClass", spec.loadBalancerClass, qualified_name_problems)
    if not _externally_accessible(spec):
        if spec.externalTrafficPolicy:
            detail = "may only be set for externally-accessible services"
            found.append(FieldError.invalid("spec.externalTrafficPolicy", spec.externalTrafficPolicy, detail))
    else:
        found += enum("spec.externalTrafficPolicy", spec.externalTrafficPolicy, ("Cluster", "Local"))
    needs_health_check = spec.type == "LoadBalancer" and spec.externalTrafficPolicy == "Local"
    if not needs_health_check and spec.healthCheckNodePort:
        detail = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"
        found.append(FieldError.invalid("spec.healthCheckNodePort", spec.healthCheckNodePort, detail))
    elif needs_health_check and spec.healthCheckNodePort:
        port = spec.healthCheckNodePort
        found += invalid_each("spec.healthCheckNodePort", port, port_number_problems(port))
    if spec.HasField("internalTrafficPolicy"):
        found += enum("spec.internalTrafficPolicy", spec.internalTrafficPolicy, ("Cluster", "Local"), required=True)
    if spec.HasField("trafficDistribution") and spec.trafficDistribution != "PreferClose":
        found.append(FieldError.not_supported("spec.trafficDistribution", spec.trafficDistribution, ("PreferClose",)))
    return found


def _cluster_ips(spec: Message) -> list[FieldError]:
    """The clusterIPs given must be IPs (or None for a headless Service), one per family."""
    found: list[FieldError] = []
    if spec.type == "ExternalName":
        return found
    for i, address in enumerate(spec.clusterIPs):
        if address == "None" and i == 0:
            continue
        found += ip_errors(f"spec.clusterIPs[{i}]", address)
    found += [
        FieldError.not_supported(f"spec.ipFamilies[{i}]", family, ("IPv4", "IPv6"))
        for i, family in enumerate(spec.ipFamilies)
        if family not in ("IPv4", "IPv6")
    ]
    if spec.HasField("ipFamilyPolicy"):
        policies = ("PreferDualStack", "RequireDualStack", "SingleStack")
        found += enum("spec.ipFamilyPolicy", spec.ipFamilyPolicy, policies, required=True)
    return found


def service_errors(service: Message) -> list[FieldError]:
    """ValidateService, in upstream's order."""
    spec = service.spec
    found: list[FieldError] = []
    if not spec.ports and not _is_headless(spec) and spec.type != "ExternalName":
        found.append(FieldError.required("spec.ports"))
    found += _type_rules(spec)
    found += _ports(spec)
    found += labels_errors(dict(spec.selector), "spec.selector")
    found += _session_affinity(spec)
    found += _cluster_ips(spec)
    for i, address in enumerate(spec.externalIPs):
        errors = ip_errors(f"spec.externalIPs[{i}]", address)
        found += errors or invalid_each(f"spec.externalIPs[{i}]", address, special_ip_problems(address))
    found += enum("spec.type", spec.type, _SERVICE_TYPES)
    found += _port_uniqueness(spec)
    found += _source_ranges(service)
    return found + _traffic_policies(spec)


@validator("k8s.io.api.core.v1.Service")
def validate_service(service: Message, old: Message | None) -> list[FieldError]:
    if old is None:
        return service_errors(service)
    found: list[FieldError] = []
    spec, old_spec = service.spec, old.spec
    external_name = "ExternalName" in (spec.type, old_spec.type)
    both_headless = _is_headless(spec) and _is_headless(old_spec)
    if not external_name and not both_headless and len(spec.clusterIPs) == len(old_spec.clusterIPs):
        for i, address in enumerate(old_spec.clusterIPs):
            if address != spec.clusterIPs[i]:
                found.append(
                    FieldError.invalid(f"spec.clusterIPs[{i}]", list(spec.clusterIPs), "may not change once set")
                )
    needs_check = [s.type == "LoadBalancer" and s.externalTrafficPolicy == "Local" for s in (spec, old_spec)]
    if all(needs_check) and spec.healthCheckNodePort != old_spec.healthCheckNodePort:
        found.append(FieldError.forbidden("spec.healthCheckNodePort", "field is immutable"))
    return found + service_errors(service)


# ---- Endpoints ------------------------------------------------------------------------------------
def _endpoint_address(address: Message, field: str) -> list[FieldError]:
    found = ip_errors(f"{field}.ip", address.ip)
    if address.hostname:
        found += check(f"{field}.hostname", address.hostname, dns1123_label_problems)
    if address.HasField("nodeName"):
        found += check(f"{field}.nodeName", address.nodeName, dns1123_subdomain_problems)
    return found + invalid_each(f"{field}.ip", address.ip, special_ip_problems(address.ip))


@validator("k8s.io.api.core.v1.Endpoints")
def validate_endpoints(endpoints: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    for i, subset in enumerate(endpoints.subsets):
        where = f"subsets[{i}]"
        if not subset.addresses and not subset.notReadyAddresses:
            found.append(FieldError.required(where, "must specify `addresses` or `notReadyAddresses`"))
        for kind in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(getattr(subset, kind)):
                found += _endpoint_address(address, f"{where}.{kind}[{j}]")
        for j, port in enumerate(subset.ports):
            path = f"{where}.ports[{j}]"
            if len(subset.ports) > 1 and not port.name:
                found.append(FieldError.required(f"{path}.name"))
            elif port.name:
                found += check(f"{path}.name", port.name, dns1123_label_problems)
            found += invalid_each(f"{path}.port", port.port, port_number_problems(port.port))
            found += enum(f"{path}.protocol", port.protocol, PROTOCOLS)
            if port.HasField("appProtocol"):
                found += check(f"{path}.appProtocol", port.appProtocol, qualified_name_problems)
    return found
