"""autoscaling/v2 HorizontalPodAutoscalers (k8s.io/kubernetes pkg/apis/autoscaling/validation):
replica bounds, the scale target, metric sources and targets, scaling behavior."""

from __future__ import annotations

from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import check, label_selector_errors, quantity_text, quantity_value
from protokube.gateway.registry.validation.meta import name_problems

METRIC_TYPES = ("Object", "Pods", "Resource", "External", "ContainerResource")
# MetricSpec source field of each metric type.
_SOURCES = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "External": "external",
}
MAX_PERIOD_SECONDS, MAX_STABILIZATION_SECONDS = 1800, 3600


def _path_segment(value: str) -> list[str]:
    return name_problems(opts.NAME_RULE_PATH_SEGMENT, value)


def _reference(reference: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    for name in ("kind", "name"):
        value = getattr(reference, name)
        found += check(f"{field}.{name}", value, _path_segment) if value else [FieldError.required(f"{field}.{name}")]
    return found


def _target(target: Message, field: str) -> list[FieldError]:
    found = [] if target.type else [FieldError.required(f"{field}.type", "must specify a metric target type")]
    if target.type not in ("Utilization", "Value", "AverageValue"):
        found.append(
            FieldError.invalid(f"{field}.type", target.type, "must be either Utilization, Value, or AverageValue")
        )
    for name in ("value", "averageValue"):
        if target.HasField(name) and quantity_value(getattr(target, name).string) <= 0:
            shown = GoText(quantity_text(getattr(target, name).string))
            found.append(FieldError.invalid(f"{field}.{name}", shown, "must be positive"))
    if target.HasField("averageUtilization") and target.averageUtilization < 1:
        found.append(
            FieldError.invalid(f"{field}.averageUtilization", target.averageUtilization, "must be greater than 0")
        )
    return found


def _metric_identifier(metric: Message, field: str) -> list[FieldError]:
    found = [] if metric.name else [FieldError.required(f"{field}.name", "must specify a metric name")]
    if metric.HasField("selector"):
        found += label_selector_errors(metric.selector, f"{field}.selector")
    return found


def _source(kind: str, source: Message, field: str) -> list[FieldError]:
    if kind in ("resource", "containerResource"):
        found = [] if source.name else [FieldError.required(f"{field}.name", "must specify a resource name")]
        if kind == "containerResource" and not source.container:
            found.append(FieldError.required(f"{field}.container", "must specify a container"))
        target = source.target
        if not target.HasField("averageUtilization") and not target.HasField("averageValue"):
            detail = "must set either a target raw value or a target utilization"
            found.append(FieldError.required(f"{field}.target.averageUtilization", detail))
        if target.HasField("averageUtilization") and target.HasField("averageValue"):
            detail = "may not set both a target raw value and a target utilization"
            found.append(FieldError.forbidden(f"{field}.target.averageValue", detail))
        return found + _target(target, f"{field}.target")
    found = _reference(source.describedObject, f"{field}.describedObject") if kind == "object" else []
    found += _metric_identifier(source.metric, f"{field}.metric")
    return found + _target(source.target, f"{field}.target")


def _metric(metric: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if not metric.type:
        found.append(FieldError.required(f"{field}.type", "must specify a metric source type"))
    if metric.type not in METRIC_TYPES:
        found.append(FieldError.not_supported(f"{field}.type", metric.type, METRIC_TYPES))
    present = [
        name for name in ("object", "pods", "resource", "containerResource", "external") if metric.HasField(name)
    ]
    if present:
        found += _source(present[0], getattr(metric, present[0]), f"{field}.{present[0]}")
    expected = _SOURCES.get(metric.type)
    if expected is None:
        found.append(FieldError.not_supported(f"{field}.type", metric.type, METRIC_TYPES))
    elif not metric.HasField(expected):
        found.append(
            FieldError.required(f"{field}.{expected}", "must populate information for the given metric source")
        )
    if len(present) != 1:
        found += [
            FieldError.forbidden(f"{field}.{name}", "must populate the given metric source only")
            for name in present
            if name != expected
        ]
    return found


def _scaling_rules(rules: Message, field: str) -> list[FieldError]:
    found: list[FieldError] = []
    if rules.HasField("stabilizationWindowSeconds"):
        seconds = rules.stabilizationWindowSeconds
        if seconds < 0:
            found.append(
                FieldError.invalid(
                    f"{field}.stabilizationWindowSeconds", seconds, "must be greater than or equal to zero"
                )
            )
        if seconds > MAX_STABILIZATION_SECONDS:
            detail = f"must be less than or equal to {MAX_STABILIZATION_SECONDS}"
            found.append(FieldError.invalid(f"{field}.stabilizationWindowSeconds", seconds, detail))
    if rules.HasField("selectPolicy") and rules.selectPolicy not in ("Max", "Min", "Disabled"):
        found.append(FieldError.not_supported(f"{field}.selectPolicy", rules.selectPolicy, ("Disabled", "Max", "Min")))
    for i, policy in enumerate(rules.policies):
        where = f"{field}.policies[{i}]"
        if policy.type not in ("Pods", "Percent"):
            found.append(FieldError.not_supported(f"{where}.type", policy.type, ("Percent", "Pods")))
        if policy.value <= 0:
            found.append(FieldError.invalid(f"{where}.value", policy.value, "must be greater than zero"))
        if policy.periodSeconds <= 0:
            found.append(
                FieldError.invalid(f"{where}.periodSeconds", policy.periodSeconds, "must be greater than zero")
            )
        if policy.periodSeconds > MAX_PERIOD_SECONDS:
            detail = f"must be less than or equal to {MAX_PERIOD_SECONDS}"
            found.append(FieldError.invalid(f"{where}.periodSeconds", policy.periodSeconds, detail))
    return found


@validator("k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler")
def validate_horizontal_pod_autoscaler(autoscaler: Message, old: Message | None) -> list[FieldError]:
    spec = autoscaler.spec
    found: list[FieldError] = []
    if spec.HasField("minReplicas") and spec.minReplicas < 1:
        found.append(FieldError.invalid("spec.minReplicas", spec.minReplicas, "must be greater than or equal to 1"))
    if spec.maxReplicas < 1:
        found.append(FieldError.invalid("spec.maxReplicas", spec.maxReplicas, "must be greater than 0"))
    if spec.HasField("minReplicas") and spec.maxReplicas < spec.minReplicas:
        found.append(
            FieldError.invalid("spec.maxReplicas", spec.maxReplicas, "must be greater than or equal to `minReplicas`")
        )
    found += _reference(spec.scaleTargetRef, "spec.scaleTargetRef")
    for i, metric in enumerate(spec.metrics):
        found += _metric(metric, f"spec.metrics[{i}]")
    if spec.HasField("behavior"):
        for direction in ("scaleUp", "scaleDown"):
            if spec.behavior.HasField(direction):
                found += _scaling_rules(getattr(spec.behavior, direction), f"spec.behavior.{direction}")
    return found
