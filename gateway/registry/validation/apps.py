"""apps/v1 (k8s.io/kubernetes pkg/apis/apps/validation and the apps/v1 strategies): Deployments,
ReplicaSets, DaemonSets, StatefulSets and ControllerRevisions — selectors that match their template's
labels and, in apps/v1, never change; strategies; the StatefulSet fields an update may change."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    annotations_errors,
    copy_field,
    go_int_or_string,
    go_label_selector,
    go_string_map,
    int_or_percent_errors,
    label_selector_errors,
    labels_errors,
    messages_equal,
    nonnegative,
    not_more_than_100,
    percent_value,
    selector_is_empty,
    selector_matches,
)
from protokube.gateway.registry.validation.pods import deletion_cost_errors, pod_template_spec_errors

_APPS = "k8s.io.api.apps.v1."


def _selector_errors(spec: Message, kind: str) -> list[FieldError]:
    """Required, valid, not empty ("empty selector is invalid for <kind>")."""
    if not spec.HasField("selector"):
        return [FieldError.required("spec.selector")]
    found = label_selector_errors(spec.selector, "spec.selector")
    if selector_is_empty(spec.selector):
        found.append(
            FieldError.invalid(
                "spec.selector", go_label_selector(spec.selector), f"empty selector is invalid for {kind}"
            )
        )
    return found


def _template_matches(spec: Message) -> list[FieldError]:
    """The template's labels must match the selector: a missing one matches nothing (upstream's
    LabelSelectorAsSelector(nil) is labels.Nothing()), an empty one everything."""
    labels = dict(spec.template.metadata.labels)
    if not spec.HasField("selector") or (
        not selector_is_empty(spec.selector) and not selector_matches(spec.selector, labels)
    ):
        detail = "`selector` does not match template `labels`"
        return [FieldError.invalid("spec.template.metadata.labels", go_string_map(labels), detail)]
    return []


def _controller_template(spec: Message, kind: str) -> list[FieldError]:
    """ValidatePodTemplateSpecForReplicaSet: labels match, a valid pod template, restartPolicy Always."""
    found = _template_matches(spec)
    found += pod_template_spec_errors(spec.template, "spec.template")
    policy = spec.template.spec.restartPolicy
    if policy and policy != "Always":
        found.append(FieldError.not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
    if spec.template.spec.HasField("activeDeadlineSeconds"):
        detail = f"activeDeadlineSeconds in {kind} is not Supported"
        found.append(FieldError.forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    return found


def _selector_immutable(new: Message, old: Message | None) -> list[FieldError]:
    """apps/v1 strategies: spec.selector never changes."""
    if old is None or messages_equal(new.spec.selector, old.spec.selector):
        return []
    return [FieldError.invalid("spec.selector", go_label_selector(new.spec.selector), "field is immutable")]


# ---- Deployment -----------------------------------------------------------------------------------
def _deployment_strategy(strategy: Message) -> list[FieldError]:
    field = "spec.strategy"
    if strategy.type == "Recreate":
        if strategy.HasField("rollingUpdate"):
            return [
                FieldError.forbidden(
                    f"{field}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
                )
            ]
        return []
    if strategy.type == "RollingUpdate":
        if not strategy.HasField("rollingUpdate"):
            return [FieldError.required(f"{field}.rollingUpdate", "this should be defaulted and never be nil")]
        rolling, where = strategy.rollingUpdate, f"{field}.rollingUpdate"
        found = int_or_percent_errors(f"{where}.maxUnavailable", rolling.maxUnavailable)
        found += int_or_percent_errors(f"{where}.maxSurge", rolling.maxSurge)
        if percent_value(rolling.maxUnavailable) == 0 and percent_value(rolling.maxSurge) == 0:
            shown = go_int_or_string(rolling.maxUnavailable)
            found.append(FieldError.invalid(f"{where}.maxUnavailable", shown, "may not be 0 when `maxSurge` is 0"))
        return found + not_more_than_100(rolling.maxUnavailable, f"{where}.maxUnavailable")
    if not strategy.type:
        return []  # defaulted to RollingUpdate before validation
    shown = GoText(
        f'apps.DeploymentStrategy{{Type:"{strategy.type}", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}'
    )
    return [FieldError.not_supported(field, shown, ("Recreate", "RollingUpdate"))]


@validator(_APPS + "Deployment")
def validate_deployment(deployment: Message, old: Message | None) -> list[FieldError]:
    spec = deployment.spec
    found = nonnegative("spec.replicas", spec.replicas)
    found += _selector_errors(spec, "deployment")
    found += _controller_template(spec, "ReplicaSet")
    found += _deployment_strategy(spec.strategy)
    found += nonnegative("spec.minReadySeconds", spec.minReadySeconds)
    if spec.HasField("revisionHistoryLimit"):
        found += nonnegative("spec.revisionHistoryLimit", spec.revisionHistoryLimit)
    if spec.HasField("progressDeadlineSeconds"):
        deadline = spec.progressDeadlineSeconds
        found += nonnegative("spec.progressDeadlineSeconds", deadline)
        if deadline <= spec.minReadySeconds:
            found.append(
                FieldError.invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds")
            )
    return found + _selector_immutable(deployment, old)


# ---- ReplicaSet -----------------------------------------------------------------------------------
@validator(_APPS + "ReplicaSet")
def validate_replica_set(replica_set: Message, old: Message | None) -> list[FieldError]:
    spec = replica_set.spec
    found = nonnegative("spec.replicas", spec.replicas)
    found += nonnegative("spec.minReadySeconds", spec.minReadySeconds)
    found += _selector_errors(spec, "deployment")  # sic: upstream's ReplicaSet message names deployments
    found += _controller_template(spec, "ReplicaSet")
    return found + _selector_immutable(replica_set, old)


# ---- DaemonSet ------------------------------------------------------------------------------------
def _daemon_set_strategy(strategy: Message) -> list[FieldError]:
    field = "spec.updateStrategy"
    if strategy.type == "OnDelete" or not strategy.type:
        return []
    if strategy.type != "RollingUpdate":
        shown = GoText(
            f'apps.DaemonSetUpdateStrategy{{Type:"{strategy.type}", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}}'
        )
        return [FieldError.not_supported(field, shown, ("RollingUpdate", "OnDelete"))]
    if not strategy.HasField("rollingUpdate"):
        return [FieldError.required(f"{field}.rollingUpdate")]
    rolling, where = strategy.rollingUpdate, f"{field}.rollingUpdate"
    found = int_or_percent_errors(f"{where}.maxUnavailable", rolling.maxUnavailable)
    found += int_or_percent_errors(f"{where}.maxSurge", rolling.maxSurge)
    found += not_more_than_100(rolling.maxUnavailable, f"{where}.maxUnavailable")
    found += not_more_than_100(rolling.maxSurge, f"{where}.maxSurge")
    unavailable, surge = percent_value(rolling.maxUnavailable) != 0, percent_value(rolling.maxSurge) != 0
    if unavailable and surge:
        detail = "may not be set when maxUnavailable is non-zero"
        found.append(FieldError.invalid(f"{where}.maxSurge", go_int_or_string(rolling.maxSurge), detail))
    elif not unavailable and not surge:
        found.append(FieldError.required(f"{where}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return found


@validator(_APPS + "DaemonSet")
def validate_daemon_set(daemon_set: Message, old: Message | None) -> list[FieldError]:
    spec = daemon_set.spec
    found = label_selector_errors(spec.selector, "spec.selector")
    found += _template_matches(spec)
    if spec.HasField("selector") and selector_is_empty(spec.selector):
        detail = "empty selector is invalid for daemonset"
        found.append(FieldError.invalid("spec.selector", go_label_selector(spec.selector), detail))
    found += pod_template_spec_errors(spec.template, "spec.template")
    policy = spec.template.spec.restartPolicy
    if policy and policy != "Always":
        found.append(FieldError.not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
    if spec.template.spec.HasField("activeDeadlineSeconds"):
        detail = "activeDeadlineSeconds in DaemonSet is not Supported"
        found.append(FieldError.forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    found += nonnegative("spec.minReadySeconds", spec.minReadySeconds)
    found += _daemon_set_strategy(spec.updateStrategy)
    if spec.HasField("revisionHistoryLimit"):
        found += nonnegative("spec.revisionHistoryLimit", spec.revisionHistoryLimit)
    return found + _selector_immutable(daemon_set, old)


# ---- StatefulSet ----------------------------------------------------------------------------------
def _stateful_set_strategy(strategy: Message) -> list[FieldError]:
    field = "spec.updateStrategy"
    if strategy.type == "OnDelete":
        if strategy.HasField("rollingUpdate"):
            shown = GoText("&apps.RollingUpdateStatefulSetStrategy{...}")
            detail = "only allowed for updateStrategy 'RollingUpdate'"
            return [FieldError.invalid(f"{field}.rollingUpdate", shown, detail)]
        return []
    if strategy.type == "RollingUpdate":
        if not strategy.HasField("rollingUpdate"):
            return []
        rolling, where = strategy.rollingUpdate, f"{field}.rollingUpdate"
        found = nonnegative(f"{where}.partition", rolling.partition)
        if rolling.HasField("maxUnavailable"):
            found += int_or_percent_errors(f"{where}.maxUnavailable", rolling.maxUnavailable)
            if percent_value(rolling.maxUnavailable) == 0:
                found.append(
                    FieldError.invalid(
                        f"{where}.maxUnavailable", go_int_or_string(rolling.maxUnavailable), "cannot be 0"
                    )
                )
            found += not_more_than_100(rolling.maxUnavailable, f"{where}.maxUnavailable")
        return found
    if not strategy.type:
        return []  # defaulted to RollingUpdate before validation
    rolling = "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)"
    shown = GoText(f'apps.StatefulSetUpdateStrategy{{Type:"{strategy.type}", {rolling}}}')
    return [FieldError.invalid(field, shown, "must be 'RollingUpdate' or 'OnDelete'")]


def _stateful_set_spec(spec: Message) -> list[FieldError]:
    """ValidateStatefulSetSpec."""
    found: list[FieldError] = []
    policy = spec.podManagementPolicy
    if policy and policy not in ("OrderedReady", "Parallel"):
        found.append(FieldError.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    found += _stateful_set_strategy(spec.updateStrategy)
    if spec.HasField("persistentVolumeClaimRetentionPolicy"):
        retention = spec.persistentVolumeClaimRetentionPolicy
        for name in ("whenDeleted", "whenScaled"):
            value = getattr(retention, name)
            if value not in ("Retain", "Delete"):
                found.append(
                    FieldError.not_supported(
                        f"spec.persistentVolumeClaimRetentionPolicy.{name}", value, ("Retain", "Delete")
                    )
                )
    found += nonnegative("spec.replicas", spec.replicas)
    found += nonnegative("spec.minReadySeconds", spec.minReadySeconds)
    if spec.HasField("ordinals"):
        found += nonnegative("spec.ordinals.start", spec.ordinals.start)
    found += _selector_errors(spec, "statefulset")
    found += _template_matches(spec)
    metadata = spec.template.metadata
    found += labels_errors(dict(metadata.labels), "spec.template.labels")
    found += annotations_errors(dict(metadata.annotations), "spec.template.annotations")
    found += deletion_cost_errors(dict(metadata.annotations), "spec.template.annotations")
    restart = spec.template.spec.restartPolicy
    if restart and restart != "Always":
        found.append(FieldError.not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    if spec.template.spec.HasField("activeDeadlineSeconds"):
        detail = "activeDeadlineSeconds in StatefulSet is not Supported"
        found.append(FieldError.forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    return found


_STATEFUL_SET_UPDATABLE = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
)


@validator(_APPS + "StatefulSet")
def validate_stateful_set(stateful_set: Message, old: Message | None) -> list[FieldError]:
    found = _stateful_set_spec(stateful_set.spec)
    if old is None:
        return found
    clone = type(stateful_set.spec)()
    clone.CopyFrom(stateful_set.spec)
    for name in _STATEFUL_SET_UPDATABLE:
        copy_field(clone, old.spec, name)
    if not messages_equal(clone, old.spec):
        detail = (
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
            "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        )
        found.append(FieldError.forbidden("spec", detail))
    return found


# ---- ControllerRevision ---------------------------------------------------------------------------
@validator(_APPS + "ControllerRevision")
def validate_controller_revision(revision: Message, old: Message | None) -> list[FieldError]:
    found = [] if revision.HasField("data") else [FieldError.required("data", "data is mandatory")]
    found += nonnegative("revision", revision.revision)
    if old is not None and not messages_equal(revision.data, old.data):
        found.append(FieldError.invalid("data", GoText("runtime.RawExtension{...}"), "field is immutable"))
    return found
