"""Cells of networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import NONE, Row, cell, format_label_selector

MAX_HOSTS = 3


@cell("ingress_class")
def ingress_class(row: Row) -> str:
    spec = row.obj.spec
    return spec.ingressClassName if spec.HasField("ingressClassName") else NONE


@cell("ingress_hosts")
def ingress_hosts(row: Row) -> str:
    """upstream's formatHosts: the hosts of the rules until three are found, "*" when none."""
    rules = row.obj.spec.rules
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == MAX_HOSTS
        if not more and rule.host:
            hosts.append(rule.host)
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return text + f" + {len(rules) - MAX_HOSTS} more..." if more else text


@cell("ingress_address")
def ingress_address(row: Row) -> str:
    """The load balancer's IPs (else hostnames), sorted, unclipped: server tables are wide."""
    ingress = row.obj.status.loadBalancer.ingress
    return ",".join(sorted({i.ip or i.hostname for i in ingress if i.ip or i.hostname}))


@cell("ingress_ports")
def ingress_ports(row: Row) -> str:
    return "80, 443" if row.obj.spec.tls else "80"


@cell("ingressclass_parameters")
def ingressclass_parameters(row: Row) -> str:
    spec = row.obj.spec
    if not spec.HasField("parameters"):
        return NONE
    params = spec.parameters
    kind = f"{params.kind}.{params.aPIGroup}" if params.HasField("aPIGroup") else params.kind
    return f"{kind}/{params.name}"


@cell("networkpolicy_pod_selector")
def networkpolicy_pod_selector(row: Row) -> str:
    return format_label_selector(row.obj.spec.podSelector)
