"""A Service's cluster IPs and node ports (upstream's pkg/registry/core/service/storage/alloc.go and
the ipallocator and portallocator packages, single-stack as a cluster with one service CIDR is).

``ServiceAllocator.allocate`` runs on every create and update of a Service, after defaulting and
before validation: it fills ``clusterIP``/``clusterIPs``, ``ipFamilies``/``ipFamilyPolicy``, the
ports' ``nodePort`` and ``healthCheckNodePort``, taking them from the ranges in storage, and returns
an ``Allocation`` to commit (release what the old object held and the new one no longer does) or
revert (release what was taken) once the write succeeded or failed. Dry-run writes take nothing.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.registry.allocators.flags import DEFAULT_NODE_PORTS, DEFAULT_SERVICE_CIDR, parse_port_range
from protokube.gateway.registry.allocators.ranges import Allocated, RangeError, RangeStore
from protokube.gateway.storage.backend import Backend

SERVICE_IPS_KEY = "/registry/ranges/serviceips"
NODE_PORTS_KEY = "/registry/ranges/servicenodeports"
NONE = "None"  # a headless service's clusterIP
VALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _ip_static_size(addresses: int) -> int:
    """The lower part of the service CIDR kept for requested IPs: min(max(16, size/16), 256)."""
    return 0 if addresses < 16 else min(max(16, addresses // 16), 256)


def _port_static_size(ports: int) -> int:
    """The lower part of the node port range kept for requested ports: min(max(16, size/32), 128)."""
    return 0 if ports <= 16 else min(max(16, ports // 32), 128)


class IPRange:
    """The service CIDR: offset 0 is the address after the network's, the broadcast is excluded."""

    def __init__(self, backend: Backend, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr)
        self.family = "IPv4" if self.network.version == 4 else "IPv6"
        total = self.network.num_addresses
        self.size = max(total - (2 if self.network.version == 4 else 1), 0)
        self.base = int(self.network.network_address) + 1
        self.store = RangeStore(backend, SERVICE_IPS_KEY, str(self.network), self.size, _ip_static_size(total))

    def offset(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> int | None:
        offset = int(ip) - self.base
        return offset if ip.version == self.network.version and 0 <= offset < self.size else None

    def address(self, offset: int) -> str:
        return str(ipaddress.ip_address(self.base + offset))

    async def allocate(self, text: str, dry_run: bool, held: set[int]) -> int:
        ip = ipaddress.ip_address(text)
        offset = self.offset(ip)
        if offset is None:
            raise RangeError(
                f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {self.network}"
            )
        if offset in held:
            raise Allocated("provided IP is already allocated")
        try:
            await self.store.allocate(offset, dry_run)
        except Allocated:
            raise Allocated("provided IP is already allocated") from None
        return offset

    def offsets(self, ips: list[str]) -> list[int]:
        found = []
        for text in ips:
            try:
                offset = self.offset(ipaddress.ip_address(text))
            except ValueError:
                continue
            if offset is not None:
                found.append(offset)
        return found


class PortRange:
    """The node port range, e.g. 30000-32767 (both ends included)."""

    def __init__(self, backend: Backend, text: str) -> None:
        self.first, self.last = parse_port_range(text)
        self.text = f"{self.first}-{self.last}"
        self.size = self.last - self.first + 1
        self.store = RangeStore(backend, NODE_PORTS_KEY, self.text, self.size, _port_static_size(self.size))

    async def allocate(self, port: int, dry_run: bool, held: set[int]) -> int:
        if not self.first <= port <= self.last:
            raise RangeError(f"provided port is not in the valid range. The range of valid ports is {self.text}")
        offset = port - self.first
        if offset in held:
            raise Allocated("provided port is already allocated")
        try:
            await self.store.allocate(offset, dry_run)
        except Allocated:
            raise Allocated("provided port is already allocated") from None
        return offset

    def offsets(self, ports: list[int]) -> list[int]:
        return [p - self.first for p in ports if self.first <= p <= self.last]


@dataclass
class Allocation:
    """What one write took (released on revert) and what its success frees (released on commit)."""

    ips: IPRange
    ports: PortRange
    dry_run: bool
    taken_ips: set[int] = field(default_factory=set)
    taken_ports: set[int] = field(default_factory=set)
    freed_ips: set[int] = field(default_factory=set)
    freed_ports: set[int] = field(default_factory=set)

    async def commit(self) -> None:
        if not self.dry_run:
            await self.ips.store.release(self.freed_ips - self.taken_ips)
            await self.ports.store.release(self.freed_ports - self.taken_ports)

    async def revert(self) -> None:
        if not self.dry_run:
            await self.ips.store.release(self.taken_ips)
            await self.ports.store.release(self.taken_ports)
        self.taken_ips.clear()
        self.taken_ports.clear()

    # ---- taking ----------------------------------------------------------------------------------
    async def ip(self, text: str) -> None:
        self.taken_ips.add(await self.ips.allocate(text, self.dry_run, self.taken_ips))

    async def next_ip(self) -> str:
        offset = await self.ips.store.allocate_next(self.dry_run, self.taken_ips)
        self.taken_ips.add(offset)
        return self.ips.address(offset)

    async def port(self, port: int) -> None:
        self.taken_ports.add(await self.ports.allocate(port, self.dry_run, self.taken_ports))

    async def next_port(self) -> int:
        offset = await self.ports.store.allocate_next(self.dry_run, self.taken_ports)
        self.taken_ports.add(offset)
        return self.ports.first + offset


class ServiceAllocator:
    def __init__(
        self, backend: Backend, cidr: str = DEFAULT_SERVICE_CIDR, node_ports: str = DEFAULT_NODE_PORTS
    ) -> None:
        self.ips = IPRange(backend, cidr)
        self.ports = PortRange(backend, node_ports)

    async def allocate(self, svc: Message, old: Message | None, dry_run: bool) -> Allocation:
        """Fill what ``svc`` (``old``: the stored object on update) needs; on error, nothing is kept."""
        if old is not None:
            patch_allocated_values(svc, old)
        normalize_cluster_ips(svc, old)
        self._init_ip_families(svc, old)
        allocation = Allocation(self.ips, self.ports, dry_run)
        try:
            await self._cluster_ips(allocation, svc, old)
            await self._node_ports(allocation, svc, old)
        except BaseException:
            await allocation.revert()
            raise
        return allocation

    async def release(self, svc: Message) -> None:
        """Free everything a deleted service held."""
        await self.ips.store.release(self.ips.offsets(_cluster_ips(svc)))
        ports = _node_ports(svc)
        if needs_health_check_node_port(svc) and svc.spec.healthCheckNodePort:
            ports.append(svc.spec.healthCheckNodePort)
        await self.ports.store.release(self.ports.offsets(ports))

    async def repair(self, services: list[Message]) -> None:
        """Mark taken whatever existing services hold (after a restart with other ranges, or a crash
        between an allocation and its write)."""
        ips: list[str] = []
        ports: list[int] = []
        for svc in services:
            ips += _cluster_ips(svc)
            ports += _node_ports(svc)
            if needs_health_check_node_port(svc) and svc.spec.healthCheckNodePort:
                ports.append(svc.spec.healthCheckNodePort)
        await self.ips.store.mark(self.ips.offsets(ips))
        await self.ports.store.mark(self.ports.offsets(ports))

    # ---- IP families -----------------------------------------------------------------------------
    def _init_ip_families(self, svc: Message, old: Message | None) -> None:
        """upstream's initIPFamilyFields for a single-stack cluster."""
        spec = svc.spec
        if spec.type == "ExternalName":
            return
        if not spec.HasField("ipFamilyPolicy"):
            two = len(spec.clusterIPs) == 2 or len(spec.ipFamilies) == 2
            spec.ipFamilyPolicy = "RequireDualStack" if two else "SingleStack"
        _invalid_if(svc, _cluster_ips_errors(spec))
        if old is not None and spec.ipFamilyPolicy == "SingleStack":
            if list(spec.clusterIPs) == list(old.spec.clusterIPs) and len(spec.clusterIPs) > 1:
                del spec.clusterIPs[1:]
            if list(spec.ipFamilies) == list(old.spec.ipFamilies) and len(spec.ipFamilies) > 1:
                del spec.ipFamilies[1:]
        found = []
        for i, ip in enumerate(spec.clusterIPs):
            if ip == NONE:
                break
            family = "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
            if i >= len(spec.ipFamilies):
                if family == self.ips.family:
                    spec.ipFamilies.append(family)
                else:
                    detail = f"{family} is not configured on this cluster"
                    found.append(FieldError.invalid(f"spec.clusterIPs[{i}]", list(spec.clusterIPs), detail))
        _invalid_if(svc, found)
        if spec.clusterIP == NONE and not spec.selector:
            if not spec.ipFamilies:
                spec.ipFamilies.append(self.ips.family)
            if len(spec.ipFamilies) < 2 and spec.ipFamilyPolicy != "SingleStack":
                spec.ipFamilies.append("IPv6" if spec.ipFamilies[0] == "IPv4" else "IPv4")
            return
        if spec.ipFamilyPolicy == "RequireDualStack":
            found.append(
                FieldError.invalid(
                    "spec.ipFamilyPolicy", spec.ipFamilyPolicy, "this cluster is not configured for dual-stack services"
                )
            )
        for i, family in enumerate(spec.ipFamilies):
            if family != self.ips.family:
                found.append(FieldError.invalid(f"spec.ipFamilies[{i}]", family, "not configured on this cluster"))
        _invalid_if(svc, found)
        if not spec.ipFamilies:
            spec.ipFamilies.append(self.ips.family)

    # ---- cluster IPs -----------------------------------------------------------------------------
    async def _cluster_ips(self, allocation: Allocation, svc: Message, old: Message | None) -> None:
        spec = svc.spec
        if old is None or old.spec.type == "ExternalName":
            if spec.type != "ExternalName":
                await self._alloc_cluster_ip(allocation, svc)
        elif spec.type == "ExternalName":
            allocation.freed_ips.update(self.ips.offsets(_cluster_ips(old)))

    async def _alloc_cluster_ip(self, allocation: Allocation, svc: Message) -> None:
        spec = svc.spec
        if spec.clusterIP == NONE:
            return
        if not spec.clusterIP:
            try:
                ip = await allocation.next_ip()
            except RangeError as err:
                raise errors.internal(f"failed to allocate a serviceIP: {err}") from None
            spec.clusterIP = ip
            del spec.clusterIPs[:]
            spec.clusterIPs.append(ip)
            return
        try:
            await allocation.ip(spec.clusterIP)
        except RangeError as err:
            detail = f"failed to allocate IP {spec.clusterIP}: {err}"
            _invalid_if(svc, [FieldError.invalid("spec.clusterIPs", list(spec.clusterIPs), detail)])

    # ---- node ports ------------------------------------------------------------------------------
    async def _node_ports(self, allocation: Allocation, svc: Message, old: Message | None) -> None:
        spec = svc.spec
        if old is None:
            if spec.type in ("NodePort", "LoadBalancer"):
                await self._init_node_ports(allocation, svc)
            if needs_health_check_node_port(svc):
                await self._health_check_node_port(allocation, svc)
            return
        if old.spec.type in ("NodePort", "LoadBalancer") and spec.type in ("ExternalName", "ClusterIP"):
            allocation.freed_ports.update(self.ports.offsets(_node_ports(old)))
        if spec.type in ("NodePort", "LoadBalancer"):
            await self._update_node_ports(allocation, svc, old)
        needed, needs = needs_health_check_node_port(old), needs_health_check_node_port(svc)
        if needs and not needed:
            await self._health_check_node_port(allocation, svc)
        elif needed and not needs:
            allocation.freed_ports.update(self.ports.offsets([old.spec.healthCheckNodePort]))

    async def _init_node_ports(self, allocation: Allocation, svc: Message) -> None:
        """upstream's initNodePorts: ports of the same number share one node port."""
        by_port: dict[int, int] = {}
        ports = svc.spec.ports
        for i, port in enumerate(ports):
            if port.nodePort == 0 and not should_allocate_node_ports(svc):
                continue
            shared = by_port.get(port.port, 0)
            if shared == 0:
                requested = next((p.nodePort for p in ports[i:] if p.port == port.port and p.nodePort), 0)
                if requested:
                    await self._requested_port(allocation, svc, i, requested)
                else:
                    requested = await self._next_port(allocation)
                port.nodePort = by_port[port.port] = requested
            elif port.nodePort != shared:
                if port.nodePort == 0:
                    port.nodePort = shared
                else:
                    await self._requested_port(allocation, svc, i, port.nodePort)

    async def _update_node_ports(self, allocation: Allocation, svc: Message, old: Message) -> None:
        """upstream's updateNodePorts: new requests taken, unset ones picked, old unused ones freed."""
        old_ports = set(_node_ports(old))
        taken: set[int] = set()
        for i, port in enumerate(svc.spec.ports):
            if port.nodePort == 0 and not should_allocate_node_ports(svc):
                continue
            if port.nodePort:
                if port.nodePort not in old_ports and port.nodePort not in taken:
                    await self._requested_port(allocation, svc, i, port.nodePort)
                    taken.add(port.nodePort)
            else:
                port.nodePort = await self._next_port(allocation)
        allocation.freed_ports.update(self.ports.offsets(list(old_ports - set(_node_ports(svc)))))

    async def _requested_port(self, allocation: Allocation, svc: Message, index: int, port: int) -> None:
        try:
            await allocation.port(port)
        except RangeError as err:
            _invalid_if(svc, [FieldError.invalid(f"spec.ports[{index}].nodePort", port, str(err))])

    @staticmethod
    async def _next_port(allocation: Allocation) -> int:
        try:
            return await allocation.next_port()
        except RangeError as err:
            raise errors.internal(f"failed to allocate a nodePort: {err}") from None

    async def _health_check_node_port(self, allocation: Allocation, svc: Message) -> None:
        spec = svc.spec
        requested = spec.healthCheckNodePort
        try:
            if requested:
                await allocation.port(requested)
            else:
                spec.healthCheckNodePort = await allocation.next_port()
        except RangeError as err:
            if requested:
                raise errors.internal(f"failed to allocate requested HealthCheck NodePort {requested}: {err}") from None
            raise errors.internal(f"failed to allocate a HealthCheck NodePort 0: {err}") from None


# ---- what a service needs ------------------------------------------------------------------------
def needs_cluster_ip(svc: Message) -> bool:
    return svc.spec.type != "ExternalName"


def needs_node_port(svc: Message) -> bool:
    return svc.spec.type in ("NodePort", "LoadBalancer")


def should_allocate_node_ports(svc: Message) -> bool:
    spec = svc.spec
    return spec.type == "NodePort" or (spec.type == "LoadBalancer" and spec.allocateLoadBalancerNodePorts)


def needs_health_check_node_port(svc: Message) -> bool:
    return svc.spec.type == "LoadBalancer" and svc.spec.externalTrafficPolicy == "Local"


def _cluster_ips(svc: Message) -> list[str]:
    spec = svc.spec
    if spec.type == "ExternalName" or spec.clusterIP == NONE:
        return []
    return list(spec.clusterIPs) or ([spec.clusterIP] if spec.clusterIP else [])


def _node_ports(svc: Message) -> list[int]:
    return [p.nodePort for p in svc.spec.ports if p.nodePort]


def _invalid_if(svc: Message, found: list[FieldError]) -> None:
    if found:
        raise errors.invalid("", "Service", svc.metadata.name, found)


def _cluster_ips_errors(spec: Message) -> list[FieldError]:
    """The checks of upstream's ValidateServiceClusterIPsRelatedFields allocation relies on."""
    ips = list(spec.clusterIPs)
    found = []
    if ips and spec.clusterIP != ips[0]:
        found.append(FieldError.invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    for i, ip in enumerate(ips):
        if i == 0 and ip == NONE:
            if len(ips) > 1:
                found.append(FieldError.invalid("spec.clusterIPs", ips, "'None' must be the first and only value"))
            continue
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            found.append(FieldError.invalid(f"spec.clusterIPs[{i}]", ip, VALID_IP))
    return found


# ---- keeping what was allocated across updates -----------------------------------------------------
def normalize_cluster_ips(svc: Message, old: Message | None) -> None:
    """Keep clusterIP and clusterIPs in step (upstream's normalizeClusterIPs): old clients set only
    clusterIP, and an update without clusterIPs keeps them when clusterIP is unchanged."""
    spec = svc.spec
    if old is None:
        if spec.clusterIP and not spec.clusterIPs:
            spec.clusterIPs.append(spec.clusterIP)
        return
    if old.spec.clusterIPs and not spec.clusterIPs and old.spec.clusterIP == spec.clusterIP:
        spec.clusterIPs.extend(old.spec.clusterIPs)
    if old.spec.clusterIP != spec.clusterIP:
        same = list(old.spec.clusterIPs) == list(spec.clusterIPs)
        if old.spec.clusterIP and not spec.clusterIP:
            if same:
                del spec.clusterIPs[:]
        elif same:
            del spec.clusterIPs[:]
            spec.clusterIPs.append(spec.clusterIP)


def patch_allocated_values(svc: Message, old: Message) -> None:
    """An update that leaves out allocated values keeps them (upstream's patchAllocatedValues)."""
    spec, old_spec = svc.spec, old.spec
    if needs_cluster_ip(old) and needs_cluster_ip(svc):
        if not spec.clusterIP:
            spec.clusterIP = old_spec.clusterIP
        if not spec.clusterIPs and old_spec.clusterIPs:
            spec.clusterIPs.extend(old_spec.clusterIPs)
    if needs_node_port(old) and needs_node_port(svc):
        used = set(_node_ports(old)) & set(_node_ports(svc))
        by_name = {p.name: p.nodePort for p in old_spec.ports}
        for port in spec.ports:
            if port.nodePort == 0 and by_name.get(port.name, 0) not in used:
                port.nodePort = by_name.get(port.name, 0)
    if needs_health_check_node_port(old) and needs_health_check_node_port(svc) and not spec.healthCheckNodePort:
        spec.healthCheckNodePort = old_spec.healthCheckNodePort


def drop_type_dependent_fields(svc: Message, old: Message) -> None:
    """On update, what the new type no longer uses goes, unless the client changed it (upstream's
    dropTypeDependentFields, in the Service strategy's PrepareForUpdate)."""
    spec, old_spec = svc.spec, old.spec
    if needs_cluster_ip(old) and not needs_cluster_ip(svc):
        if list(spec.clusterIPs) == list(old_spec.clusterIPs) and spec.clusterIP == old_spec.clusterIP:
            spec.clusterIP = ""
            del spec.clusterIPs[:]
        if list(spec.ipFamilies) == list(old_spec.ipFamilies):
            del spec.ipFamilies[:]
        if _optional(spec, "ipFamilyPolicy") == _optional(old_spec, "ipFamilyPolicy"):
            spec.ClearField("ipFamilyPolicy")
    if needs_node_port(old) and not needs_node_port(svc) and _node_ports_by_index(svc) == _node_ports_by_index(old):
        for port in spec.ports:
            port.nodePort = 0
    if (
        needs_health_check_node_port(old)
        and not needs_health_check_node_port(svc)
        and spec.healthCheckNodePort == old_spec.healthCheckNodePort
    ):
        spec.healthCheckNodePort = 0
    if old_spec.type == "LoadBalancer" and spec.type != "LoadBalancer":
        both = spec.HasField("allocateLoadBalancerNodePorts") and old_spec.HasField("allocateLoadBalancerNodePorts")
        if both and spec.allocateLoadBalancerNodePorts == old_spec.allocateLoadBalancerNodePorts:
            spec.ClearField("allocateLoadBalancerNodePorts")
        if _optional(spec, "loadBalancerClass") == _optional(old_spec, "loadBalancerClass"):
            spec.ClearField("loadBalancerClass")
    accessible_no_more = _externally_accessible(old) and not _externally_accessible(svc)
    if accessible_no_more and spec.externalTrafficPolicy == old_spec.externalTrafficPolicy:
        spec.externalTrafficPolicy = ""
    if spec.type != "LoadBalancer":
        svc.status.ClearField("loadBalancer")


def _optional(message: Message, name: str) -> object:
    return getattr(message, name) if message.HasField(name) else None


def _node_ports_by_index(svc: Message) -> list[int]:
    return [p.nodePort for p in svc.spec.ports]


def _externally_accessible(svc: Message) -> bool:
    spec = svc.spec
    return spec.type in ("LoadBalancer", "NodePort") or (spec.type == "ClusterIP" and len(spec.externalIPs) > 0)
