"""Per-kind behaviour the resource options cannot express (upstream's REST strategies).

``ProtoStrategy`` (strategy.py) holds what every compiled kind shares; a subclass per kind here
overrides what differs and is registered by kind name. Strategies change objects in place.
"""

from __future__ import annotations

import time

from google.protobuf.message import Message

from protokube.gateway.objects.codec import Codec
from protokube.gateway.registry.allocators.service import drop_type_dependent_fields
from protokube.gateway.registry.strategy import ProtoStrategy, Strategy, UnstructuredStrategy
from protokube.gateway.user import UserInfo
from protokube.schema.registry import Resource

POD_TERMINAL_PHASES = ("Succeeded", "Failed")


class PodStrategy(ProtoStrategy):
    graceful_deletion = True

    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.status.phase = "Pending"
        obj.status.qosClass = _qos_class(obj)

    def prepare_for_update(self, new: Message, old: Message) -> None:
        super().prepare_for_update(new, old)
        del new.spec.ephemeralContainers[:]  # written only through pods/ephemeralcontainers
        new.spec.ephemeralContainers.extend(old.spec.ephemeralContainers)

    def grace_period_seconds(self, obj: Message, requested: int | None) -> int:
        # upstream: a pod not yet on a node, or already finished, is removed immediately.
        if not obj.spec.nodeName or obj.status.phase in POD_TERMINAL_PHASES:
            return 0
        if requested is not None:
            return max(requested, 0)
        if obj.spec.HasField("terminationGracePeriodSeconds"):
            return obj.spec.terminationGracePeriodSeconds
        return 30


def _qos_class(pod: Message) -> str:
    containers = list(pod.spec.containers) + list(pod.spec.initContainers)
    requests = [c.resources.requests for c in containers]
    limits = [c.resources.limits for c in containers]
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        "cpu" in lim and "memory" in lim and all(req.get(r, lim[r]).string == lim[r].string for r in ("cpu", "memory"))
        for req, lim in zip(requests, limits, strict=True)
    )
    return "Guaranteed" if guaranteed else "Burstable"


class NamespaceStrategy(ProtoStrategy):
    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.status.phase = "Active"
        if "kubernetes" not in obj.spec.finalizers:
            obj.spec.finalizers.append("kubernetes")

    def prepare_for_update(self, new: Message, old: Message) -> None:
        """spec.finalizers change only through the finalize subresource (the namespace controller)."""
        super().prepare_for_update(new, old)
        del new.spec.finalizers[:]
        new.spec.finalizers.extend(old.spec.finalizers)

    def blocks_deletion(self, obj: Message) -> bool:
        """The namespace controller empties the namespace, then removes spec.finalizers."""
        return bool(obj.spec.finalizers)

    def mark_deleting(self, obj: Message) -> None:
        obj.status.phase = "Terminating"


class EventStrategy(ProtoStrategy):
    def field_values(self, obj: Message) -> dict[str, str]:
        """upstream's event field "source" is the reporting component."""
        values = super().field_values(obj)
        values["source"] = obj.source.component
        return values


JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
CONTROLLER_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


class JobStrategy(ProtoStrategy):
    def prepare_for_create(self, obj: Message) -> None:
        """Unless spec.manualSelector, the pods' labels name the job and its uid, and the selector
        is the uid label (upstream's generateSelector); validation reports conflicting values."""
        super().prepare_for_create(obj)
        if obj.spec.manualSelector:
            return
        labels = obj.spec.template.metadata.labels
        # A job without labels of its own is given its template's by defaulting, in Go the same map:
        # the labels added to the template show on the job too (taken here for a job whose labels are
        # its template's; an explicit copy of them is the one case told apart upstream and not here).
        aliased = obj.metadata.labels if labels and dict(obj.metadata.labels) == dict(labels) else None
        for keys, value in ((JOB_NAME_LABELS, obj.metadata.name), (CONTROLLER_UID_LABELS, obj.metadata.uid)):
            for key in keys:
                if key not in labels:
                    labels[key] = value
                    if aliased is not None:
                        aliased[key] = value
        selector = obj.spec.selector.matchLabels
        if CONTROLLER_UID_LABELS[1] not in selector:
            selector[CONTROLLER_UID_LABELS[1]] = obj.metadata.uid

    def field_values(self, obj: Message) -> dict[str, str]:
        """upstream's Job field label status.successful is the value of status.succeeded."""
        values = super().field_values(obj)
        values["status.successful"] = str(obj.status.succeeded)
        return values


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


class DaemonSetStrategy(ProtoStrategy):
    """apps/v1 carries a DaemonSet's template generation in an annotation (upstream's conversion
    writes the internal spec.templateGeneration there on every v1 object, 0 for a request without
    it, so the writer owns it in managedFields): at least 1 on create; an update keeps the stored
    one, one more when it changes the template (upstream's daemonSetStrategy)."""

    def default(self, obj: Message) -> None:
        super().default(obj)
        annotations = obj.metadata.annotations
        if TEMPLATE_GENERATION not in annotations:
            annotations[TEMPLATE_GENERATION] = "0"

    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.metadata.annotations[TEMPLATE_GENERATION] = str(max(_template_generation(obj), 1))

    def prepare_for_update(self, new: Message, old: Message) -> None:
        super().prepare_for_update(new, old)
        compared = type(new)()  # the template as it will be stored (normalized), against the stored one
        compared.CopyFrom(new)
        self.codec.normalize(compared)
        changed = compared.spec.template.SerializeToString(deterministic=True) != old.spec.template.SerializeToString(
            deterministic=True
        )
        new.metadata.annotations[TEMPLATE_GENERATION] = str(_template_generation(old) + changed)


def _template_generation(obj: Message) -> int:
    text = obj.metadata.annotations.get(TEMPLATE_GENERATION, "")
    return int(text) if text.isascii() and text.isdigit() else 0


class CertificateSigningRequestStrategy(ProtoStrategy):
    """The requester is whoever creates the request; its spec never changes, and its status only
    through status and approval (upstream's csrStrategy)."""

    def record_requester(self, obj: Message, user: UserInfo) -> None:
        spec = obj.spec
        spec.username, spec.uid = user.name, user.uid
        del spec.groups[:]
        spec.groups.extend(user.groups)
        spec.extra.clear()
        for key, values in user.extra.items():
            spec.extra[key].items.extend(values)

    def prepare_for_update(self, new: Message, old: Message) -> None:
        new.spec.CopyFrom(old.spec)
        new.status.CopyFrom(old.status)


class SecretStrategy(ProtoStrategy):
    """stringData is write-only: merged into data (winning over it) when a body is decoded, as
    upstream's conversion of v1 Secrets to the internal type does, so field ownership (an Update's
    managedFields), admission and storage see data only."""

    def default(self, obj: Message) -> None:
        super().default(obj)
        for key, text in obj.stringData.items():
            obj.data[key] = text.encode()
        obj.ClearField("stringData")


class ServiceStrategy(ProtoStrategy):
    def prepare_for_update(self, new: Message, old: Message) -> None:
        super().prepare_for_update(new, old)
        drop_type_dependent_fields(new, old)


class PriorityClassStrategy(ProtoStrategy):
    """Generation 1 on create, never bumped (upstream's priorityClassStrategy; without a spec the
    store keeps it as stored)."""

    def prepare_for_create(self, obj: Message) -> None:
        super().prepare_for_create(obj)
        obj.metadata.generation = 1


class NodeStrategy(ProtoStrategy):
    def prepare_for_create(self, obj: Message) -> None:
        """Nodes may set every field, status included, on create."""


# By the kind's message full name.
class CustomResourceDefinitionStrategy(ProtoStrategy):
    """The first delete of a CRD only marks it: deletionTimestamp, the finalizer that removes its
    objects before it goes and the Terminating condition (upstream's customresourcedefinition
    REST.Delete); apiextensions/controller.py then deletes the objects and the finalizer."""

    def blocks_deletion(self, obj: Message) -> bool:
        return not obj.metadata.HasField("deletionTimestamp")

    def mark_deleting(self, obj: Message) -> None:
        if CRD_CLEANUP_FINALIZER not in obj.metadata.finalizers:
            obj.metadata.finalizers.append(CRD_CLEANUP_FINALIZER)
        conditions = obj.status.conditions
        found = next((c for c in conditions if c.type == "Terminating"), None)
        terminating = found if found is not None else conditions.add(type="Terminating")
        if terminating.status != "True" or not terminating.HasField("lastTransitionTime"):
            terminating.lastTransitionTime.Clear()
            terminating.lastTransitionTime.seconds = int(time.time())
        terminating.status = "True"
        terminating.reason = "InstanceDeletionPending"
        terminating.message = "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"


CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

STRATEGIES: dict[str, type[ProtoStrategy]] = {
    "k8s.io.api.core.v1.Pod": PodStrategy,
    "k8s.io.api.core.v1.Namespace": NamespaceStrategy,
    "k8s.io.api.core.v1.Node": NodeStrategy,
    "k8s.io.api.core.v1.Secret": SecretStrategy,
    "k8s.io.api.core.v1.Service": ServiceStrategy,
    "k8s.io.api.core.v1.Event": EventStrategy,
    "k8s.io.api.batch.v1.Job": JobStrategy,
    "k8s.io.api.apps.v1.DaemonSet": DaemonSetStrategy,
    "k8s.io.api.scheduling.v1.PriorityClass": PriorityClassStrategy,
    "k8s.io.api.certificates.v1.CertificateSigningRequest": CertificateSigningRequestStrategy,
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition": (
        CustomResourceDefinitionStrategy
    ),
}


# Kinds with a spec whose upstream strategy sets no metadata.generation (Kubernetes 1.32).
WITHOUT_GENERATION = frozenset(
    {
        *(
            f"k8s.io.api.core.v1.{kind}"
            for kind in ("Pod", "Service", "Namespace", "Node", "PersistentVolume", "PersistentVolumeClaim")
        ),
        "k8s.io.api.certificates.v1alpha1.ClusterTrustBundle",
        "k8s.io.api.certificates.v1.CertificateSigningRequest",
        "k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler",
        "k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler",
        "k8s.io.api.coordination.v1.Lease",
        "k8s.io.api.core.v1.LimitRange",
        "k8s.io.api.core.v1.ResourceQuota",
        "k8s.io.api.storage.v1.CSINode",
        "k8s.io.api.storage.v1.VolumeAttachment",
    }
)


def strategy_for(resource: Resource, codec: Codec) -> Strategy:
    if resource.extension is not None:  # a run-time resource (a CRD's version) brings its own
        return resource.extension.strategy(resource, codec)
    if not resource.message:
        return UnstructuredStrategy(resource, codec)
    strategy = STRATEGIES.get(resource.message, ProtoStrategy)(resource, codec)
    if resource.message in WITHOUT_GENERATION:
        strategy.uses_generation = False
    return strategy
