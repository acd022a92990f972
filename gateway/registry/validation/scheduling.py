"""scheduling.k8s.io/v1 PriorityClasses (k8s.io/kubernetes pkg/apis/scheduling/validation): the
system- prefix is reserved for the system classes, user values are at most one billion, value and
preemptionPolicy never change."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import enum

HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_PREFIX = "system-"
# The system priority classes: value and globalDefault.
SYSTEM_CLASSES = {"system-node-critical": (2_000_001_000, False), "system-cluster-critical": (2_000_000_000, False)}


def _system_class_problem(name: str, value: int, global_default: bool) -> str | None:
    if name not in SYSTEM_CLASSES:
        return f"{name} is not a known system priority class"
    expected_value, expected_default = SYSTEM_CLASSES[name]
    if value != expected_value:
        return f"value of {name} PriorityClass must be {expected_value}"
    if global_default != expected_default:
        return f"globalDefault of {name} PriorityClass must be {str(expected_default).lower()}"
    return None


@validator("k8s.io.api.scheduling.v1.PriorityClass")
def validate_priority_class(priority_class: Message, old: Message | None) -> list[FieldError]:
    found: list[FieldError] = []
    if old is not None:
        if priority_class.value != old.value:
            found.append(FieldError.forbidden("value", "may not be changed in an update."))
        new_policy = priority_class.preemptionPolicy if priority_class.HasField("preemptionPolicy") else None
        old_policy = old.preemptionPolicy if old.HasField("preemptionPolicy") else None
        if new_policy != old_policy:
            found.append(FieldError.invalid("preemptionPolicy", new_policy, "field is immutable"))
        return found
    name = priority_class.metadata.name
    if name.startswith(SYSTEM_PREFIX):
        problem = _system_class_problem(name, priority_class.value, priority_class.globalDefault)
        if problem is not None:
            detail = (
                f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {problem}"
            )
            found.append(FieldError.forbidden("metadata.name", detail))
    elif priority_class.value > HIGHEST_USER_PRIORITY:
        detail = f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"
        found.append(FieldError.forbidden("value", detail))
    if priority_class.HasField("preemptionPolicy"):
        policies = ("PreemptLowerPriority", "Never")
        found += enum("preemptionPolicy", priority_class.preemptionPolicy, policies, required=True)
    return found
