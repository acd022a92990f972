"""apps/v1 defaults: k8s.io/kubernetes pkg/apis/apps/v1/defaults.go as of Kubernetes 1.32
(StatefulSetAutoDeletePVC on, MaxUnavailableStatefulSet off)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default, default_message, set_int_or_string

APPS = "k8s.io.api.apps.v1"
REVISION_HISTORY_LIMIT = 10


def _default_int_or_string(message: Message, name: str, value: int | str) -> None:
    if not message.HasField(name):
        set_int_or_string(getattr(message, name), value)


@defaulter(f"{APPS}.Deployment")
def deployment(obj: Message) -> None:
    spec = obj.spec
    default(spec, "replicas", 1)
    strategy = spec.strategy
    if not strategy.type:
        strategy.type = "RollingUpdate"
    if strategy.type == "RollingUpdate":
        rolling = default_message(strategy, "rollingUpdate")
        _default_int_or_string(rolling, "maxUnavailable", "25%")
        _default_int_or_string(rolling, "maxSurge", "25%")
    default(spec, "revisionHistoryLimit", REVISION_HISTORY_LIMIT)
    default(spec, "progressDeadlineSeconds", 600)


@defaulter(f"{APPS}.DaemonSet")
def daemon_set(obj: Message) -> None:
    spec = obj.spec
    strategy = spec.updateStrategy
    if not strategy.type:
        strategy.type = "RollingUpdate"
    if strategy.type == "RollingUpdate":
        rolling = default_message(strategy, "rollingUpdate")
        _default_int_or_string(rolling, "maxUnavailable", 1)
        _default_int_or_string(rolling, "maxSurge", 0)
    default(spec, "revisionHistoryLimit", REVISION_HISTORY_LIMIT)


@defaulter(f"{APPS}.StatefulSet")
def stateful_set(obj: Message) -> None:
    spec = obj.spec
    if not spec.podManagementPolicy:
        spec.podManagementPolicy = "OrderedReady"
    strategy = spec.updateStrategy
    if not strategy.type:
        strategy.type = "RollingUpdate"
        default_message(strategy, "rollingUpdate")
    if strategy.type == "RollingUpdate" and strategy.HasField("rollingUpdate"):
        default(strategy.rollingUpdate, "partition", 0)
    retention = default_message(spec, "persistentVolumeClaimRetentionPolicy")
    for name in ("whenDeleted", "whenScaled"):
        if not getattr(retention, name):
            setattr(retention, name, "Retain")
    default(spec, "replicas", 1)
    default(spec, "revisionHistoryLimit", REVISION_HISTORY_LIMIT)


@defaulter(f"{APPS}.ReplicaSet")
def replica_set(obj: Message) -> None:
    default(obj.spec, "replicas", 1)
