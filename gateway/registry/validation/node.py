"""node.k8s.io/v1 RuntimeClasses (k8s.io/kubernetes pkg/apis/node/validation): a DNS-label handler
that never changes, pod overhead, scheduling constraints."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText, go_quote
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import check, immutable, labels_errors
from protokube.gateway.registry.validation.pods import tolerations_errors
from protokube.gateway.registry.validation.resources import container_resource_name_errors, quantity_value_errors
from protokube.gateway.syntax import dns1123_label_problems


@validator("k8s.io.api.node.v1.RuntimeClass")
def validate_runtime_class(runtime_class: Message, old: Message | None) -> list[FieldError]:
    found = check("handler", runtime_class.handler, dns1123_label_problems)
    fixed = runtime_class.overhead.podFixed
    for name in sorted(fixed):
        path = f"overhead.podFixed.limits[{name}]"
        found += container_resource_name_errors(name, path) + quantity_value_errors(name, fixed[name].string, path)
    if runtime_class.HasField("scheduling"):
        scheduling = runtime_class.scheduling
        found += labels_errors(dict(scheduling.nodeSelector), "scheduling.nodeSelector")
        found += tolerations_errors(scheduling.tolerations, "scheduling.tolerations")
        keys = [(t.key, t.operator, t.value, t.effect) for t in scheduling.tolerations]
        for i, (key, operator, value, effect) in enumerate(keys):
            if keys[i] in keys[:i]:
                shown = GoText(
                    f"core.Toleration{{Key:{go_quote(key)}, Operator:{go_quote(operator)}, Value:{go_quote(value)}, "
                    f"Effect:{go_quote(effect)}, TolerationSeconds:(*int64)"
                    f"({'0xc000000000' if scheduling.tolerations[i].HasField('tolerationSeconds') else 'nil'})}}"
                )
                found.append(FieldError.duplicate(f"scheduling.tolerations[{i}]", shown))
    if old is not None:
        found += immutable("handler", runtime_class.handler, old.handler)
    return found
