"""Cells of core/v1 kinds: pods, services, endpoints, nodes, configuration, events."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import (
    NONE,
    ROW_CONDITIONS,
    Row,
    cell,
    format_labels,
    time_seconds,
)
from protokube.gateway.printing.humanize import since


# ---- pods ------------------------------------------------------------------------------------
def _pod_summary(row: Row) -> dict[str, Any]:
    if "pod" in row.memo:
        return row.memo["pod"]
    pod = row.obj
    spec, status = pod.spec, pod.status
    restarts = restartable_restarts = 0
    ready = 0
    total = len(spec.containers)
    last_restart = last_restartable_restart = 0
    reason = status.reason or status.phase
    for condition in status.conditions:
        if condition.type == "PodScheduled" and condition.reason == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {c.name: c for c in spec.initContainers}
    restartable = {name for name, c in init_specs.items() if c.restartPolicy == "Always"}
    total += len(restartable)

    initializing = False
    for index, container in enumerate(status.initContainerStatuses):
        restarts += container.restartCount
        finished = (
            container.lastState.terminated.finishedAt.seconds if container.lastState.HasField("terminated") else 0
        )
        last_restart = max(last_restart, finished)
        if container.name in restartable:
            restartable_restarts += container.restartCount
            last_restartable_restart = max(last_restartable_restart, finished)
        state = container.state
        if state.HasField("terminated") and state.terminated.exitCode == 0:
            continue
        if container.name in restartable and container.HasField("started") and container.started:
            ready += container.ready
            continue
        if state.HasField("terminated"):
            terminated = state.terminated
            if terminated.reason:
                reason = "Init:" + terminated.reason
            elif terminated.signal:
                reason = f"Init:Signal:{terminated.signal}"
            else:
                reason = f"Init:ExitCode:{terminated.exitCode}"
        elif state.HasField("waiting") and state.waiting.reason and state.waiting.reason != "PodInitializing":
            reason = "Init:" + state.waiting.reason
        else:
            reason = f"Init:{index}/{len(spec.initContainers)}"
        initializing = True
        break

    initialized = any(c.type == "Initialized" and c.status == "True" for c in status.conditions)
    if not initializing or initialized:
        restarts, last_restart = restartable_restarts, last_restartable_restart
        has_running = False
        for container in reversed(status.containerStatuses):
            restarts += container.restartCount
            if container.lastState.HasField("terminated"):
                last_restart = max(last_restart, container.lastState.terminated.finishedAt.seconds)
            state = container.state
            if state.HasField("waiting") and state.waiting.reason:
                reason = state.waiting.reason
            elif state.HasField("terminated") and state.terminated.reason:
                reason = state.terminated.reason
            elif state.HasField("terminated"):
                terminated = state.terminated
                reason = f"Signal:{terminated.signal}" if terminated.signal else f"ExitCode:{terminated.exitCode}"
            elif container.ready and state.HasField("running"):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            has_ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions)
            reason = "Running" if has_ready else "NotReady"

    if pod.metadata.HasField("deletionTimestamp"):
        if status.reason == "NodeLost":
            reason = "Unknown"
        elif status.phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart:
        restarts_text = f"{restarts} ({since(last_restart, row.now)} ago)"
    summary = {"ready": f"{ready}/{total}", "status": reason, "restarts": restarts_text}
    row.memo["pod"] = summary
    return summary


@cell("pod_ready")
def pod_ready(row: Row) -> str:
    return _pod_summary(row)["ready"]


@cell("pod_status")
def pod_status(row: Row) -> str:
    return _pod_summary(row)["status"]


@cell("pod_restarts")
def pod_restarts(row: Row) -> str:
    return _pod_summary(row)["restarts"]


@cell("pod_ip")
def pod_ip(row: Row) -> str:
    ips = row.obj.status.podIPs
    return (ips[0].ip if ips else "") or NONE


@cell("pod_node")
def pod_node(row: Row) -> str:
    return row.obj.spec.nodeName or NONE


@cell("pod_nominated_node")
def pod_nominated_node(row: Row) -> str:
    return row.obj.status.nominatedNodeName or NONE


@cell("pod_readiness_gates")
def pod_readiness_gates(row: Row) -> str:
    gates = row.obj.spec.readinessGates
    if not gates:
        return NONE
    conditions = {c.type: c.status for c in row.obj.status.conditions}
    passed = sum(1 for gate in gates if conditions.get(gate.conditionType) == "True")
    return f"{passed}/{len(gates)}"


def pod_row_conditions(obj: Message) -> list[dict[str, str]]:
    """Succeeded and Failed pods are marked Completed (kubectl hides them unless asked)."""
    if obj.status.phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if obj.status.phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


ROW_CONDITIONS["k8s.io.api.core.v1.Pod"] = pod_row_conditions


# ---- services, endpoints, nodes ------------------------------------------------------------
@cell("service_cluster_ip")
def service_cluster_ip(row: Row) -> str:
    return row.obj.spec.clusterIP or NONE


@cell("service_external_ip")
def service_external_ip(row: Row) -> str:
    spec, status = row.obj.spec, row.obj.status
    if spec.type == "ExternalName":
        return spec.externalName
    if spec.type == "LoadBalancer":
        ips = [i.ip or i.hostname for i in status.loadBalancer.ingress] + list(spec.externalIPs)
        return ",".join(ips) if ips else "<pending>"
    return ",".join(spec.externalIPs) or NONE


@cell("service_ports")
def service_ports(row: Row) -> str:
    ports = []
    for port in row.obj.spec.ports:
        protocol = port.protocol or "TCP"
        ports.append(f"{port.port}:{port.nodePort}/{protocol}" if port.nodePort else f"{port.port}/{protocol}")
    return ",".join(ports) or NONE


@cell("service_selector")
def service_selector(row: Row) -> str:
    return format_labels(dict(row.obj.spec.selector))


@cell("endpoints")
def endpoints(row: Row) -> str:
    addresses = []
    for subset in row.obj.subsets:
        for address in subset.addresses:
            if subset.ports:
                addresses += [f"{address.ip}:{port.port}" for port in subset.ports]
            else:
                addresses.append(address.ip)
    if not addresses:
        return NONE
    text = ",".join(addresses[:3])
    return text + f" + {len(addresses) - 3} more..." if len(addresses) > 3 else text


@cell("node_status")
def node_status(row: Row) -> str:
    ready = next((c.status for c in row.obj.status.conditions if c.type == "Ready"), "Unknown")
    states = [{"True": "Ready", "False": "NotReady"}.get(ready, "Unknown")]
    if row.obj.spec.unschedulable:
        states.append("SchedulingDisabled")
    return ",".join(states)


@cell("node_roles")
def node_roles(row: Row) -> str:
    roles = set()
    for key, value in row.obj.metadata.labels.items():
        if key.startswith("node-role.kubernetes.io/"):
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(r for r in roles if r)) or NONE


def _node_address(row: Row, kind: str) -> str:
    return next((a.address for a in row.obj.status.addresses if a.type == kind), NONE)


@cell("node_internal_ip")
def node_internal_ip(row: Row) -> str:
    return _node_address(row, "InternalIP")


@cell("node_external_ip")
def node_external_ip(row: Row) -> str:
    return _node_address(row, "ExternalIP")


# ---- configuration -------------------------------------------------------------------------
@cell("configmap_data")
def configmap_data(row: Row) -> int:
    return len(row.obj.data) + len(row.obj.binaryData)


@cell("secret_data")
def secret_data(row: Row) -> int:
    return len(row.obj.data)


@cell("count_secrets")
def count_secrets(row: Row) -> int:
    return len(row.obj.secrets)


# ---- events ----------------------------------------------------------------------------------
def _event_times(row: Row) -> dict[str, Any]:
    if "event" in row.memo:
        return row.memo["event"]
    event = row.obj
    first = since(time_seconds(event.firstTimestamp), row.now)
    if not event.firstTimestamp.HasField("seconds"):
        first = since(time_seconds(event.eventTime), row.now)
    last = since(time_seconds(event.lastTimestamp), row.now) if event.lastTimestamp.HasField("seconds") else first
    count = event.count
    if event.HasField("series"):
        last = since(time_seconds(event.series.lastObservedTime), row.now)
        count = event.series.count
    elif count == 0:
        count = 1
    row.memo["event"] = {"first": first, "last": last, "count": count}
    return row.memo["event"]


@cell("event_last_seen")
def event_last_seen(row: Row) -> str:
    return _event_times(row)["last"]


@cell("event_first_seen")
def event_first_seen(row: Row) -> str:
    return _event_times(row)["first"]


@cell("event_count")
def event_count(row: Row) -> int:
    return _event_times(row)["count"]


@cell("event_object")
def event_object(row: Row) -> str:
    involved = row.obj.involvedObject
    kind = involved.kind.lower()
    return f"{kind}/{involved.name}" if involved.name else kind


@cell("event_source")
def event_source(row: Row) -> str:
    event = row.obj
    component = event.source.component or event.reportingComponent
    host = event.source.host or event.reportingInstance
    return f"{component}, {host}" if host else component
