"""networking.k8s.io/v1 (k8s.io/kubernetes pkg/apis/networking/validation): NetworkPolicies (ports,
peers, IP blocks, policy types), Ingresses (backends, rules, paths, TLS hosts, class) and
IngressClasses (a domain-prefixed controller that never changes, parameters)."""

from __future__ import annotations

import ipaddress

from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    check,
    domain_prefixed_path_errors,
    enum,
    immutable,
    invalid_each,
    label_selector_errors,
    parse_ip,
)
from protokube.gateway.registry.validation.meta import name_problems
from protokube.gateway.syntax import (
    dns1035_label_problems,
    dns1123_subdomain_problems,
    port_name_problems,
    port_number_problems,
    wildcard_subdomain_problems,
)

_NETWORKING = "k8s.io.api.networking.v1."
_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
MAX_CONTROLLER_LENGTH = 250


# ---- NetworkPolicy --------------------------------------------------------------------------------
def _policy_port(port: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if port.HasField("protocol") and port.protocol not in ("TCP", "UDP", "SCTP"):
        found.append(FieldError.not_supported(f"{field}.protocol", port.protocol, ("TCP", "UDP", "SCTP")))
    if port.HasField("port"):
        if port.port.type == 1:
            found += invalid_each(f"{field}.port", port.port.strVal, port_name_problems(port.port.strVal))
        else:
            found += invalid_each(f"{field}.port", port.port.intVal, port_number_problems(port.port.intVal))
    if port.HasField("endPort"):
        if not port.HasField("port"):
            found.append(FieldError.required(f"{field}.port", "must be specified when endPort is specified"))
        elif port.port.type == 1:
            found.append(FieldError.forbidden(f"{field}.endPort", "may not be specified when `port` is non-numeric"))
        elif port.endPort < port.port.intVal:
            found.append(
                FieldError.invalid(f"{field}.endPort", port.endPort, "must be greater than or equal to `port`")
            )
    return found


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    address, slash, bits = text.partition("/")
    ip = parse_ip(address)
    if not slash or ip is None or not bits.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)
    except ValueError:
        return None


def _ip_block(block: Message, field: str) -> list[FieldError]:
    if not block.cidr:
        return [FieldError.required(f"{field}.cidr")]
    network = _network(block.cidr)
    if network is None:
        return [FieldError.invalid(f"{field}.cidr", block.cidr, "not a valid CIDR")]
    found = []
    for i, text in enumerate(getattr(block, "except")):
        excluded = _network(text)
        if excluded is None:
            return [*found, FieldError.invalid(f"{field}.except[{i}]", text, "not a valid CIDR")]
        inside = excluded.version == network.version and excluded.network_address in network
        if not inside or network.prefixlen >= excluded.prefixlen:
            found.append(FieldError.invalid(f"{field}.except[{i}]", text, "must be a strict subset of `cidr`"))
    return found


def _peer(peer: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    count = 0
    for name in ("podSelector", "namespaceSelector"):
        if peer.HasField(name):
            count += 1
            found += label_selector_errors(getattr(peer, name), f"{field}.{name}")
    if peer.HasField("ipBlock"):
        count += 1
        found += _ip_block(peer.ipBlock, f"{field}.ipBlock")
    if count == 0:
        found.append(FieldError.required(field, "must specify a peer"))
    elif count > 1 and peer.HasField("ipBlock"):
        found.append(FieldError.forbidden(field, "may not specify both ipBlock and another peer"))
    return found


@validator(_NETWORKING + "NetworkPolicy")
def validate_network_policy(policy: Message, old: Message | None) -> list[FieldError]:
    spec = policy.spec
    found = label_selector_errors(spec.podSelector, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(getattr(spec, direction)):
            where = f"spec.{direction}[{i}]"
            for j, port in enumerate(rule.ports):
                found += _policy_port(port, f"{where}.ports[{j}]")
            for j, peer in enumerate(getattr(rule, peers)):
                found += _peer(peer, f"{where}.{peers}[{j}]")
    if len(spec.policyTypes) > 2:
        shown = GoText("&[]networking.PolicyType{...}")
        return [*found, FieldError.invalid("spec.policyTypes", shown, "may not specify more than two policyTypes")]
    for i, kind in enumerate(spec.policyTypes):
        found += enum(f"spec.policyTypes[{i}]", kind, ("Ingress", "Egress"), required=True)
    return found


# ---- Ingress --------------------------------------------------------------------------------------
def _path_segment_problems(value: str) -> list[str]:
    return name_problems(opts.NAME_RULE_PATH_SEGMENT, value)


def _typed_reference(reference: Message, field: str, group_field: str = "apiGroup") -> list[FieldError]:
    """validateIngressTypedLocalObjectReference (``group_field``: where the message keeps apiGroup)."""
    found: list[FieldError] = []
    if reference.HasField(group_field):
        found += check(f"{field}.apiGroup", getattr(reference, group_field), dns1123_subdomain_problems)
    for name in ("kind", "name"):
        value = getattr(reference, name)
        if not value:
            found.append(FieldError.required(f"{field}.{name}", f"{name} is required"))
        else:
            found += check(f"{field}.{name}", value, _path_segment_problems)
    return found


def _backend(backend: Message, field: str) -> list[FieldError]:
    has_resource, has_service = backend.HasField("resource"), backend.HasField("service")
    if has_resource and has_service:
        return [FieldError.invalid(field, "", "cannot set both resource and service backends")]
    if has_resource:
        return _typed_reference(backend.resource, f"{field}.resource")
    if not has_service:
        return [FieldError.invalid(field, "", "resource or service backend is required")]
    service = backend.service
    found: list[FieldError] = []
    if not service.name:
        found.append(FieldError.required(f"{field}.service.name"))
    else:
        found += check(f"{field}.service.name", service.name, dns1035_label_problems)
    port = service.port
    if port.name and port.number:
        found.append(FieldError.invalid(field, "", "cannot set both port name & port number"))
    elif port.name:
        found += invalid_each(f"{field}.service.port.name", port.name, port_name_problems(port.name))
    elif port.number:
        found += invalid_each(f"{field}.service.port.number", port.number, port_number_problems(port.number))
    else:
        found.append(FieldError.required(field, "port name or number is required"))
    return found


def _http_path(path: Message, field: str) -> list[FieldError]:
    if not path.HasField("pathType"):
        return [FieldError.required(f"{field}.pathType", "pathType must be specified")]
    found: list[FieldError] = []
    value = path.path
    if path.pathType in ("Exact", "Prefix"):
        if not value.startswith("/"):
            found.append(FieldError.invalid(f"{field}.path", value, "must be an absolute path"))
        for sequence in _INVALID_PATH_SEQUENCES if value else ():
            if sequence in value:
                found.append(FieldError.invalid(f"{field}.path", value, f"must not contain '{sequence}'"))
        for suffix in _INVALID_PATH_SUFFIXES if value else ():
            if value.endswith(suffix):
                found.append(FieldError.invalid(f"{field}.path", value, f"cannot end with '{suffix}'"))
    elif path.pathType == "ImplementationSpecific":
        if value and not value.startswith("/"):
            found.append(FieldError.invalid(f"{field}.path", value, "must be an absolute path"))
    else:
        found.append(FieldError.not_supported(f"{field}.pathType", path.pathType, _PATH_TYPES))
    return found + _backend(path.backend, f"{field}.backend")


def _host_errors(host: str, field: str) -> list[FieldError]:
    if "*" in host:
        return check(field, host, wildcard_subdomain_problems)
    return check(field, host, dns1123_subdomain_problems)


def _rules(rules: list[Message]) -> list[FieldError]:
    found: list[FieldError] = []
    for i, rule in enumerate(rules):
        where = f"spec.rules[{i}]"
        if rule.host:
            if parse_ip(rule.host) is not None and "*" not in rule.host:
                found.append(FieldError.invalid(f"{where}.host", rule.host, "must be a DNS name, not an IP address"))
            found += _host_errors(rule.host, f"{where}.host")
        if rule.ingressRuleValue.HasField("http"):
            paths = rule.ingressRuleValue.http.paths
            if not paths:
                found.append(FieldError.required(f"{where}.http.paths"))
            for j, path in enumerate(paths):
                found += _http_path(path, f"{where}.http.paths[{j}]")
    return found


@validator(_NETWORKING + "Ingress")
def validate_ingress(ingress: Message, old: Message | None) -> list[FieldError]:
    spec = ingress.spec
    found: list[FieldError] = []
    if not spec.rules and not spec.HasField("defaultBackend"):
        shown = GoText("[]networking.IngressRule(nil)")
        found.append(FieldError.invalid("spec", shown, "either `defaultBackend` or `rules` must be specified"))
    if spec.HasField("defaultBackend"):
        found += _backend(spec.defaultBackend, "spec.defaultBackend")
    found += _rules(list(spec.rules))
    for tls in spec.tls:
        for i, host in enumerate(tls.hosts):
            found += _host_errors(host, f"spec.tls[{i}].hosts")
    if spec.HasField("ingressClassName"):
        found += check("spec.ingressClassName", spec.ingressClassName, dns1123_subdomain_problems)
    annotation = "kubernetes.io/ingress.class"
    if old is None and annotation in ingress.metadata.annotations and spec.HasField("ingressClassName"):
        value = ingress.metadata.annotations[annotation]
        found.append(
            FieldError.invalid(f"annotations.{annotation}", value, "can not be set when the class field is also set")
        )
    return found


# ---- IngressClass ---------------------------------------------------------------------------------
def _parameters(parameters: Message, field: str) -> list[FieldError]:
    found = _typed_reference(parameters, field, "aPIGroup")
    scope = parameters.scope if parameters.HasField("scope") else None
    if scope is None:
        found.append(FieldError.required(f"{field}.scope", ""))
        return found
    if scope not in ("Cluster", "Namespace"):
        found.append(FieldError.not_supported(f"{field}.scope", scope, ("Cluster", "Namespace")))
    if scope == "Namespace":
        if not parameters.HasField("namespace"):
            found.append(FieldError.required(f"{field}.namespace", "`parameters.scope` is set to 'Namespace'"))
        else:
            found += check(f"{field}.namespace", parameters.namespace, dns1035_label_problems)
    elif scope == "Cluster" and parameters.HasField("namespace"):
        found.append(FieldError.forbidden(f"{field}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return found


@validator(_NETWORKING + "IngressClass")
def validate_ingress_class(ingress_class: Message, old: Message | None) -> list[FieldError]:
    spec = ingress_class.spec
    found: list[FieldError] = []
    if len(spec.controller) > MAX_CONTROLLER_LENGTH:
        found.append(FieldError.too_long("spec.controller", MAX_CONTROLLER_LENGTH))
    found += domain_prefixed_path_errors("spec.controller", spec.controller)
    if spec.HasField("parameters"):
        found += _parameters(spec.parameters, "spec.parameters")
    if old is not None:
        found += immutable("spec.controller", spec.controller, old.spec.controller)
    return found
