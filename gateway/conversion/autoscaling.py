"""autoscaling/v1 HorizontalPodAutoscaler ⇄ autoscaling/v2, the stored version (upstream's
pkg/apis/autoscaling/v1/conversion.go).

v1 has one metric of its own, the CPU utilization target; every other metric, the current metrics
and the conditions travel in annotations, as v1 MetricSpec / MetricStatus / condition JSON:

- ``autoscaling.alpha.kubernetes.io/metrics``: spec metrics other than the CPU utilization target;
- ``autoscaling.alpha.kubernetes.io/current-metrics``: every current metric;
- ``autoscaling.alpha.kubernetes.io/conditions``: the status conditions.

Read back through v1 and written again, an object keeps them all: nothing v2 says is dropped.
A v1 object without any metric gets upstream's implicit one (CPU, 80% utilization).
"""

from __future__ import annotations

from typing import Any

import orjson

from protokube.gateway.conversion.base import JSONObject, conversion
from protokube.schema import jsondecode, jsonencode
from protokube.schema.registry import GroupVersionKind

METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
DEFAULT_CPU_UTILIZATION = 80
V1 = "k8s.io.api.autoscaling.v1."


def _go_json(values: list[JSONObject], message: str) -> str:
    """A list of v1 values as Go's json.Marshal writes it (field order, omitempty, quantities)."""
    typed = [jsonencode.to_dict(jsondecode.decode(value, V1 + message).message) for value in values]
    return orjson.dumps(typed).decode()


def _is_cpu_utilization(metric: JSONObject) -> bool:
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    return metric.get("type") == "Resource" and resource.get("name") == "cpu" and "averageUtilization" in target


def _some(**values: Any) -> JSONObject:
    """Only the values that are set (Go's omitempty)."""
    return {k: v for k, v in values.items() if v is not None}


# ---- v2 → v1 -----------------------------------------------------------------------------------
def _metric_to_v1(metric: JSONObject) -> JSONObject:
    kind = metric.get("type", "")
    out: JSONObject = {"type": kind}
    if "object" in metric:
        source = metric["object"]
        target, ident = source.get("target") or {}, source.get("metric") or {}
        described = source.get("describedObject") or {}
        out["object"] = _some(
            target=_some(
                kind=described.get("kind"), name=described.get("name"), apiVersion=described.get("apiVersion")
            ),
            metricName=ident.get("name"),
            targetValue=target.get("value", "0"),
            selector=ident.get("selector"),
            averageValue=target.get("averageValue"),
        )
    if "pods" in metric:
        source = metric["pods"]
        target, ident = source.get("target") or {}, source.get("metric") or {}
        out["pods"] = _some(
            metricName=ident.get("name"),
            targetAverageValue=target.get("averageValue", "0"),
            selector=ident.get("selector"),
        )
    for field in ("resource", "containerResource"):
        if field in metric:
            source = metric[field]
            target = source.get("target") or {}
            out[field] = _some(
                name=source.get("name"),
                targetAverageUtilization=target.get("averageUtilization"),
                targetAverageValue=target.get("averageValue"),
                container=source.get("container"),
            )
    if "external" in metric:
        source = metric["external"]
        target, ident = source.get("target") or {}, source.get("metric") or {}
        out["external"] = _some(
            metricName=ident.get("name"),
            metricSelector=ident.get("selector"),
            targetValue=target.get("value"),
            targetAverageValue=target.get("averageValue"),
        )
    return out


def _status_to_v1(metric: JSONObject) -> JSONObject:
    kind = metric.get("type", "")
    out: JSONObject = {"type": kind}
    if "object" in metric:
        source = metric["object"]
        current, ident = source.get("current") or {}, source.get("metric") or {}
        described = source.get("describedObject") or {}
        out["object"] = _some(
            target=_some(
                kind=described.get("kind"), name=described.get("name"), apiVersion=described.get("apiVersion")
            ),
            metricName=ident.get("name"),
            currentValue=current.get("value", "0"),
            selector=ident.get("selector"),
            averageValue=current.get("averageValue"),
        )
    if "pods" in metric:
        source = metric["pods"]
        current, ident = source.get("current") or {}, source.get("metric") or {}
        out["pods"] = _some(
            metricName=ident.get("name"),
            currentAverageValue=current.get("averageValue", "0"),
            selector=ident.get("selector"),
        )
    for field in ("resource", "containerResource"):
        if field in metric:
            source = metric[field]
            current = source.get("current") or {}
            out[field] = _some(
                name=source.get("name"),
                currentAverageUtilization=current.get("averageUtilization"),
                currentAverageValue=current.get("averageValue", "0"),
                container=source.get("container"),
            )
    if "external" in metric:
        source = metric["external"]
        current, ident = source.get("current") or {}, source.get("metric") or {}
        out["external"] = _some(
            metricName=ident.get("name"),
            metricSelector=ident.get("selector"),
            currentValue=current.get("value", "0"),
            currentAverageValue=current.get("averageValue"),
        )
    return out


def to_v1(hpa: JSONObject) -> JSONObject:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    metrics = spec.get("metrics") or []
    cpu = next(
        (m for m in metrics if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu"), None
    )
    v1_spec = _some(
        scaleTargetRef=spec.get("scaleTargetRef"),
        minReplicas=spec.get("minReplicas"),
        maxReplicas=spec.get("maxReplicas"),
        targetCPUUtilizationPercentage=((cpu or {}).get("resource") or {}).get("target", {}).get("averageUtilization"),
    )
    current_cpu = None
    for metric in status.get("currentMetrics") or []:
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            current_cpu = (resource.get("current") or {}).get("averageUtilization", current_cpu)
    v1_status = _some(
        observedGeneration=status.get("observedGeneration"),
        lastScaleTime=status.get("lastScaleTime"),
        currentReplicas=status.get("currentReplicas", 0),
        desiredReplicas=status.get("desiredReplicas", 0),
        currentCPUUtilizationPercentage=current_cpu,
    )
    metadata = dict(hpa.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    others = [_metric_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRICS] = _go_json(others, "MetricSpec")
    if status.get("currentMetrics"):
        annotations[CURRENT_METRICS] = _go_json([_status_to_v1(m) for m in status["currentMetrics"]], "MetricStatus")
    if status.get("conditions"):
        annotations[CONDITIONS] = _go_json(status["conditions"], "HorizontalPodAutoscalerCondition")
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": v1_spec, "status": v1_status}


# ---- v1 → v2 -----------------------------------------------------------------------------------
def _ident(name: Any, selector: Any) -> JSONObject:
    return _some(name=name, selector=selector)


def _metric_from_v1(metric: JSONObject) -> JSONObject:
    out: JSONObject = {"type": metric.get("type", "")}
    if "object" in metric:
        source = metric["object"]
        described = source.get("target") or {}
        average = source.get("averageValue")
        out["object"] = {
            "describedObject": _some(
                kind=described.get("kind"), name=described.get("name"), apiVersion=described.get("apiVersion")
            ),
            "target": _some(
                type="AverageValue" if average is not None else "Value",
                value=source.get("targetValue", "0"),
                averageValue=average,
            ),
            "metric": _ident(source.get("metricName"), source.get("selector")),
        }
    if "pods" in metric:
        source = metric["pods"]
        out["pods"] = {
            "metric": _ident(source.get("metricName"), source.get("selector")),
            "target": {"type": "AverageValue", "averageValue": source.get("targetAverageValue", "0")},
        }
    for field in ("resource", "containerResource"):
        if field in metric:
            source = metric[field]
            utilization = source.get("targetAverageUtilization")
            out[field] = _some(
                name=source.get("name"),
                target=_some(
                    type="Utilization" if utilization is not None else "AverageValue",
                    averageValue=source.get("targetAverageValue"),
                    averageUtilization=utilization,
                ),
                container=source.get("container"),
            )
    if "external" in metric:
        source = metric["external"]
        value = source.get("targetValue")
        out["external"] = {
            "metric": _ident(source.get("metricName"), source.get("metricSelector")),
            "target": _some(
                type="Value" if value is not None else "AverageValue",
                value=value,
                averageValue=source.get("targetAverageValue"),
            ),
        }
    return out


def _status_from_v1(metric: JSONObject) -> JSONObject:
    out: JSONObject = {"type": metric.get("type", "")}
    if "object" in metric:
        source = metric["object"]
        described = source.get("target") or {}
        out["object"] = {
            "metric": _ident(source.get("metricName"), source.get("selector")),
            "current": _some(value=source.get("currentValue", "0"), averageValue=source.get("averageValue")),
            "describedObject": _some(
                kind=described.get("kind"), name=described.get("name"), apiVersion=described.get("apiVersion")
            ),
        }
    if "pods" in metric:
        source = metric["pods"]
        out["pods"] = {
            "metric": _ident(source.get("metricName"), source.get("selector")),
            "current": {"averageValue": source.get("currentAverageValue", "0")},
        }
    for field in ("resource", "containerResource"):
        if field in metric:
            source = metric[field]
            out[field] = _some(
                name=source.get("name"),
                current=_some(
                    averageValue=source.get("currentAverageValue", "0"),
                    averageUtilization=source.get("currentAverageUtilization"),
                ),
                container=source.get("container"),
            )
    if "external" in metric:
        source = metric["external"]
        out["external"] = {
            "metric": _ident(source.get("metricName"), source.get("metricSelector")),
            "current": _some(value=source.get("currentValue", "0"), averageValue=source.get("currentAverageValue")),
        }
    return out


def _cpu_metric(utilization: int) -> JSONObject:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def to_v2(hpa: JSONObject) -> JSONObject:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    metadata = dict(hpa.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    metrics = [_cpu_metric(spec["targetCPUUtilizationPercentage"])] if "targetCPUUtilizationPercentage" in spec else []
    if METRICS in annotations:
        metrics = [_metric_from_v1(m) for m in orjson.loads(annotations.pop(METRICS))] + metrics
    v2_spec = _some(
        scaleTargetRef=spec.get("scaleTargetRef"),
        minReplicas=spec.get("minReplicas"),
        maxReplicas=spec.get("maxReplicas"),
        metrics=metrics or [_cpu_metric(DEFAULT_CPU_UTILIZATION)],
    )
    current = status.get("currentCPUUtilizationPercentage")
    current_metrics = (
        [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}]
        if current is not None
        else None
    )
    if CURRENT_METRICS in annotations:
        current_metrics = [_status_from_v1(m) for m in orjson.loads(annotations.pop(CURRENT_METRICS))]
    conditions = orjson.loads(annotations.pop(CONDITIONS)) if CONDITIONS in annotations else None
    v2_status = _some(
        observedGeneration=status.get("observedGeneration"),
        lastScaleTime=status.get("lastScaleTime"),
        currentReplicas=status.get("currentReplicas"),
        desiredReplicas=status.get("desiredReplicas", 0),
        currentMetrics=current_metrics,
        conditions=conditions,
    )
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return {"metadata": metadata, "spec": v2_spec, "status": v2_status}


@conversion(
    GroupVersionKind("autoscaling", "v1", "HorizontalPodAutoscaler"),
    GroupVersionKind("autoscaling", "v2", "HorizontalPodAutoscaler"),
)
class HorizontalPodAutoscalerV1:
    to_storage = staticmethod(to_v2)
    from_storage = staticmethod(to_v1)
