"""Cells of discovery.k8s.io/v1 EndpointSlices (upstream's printEndpointSlice)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import Row, cell

MAX_SHOWN = 3


def list_with_more(items: list[str]) -> str:
    """upstream's listWithMoreString: up to three items, "+ N more...", "<unset>" for none."""
    if len(items) > MAX_SHOWN:
        return ",".join(items[:MAX_SHOWN]) + f" + {len(items) - MAX_SHOWN} more..."
    return ",".join(items) or "<unset>"


@cell("endpointslice_ports")
def endpointslice_ports(row: Row) -> str:
    ports = []
    for port in row.obj.ports:
        if port.HasField("port"):
            ports.append(str(port.port))
        elif port.HasField("name"):
            ports.append(port.name)
        else:
            ports.append("*")
    return list_with_more(ports)


@cell("endpointslice_endpoints")
def endpointslice_endpoints(row: Row) -> str:
    return list_with_more([address for endpoint in row.obj.endpoints for address in endpoint.addresses])
