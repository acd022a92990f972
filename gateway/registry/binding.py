"""pods/NAME/binding and the bindings resource (upstream's BindingREST): a Binding assigns its pod to
a node, once.

As upstream, the pod is written straight to storage, past the pod strategy (which forbids changing
spec.nodeName): spec.nodeName is set, the Binding's annotations are copied onto the pod, and the
PodScheduled condition becomes True.
"""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store, now_seconds
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta

POD_SCHEDULED = "PodScheduled"


def _success() -> meta.Status:
    status = meta.Status(status="Success")
    status.metadata.SetInParent()
    return status


def set_condition_true(pod: Obj, condition_type: str) -> None:
    """upstream's UpdatePodCondition with status True: a new condition, or the old one replaced
    (its transition time kept when its status was True already)."""
    conditions = pod.status.conditions
    old = next((c for c in conditions if c.type == condition_type), None)
    if old is None:
        new = conditions.add(type=condition_type, status="True")
        new.lastTransitionTime.seconds = now_seconds()
        return
    was_true = old.status == "True"
    transition = old.lastTransitionTime.seconds
    old.Clear()
    old.type, old.status = condition_type, "True"
    old.lastTransitionTime.seconds = transition if was_true else now_seconds()


class BindingStore:
    """Create only. Served as pods/NAME/binding (the name in the URL) and as the bindings resource
    (the Binding's own name)."""

    def __init__(self, pods: Store, codec: Codec) -> None:
        self.pods = pods
        self.codec = codec

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> meta.Status:
        return await self.create_for(namespace, obj.metadata.name, obj, options)

    async def create_for(self, namespace: str, name: str, obj: Obj, options: WriteOptions) -> meta.Status:
        if name != obj.metadata.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        target = obj.target
        problems = []
        if target.kind and target.kind != "Node":
            problems.append(FieldError.not_supported("target.kind", target.kind, ["Node", "<empty>"]))
        if not target.name:
            problems.append(FieldError.required("target.name"))
        if problems:
            raise errors.invalid("", "Binding", name, problems)
        binding_meta = obj.metadata

        async def assign(current: ObjectView | None) -> Obj:
            if current is None:
                raise errors.not_found(self.pods.resource, name)
            pod = current.copy()
            self._check_preconditions(name, binding_meta, pod.metadata)
            if pod.metadata.HasField("deletionTimestamp"):
                raise errors.conflict_on(
                    "pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host"
                )
            if pod.spec.nodeName:
                raise errors.conflict_on(
                    "pods/binding", name, f"pod {name} is already assigned to node {errors.go_quote(pod.spec.nodeName)}"
                )
            if len(pod.spec.schedulingGates):
                raise errors.conflict_on("pods/binding", name, f"pod {name} has non-empty .spec.schedulingGates")
            pod.spec.nodeName = target.name
            for key, value in binding_meta.annotations.items():
                pod.metadata.annotations[key] = value
            set_condition_true(pod, POD_SCHEDULED)
            return pod

        await self.pods.storage.guaranteed_update(namespace, name, assign, dry_run=options.dry_run)
        return _success()

    def _check_preconditions(self, name: str, binding: meta.ObjectMeta, pod: meta.ObjectMeta) -> None:
        """The Binding's uid and resourceVersion, when set, must be the pod's."""
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted, found = getattr(binding, field), getattr(pod, field)
            if wanted and wanted != found:
                raise errors.conflict(
                    self.pods.resource,
                    name,
                    f"Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {found}",
                )
