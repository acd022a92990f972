"""batch/v1 defaults: k8s.io/kubernetes pkg/apis/batch/v1/defaults.go as of Kubernetes 1.32
(JobPodReplacementPolicy on). The generated selector and labels are the Job strategy's
(registry/kinds.py)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default

BATCH = "k8s.io.api.batch.v1"
MAX_INT32 = 2**31 - 1


@defaulter(f"{BATCH}.Job")
def job(obj: Message) -> None:
    spec = obj.spec
    if not spec.HasField("completions") and not spec.HasField("parallelism"):
        spec.completions = 1
    default(spec, "parallelism", 1)
    default(spec, "backoffLimit", MAX_INT32 if spec.HasField("backoffLimitPerIndex") else 6)
    labels = spec.template.metadata.labels
    if labels and not obj.metadata.labels:
        obj.metadata.labels.update(labels)
    default(spec, "completionMode", "NonIndexed")
    default(spec, "suspend", False)
    default(spec, "podReplacementPolicy", "Failed" if spec.HasField("podFailurePolicy") else "TerminatingOrFailed")
    default(spec, "manualSelector", False)


@defaulter(f"{BATCH}.CronJob")
def cron_job(obj: Message) -> None:
    spec = obj.spec
    if not spec.concurrencyPolicy:
        spec.concurrencyPolicy = "Allow"
    default(spec, "suspend", False)
    default(spec, "successfulJobsHistoryLimit", 3)
    default(spec, "failedJobsHistoryLimit", 1)


@defaulter(f"{BATCH}.PodFailurePolicyOnPodConditionsPattern")
def pod_failure_policy_on_pod_conditions_pattern(obj: Message) -> None:
    if not obj.status:
        obj.status = "True"
