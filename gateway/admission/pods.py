"""The mutating admission plugins of kube-apiserver's default set that change Pods as written:

- DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds): a pod that does not
  tolerate the ``not-ready`` and ``unreachable`` NoExecute taints gets tolerations of 300 seconds;
- Priority (plugin/pkg/admission/priority): a new pod's ``priority`` and ``preemptionPolicy`` come
  from its PriorityClass, or from the cluster's global default class, or are 0 and
  PreemptLowerPriority when there is none.
"""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import ListOptions
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes
from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

POD = "k8s.io.api.core.v1.Pod"
NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-not-ready-toleration-seconds, --default-unreachable-...
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def _pods_only(resource: Resource) -> bool:
    """What the plugins here act on: pods only."""
    return resource.message == POD


def _is_pod(attributes: Attributes) -> bool:
    return attributes.obj is not None and not attributes.subresource and attributes.resource.message == POD


class DefaultTolerationSeconds:
    handles = staticmethod(_pods_only)

    async def admit(self, attributes: Attributes) -> None:
        if attributes.operation not in (CREATE, UPDATE) or not _is_pod(attributes):
            return
        spec = attributes.obj.spec  # type: ignore[union-attr]
        for key in (NOT_READY, UNREACHABLE):
            tolerated = any(t.key in (key, "") and t.effect in ("NoExecute", "") for t in spec.tolerations)
            if not tolerated:
                spec.tolerations.add(
                    key=key, operator="Exists", effect="NoExecute", tolerationSeconds=DEFAULT_TOLERATION_SECONDS
                )


class Priority:
    """``priority_classes``: None when scheduling.k8s.io is not served (no class then exists)."""

    def __init__(self, priority_classes: Cacher | None) -> None:
        self.priority_classes = priority_classes

    handles = staticmethod(_pods_only)

    async def admit(self, attributes: Attributes) -> None:
        if not _is_pod(attributes):
            return
        pod = attributes.obj
        assert pod is not None
        if attributes.operation == UPDATE and attributes.old is not None:
            _keep_computed(pod.spec, attributes.old.spec)
        elif attributes.operation == CREATE:
            await self._set_priority(pod, attributes)

    async def _set_priority(self, pod: Message, attributes: Attributes) -> None:
        spec = pod.spec
        if spec.priorityClassName:
            view = await self._priority_class(spec.priorityClassName)
            if view is None:
                raise self._forbidden(attributes, f"no PriorityClass with name {spec.priorityClassName} was found")
            priority, policy = view.obj.value, view.obj.preemptionPolicy or None
        else:
            default_class = await self._global_default()
            if default_class is None:
                priority, policy = 0, PREEMPT_LOWER_PRIORITY
            else:
                spec.priorityClassName = default_class.metadata.name
                priority, policy = default_class.value, default_class.preemptionPolicy or None
        if spec.HasField("priority") and spec.priority != priority:
            raise self._forbidden(
                attributes,
                f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                f"priority admission controller computed {priority} from the given PriorityClass name",
            )
        spec.priority = priority
        if policy is not None:
            if spec.HasField("preemptionPolicy") and spec.preemptionPolicy != policy:
                raise self._forbidden(
                    attributes,
                    f"the string value of PreemptionPolicy ({spec.preemptionPolicy}) must not be provided in pod "
                    f"spec; priority admission controller computed {policy} from the given PriorityClass name",
                )
            spec.preemptionPolicy = policy

    async def _priority_class(self, name: str) -> ObjectView | None:
        classes = self.priority_classes
        if classes is None:
            return None
        return classes.cached("", name) or await classes.get_latest("", name)

    async def _global_default(self) -> Message | None:
        """The global default class; of several, the one of the highest value (as upstream)."""
        if self.priority_classes is None:
            return None
        listed = await self.priority_classes.list(Filter("", EVERYTHING, NO_FIELDS), ListOptions())
        defaults = [view.obj for view in listed.items if view.obj.globalDefault]
        return max(defaults, key=lambda pc: pc.value, default=None)

    @staticmethod
    def _forbidden(attributes: Attributes, reason: str) -> errors.StatusError:
        return errors.forbidden("", "pods", attributes.name, reason)


def _keep_computed(spec: Message, old: Message) -> None:
    """An update that leaves out priority or preemptionPolicy keeps what creation computed."""
    for name in ("priority", "preemptionPolicy"):
        if not spec.HasField(name) and old.HasField(name):
            setattr(spec, name, getattr(old, name))
