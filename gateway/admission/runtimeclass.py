"""RuntimeClass (plugin/pkg/admission/runtimeclass): a new pod that names a RuntimeClass gets the
class's overhead (a pod may not bring another one) and its scheduling: the class's nodeSelector
merged into the pod's (a different value for a key is a conflict) and its tolerations added, the
redundant ones left out as upstream's MergeTolerations does. A pod that sets an overhead its class
does not define is refused."""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf.message import Message

from protokube.gateway.admission.resourcelist import equal, from_message
from protokube.gateway.registry.admission import CREATE, Attributes, forbidden
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

PODS = ("", "pods")
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def _same_overhead(runtime_class: Message, pod: Message) -> bool:
    return equal(from_message(runtime_class.overhead.podFixed), from_message(pod.spec.overhead))


class RuntimeClass:
    def __init__(self, runtime_classes: Cacher) -> None:
        self.runtime_classes = runtime_classes

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Pods only."""
        return (resource.group, resource.plural) == PODS

    async def admit(self, attributes: Attributes) -> None:
        pod = self._pod(attributes)
        if pod is None:
            return
        runtime_class = await self._runtime_class(attributes, pod)
        if runtime_class is None:
            return
        if runtime_class.HasField("overhead"):
            if pod.spec.overhead and not _same_overhead(runtime_class, pod):
                raise forbidden(attributes, OVERHEAD_MISMATCH)
            pod.spec.overhead.clear()
            for name, quantity in runtime_class.overhead.podFixed.items():
                pod.spec.overhead[name].CopyFrom(quantity)
        if runtime_class.HasField("scheduling"):
            _schedule(attributes, pod, runtime_class.scheduling)

    async def validate(self, attributes: Attributes) -> None:
        pod = self._pod(attributes)
        if pod is None:
            return
        runtime_class = await self._runtime_class(attributes, pod)
        if runtime_class is not None and runtime_class.HasField("overhead"):
            if not _same_overhead(runtime_class, pod):
                raise forbidden(attributes, OVERHEAD_MISMATCH)
        elif pod.spec.overhead:
            raise forbidden(attributes, OVERHEAD_WITHOUT_CLASS)

    @staticmethod
    def _pod(attributes: Attributes) -> Message | None:
        resource = attributes.resource
        if attributes.operation != CREATE or (resource.group, resource.plural) != PODS or attributes.subresource:
            return None
        return attributes.obj

    async def _runtime_class(self, attributes: Attributes, pod: Message) -> Message | None:
        """The pod's RuntimeClass (None: it names none); refused when it does not exist. The watch
        cache first, storage when the cache has not seen the class (it may be new)."""
        if not pod.spec.HasField("runtimeClassName"):
            return None
        name = pod.spec.runtimeClassName
        classes = self.runtime_classes
        view = classes.cached("", name) or await classes.get_latest("", name)
        if view is None:
            raise forbidden(attributes, f'pod rejected: RuntimeClass "{name}" not found')
        return view.obj


def _schedule(attributes: Attributes, pod: Message, scheduling: Message) -> None:
    selector = pod.spec.nodeSelector
    for key, value in scheduling.nodeSelector.items():
        if key in selector and selector[key] != value:
            raise forbidden(
                attributes,
                f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                f"pod.spec.nodeSelector[{key}] = {selector[key]}",
            )
        selector[key] = value
    merged = merge_tolerations([*pod.spec.tolerations, *scheduling.tolerations])
    copies = [type(t)() for t in merged]
    for copy, toleration in zip(copies, merged, strict=True):
        copy.CopyFrom(toleration)
    del pod.spec.tolerations[:]
    pod.spec.tolerations.extend(copies)


def merge_tolerations(tolerations: Iterable[Message]) -> list[Message]:
    """The tolerations without those another one tolerates a superset of (of equal ones, the first)."""
    every = list(tolerations)
    merged: list[Message] = []
    for i, toleration in enumerate(every):
        if any(_is_superset(kept, toleration) for kept in merged):
            continue
        if any(_value(other) != _value(toleration) and _is_superset(other, toleration) for other in every[i + 1 :]):
            continue
        merged.append(toleration)
    return merged


def _value(toleration: Message) -> tuple[str, str, str, str, int | None]:
    """A toleration's fields, whether set or left empty (Go compares values, not presence)."""
    seconds = toleration.tolerationSeconds if toleration.HasField("tolerationSeconds") else None
    return toleration.key, toleration.operator, toleration.value, toleration.effect, seconds


def _is_superset(wide: Message, narrow: Message) -> bool:
    """Whether ``wide`` tolerates every taint ``narrow`` does."""
    if _value(wide) == _value(narrow):
        return True
    if narrow.key != wide.key and (wide.key or wide.operator != "Exists"):
        return False
    if narrow.effect != wide.effect and wide.effect:
        return False
    limited = wide.effect == "NoExecute" and wide.HasField("tolerationSeconds")
    if limited and (not narrow.HasField("tolerationSeconds") or narrow.tolerationSeconds > wide.tolerationSeconds):
        return False
    if wide.operator in ("Equal", ""):
        return narrow.operator == "Equal" and narrow.value == wide.value
    return wide.operator == "Exists"
