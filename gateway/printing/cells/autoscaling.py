"""Cells of autoscaling/v2 HorizontalPodAutoscalers (upstream's printHorizontalPodAutoscaler).

HPAs read here are stored as written; upstream defaults minReplicas to 1 and an empty metrics list
to one CPU utilization target of 80%, so the cells do too.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import NONE, Row, cell
from protokube.gen.k8s.io.api.autoscaling.v2 import types_pb2 as autoscaling

UNKNOWN = "<unknown>"
# upstream's default metric (SetDefaults_HorizontalPodAutoscaler): CPU at 80% utilization.
DEFAULT_METRIC = autoscaling.MetricSpec(
    type="Resource",
    resource=autoscaling.ResourceMetricSource(
        name="cpu", target=autoscaling.MetricTarget(type="Utilization", averageUtilization=80)
    ),
)
MAX_METRICS = 2


def _quantity(q: Message) -> str:
    return q.string or "0"


def _current(statuses: list[Message], i: int, source: str) -> Message | None:
    if i < len(statuses) and statuses[i].HasField(source):
        return getattr(statuses[i], source)
    return None


def _resource_metric(name: str, target: Message, current: Message | None) -> str:
    if target.HasField("averageValue"):
        value = _quantity(current.current.averageValue) if current is not None else UNKNOWN
        return f"{name}: {value}/{_quantity(target.averageValue)}"
    value = UNKNOWN
    if current is not None and current.current.HasField("averageUtilization"):
        value = f"{current.current.averageUtilization}%"
    goal = f"{target.averageUtilization}%" if target.HasField("averageUtilization") else "<auto>"
    return f"{name}: {value}/{goal}"


def _object_metric(target: Message, current: Message | None) -> str:
    """External and Object metrics: an average value, or a value."""
    if target.HasField("averageValue"):
        value = UNKNOWN
        if current is not None and current.current.HasField("averageValue"):
            value = _quantity(current.current.averageValue)
        return f"{value}/{_quantity(target.averageValue)} (avg)"
    value = _quantity(current.current.value) if current is not None else UNKNOWN
    return f"{value}/{_quantity(target.value)}"


def format_metrics(specs: list[Message], statuses: list[Message]) -> str:
    """upstream's formatHPAMetrics: at most two metrics, then "+ N more..."."""
    if not specs:
        return NONE
    texts = []
    for i, spec in enumerate(specs):
        if spec.type == "External":
            texts.append(_object_metric(spec.external.target, _current(statuses, i, "external")))
        elif spec.type == "Pods":
            current = _current(statuses, i, "pods")
            value = _quantity(current.current.averageValue) if current is not None else UNKNOWN
            texts.append(f"{value}/{_quantity(spec.pods.target.averageValue)}")
        elif spec.type == "Object":
            texts.append(_object_metric(spec.object.target, _current(statuses, i, "object")))
        elif spec.type == "Resource":
            current = _current(statuses, i, "resource")
            texts.append(_resource_metric(spec.resource.name, spec.resource.target, current))
        elif spec.type == "ContainerResource":
            current = _current(statuses, i, "containerResource")
            texts.append(_resource_metric(spec.containerResource.name, spec.containerResource.target, current))
        else:
            texts.append("<unknown type>")
    if len(texts) > MAX_METRICS:
        return ", ".join(texts[:MAX_METRICS]) + f" + {len(texts) - MAX_METRICS} more..."
    return ", ".join(texts)


@cell("hpa_reference")
def hpa_reference(row: Row) -> str:
    ref = row.obj.spec.scaleTargetRef
    return f"{ref.kind}/{ref.name}"


@cell("hpa_targets")
def hpa_targets(row: Row) -> str:
    specs = list(row.obj.spec.metrics) or [DEFAULT_METRIC]
    return format_metrics(specs, list(row.obj.status.currentMetrics))


@cell("hpa_min_pods")
def hpa_min_pods(row: Row) -> str:
    spec = row.obj.spec
    return str(spec.minReplicas if spec.HasField("minReplicas") else 1)


@cell("hpa_max_pods")
def hpa_max_pods(row: Row) -> int:
    return row.obj.spec.maxReplicas


@cell("hpa_replicas")
def hpa_replicas(row: Row) -> int:
    return row.obj.status.currentReplicas
