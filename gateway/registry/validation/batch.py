"""batch/v1 (k8s.io/kubernetes pkg/apis/batch/validation): Jobs — counts, completion modes, a pod
template restarting OnFailure or Never, selector, template and completions immutable — and CronJobs
(names of at most 52 characters, schedules, time zones, job templates).

A Job without a selector and without manualSelector gets a generated one from its strategy; such
a Job's selector rules apply once it has one.
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.common import (
    copy_field,
    enum,
    go_label_selector,
    go_string_map,
    label_selector_errors,
    messages_equal,
    nonnegative,
    selector_matches,
)
from protokube.gateway.registry.validation.cron import CronError, parse_standard
from protokube.gateway.registry.validation.pods import pod_template_spec_errors

_BATCH = "k8s.io.api.batch.v1."
MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
MAX_CRONJOB_NAME = 52
_TIME_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
# Template fields a suspended Job that never started may change (mutable scheduling directives).
_SCHEDULING_FIELDS = ("nodeSelector", "tolerations", "affinity", "schedulingGates")
# Job spec fields that never change, with the Go type of the structured ones.
_IMMUTABLE_JOB_FIELDS = {
    "podFailurePolicy": "PodFailurePolicy",
    "backoffLimitPerIndex": "",
    "managedBy": "",
    "successPolicy": "SuccessPolicy",
    "completionMode": "",
}


def _job_spec(spec: Message, field: str) -> list[FieldError]:
    """validateJobSpec: counts, completion mode, replacement policy, the template and its restartPolicy."""
    found: list[FieldError] = []
    for name in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished"):
        if spec.HasField(name):
            found += nonnegative(f"{field}.{name}", getattr(spec, name))
    indexed = spec.completionMode == "Indexed"
    if spec.HasField("backoffLimitPerIndex"):
        found += nonnegative(f"{field}.backoffLimitPerIndex", spec.backoffLimitPerIndex)
        if spec.HasField("maxFailedIndexes"):
            failed = spec.maxFailedIndexes
            found += nonnegative(f"{field}.maxFailedIndexes", failed)
            if failed > MAX_FAILED_INDEXES:
                detail = f"must be less than or equal to {MAX_FAILED_INDEXES}"
                found.append(FieldError.invalid(f"{field}.maxFailedIndexes", failed, detail))
            if spec.HasField("completions") and failed > spec.completions:
                found.append(
                    FieldError.invalid(f"{field}.maxFailedIndexes", failed, "must be less than or equal to completions")
                )
        if not indexed:
            found.append(
                FieldError.invalid(
                    f"{field}.completionMode", spec.completionMode or None, "requires indexed completion mode"
                )
            )
    elif spec.HasField("maxFailedIndexes"):
        detail = "cannot set maxFailedIndexes when backoffLimitPerIndex is not set"
        found.append(FieldError.invalid(f"{field}.maxFailedIndexes", spec.maxFailedIndexes, detail))
    if spec.HasField("completionMode"):
        found += enum(f"{field}.completionMode", spec.completionMode, ("NonIndexed", "Indexed"), required=True)
        if indexed:
            if not spec.HasField("completions"):
                found.append(FieldError.required(f"{field}.completions", "when completion mode is Indexed"))
            if spec.HasField("parallelism") and spec.parallelism > MAX_PARALLELISM_INDEXED:
                detail = f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"
                found.append(FieldError.invalid(f"{field}.parallelism", spec.parallelism, detail))
    if spec.HasField("podReplacementPolicy"):
        allowed = ("Failed",) if spec.HasField("podFailurePolicy") else ("Failed", "TerminatingOrFailed")
        found += enum(f"{field}.podReplacementPolicy", spec.podReplacementPolicy, allowed, required=True)
    found += pod_template_spec_errors(spec.template, f"{field}.template")
    restart = spec.template.spec.restartPolicy
    if restart in ("Always", ""):  # as upstream: Always is what defaulting gives a template without one
        found.append(FieldError.required(f"{field}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        found.append(FieldError.not_supported(f"{field}.template.spec.restartPolicy", restart, ("OnFailure", "Never")))
    elif spec.HasField("podFailurePolicy") and restart != "Never":
        detail = 'only "Never" is supported when podFailurePolicy is specified'
        found.append(FieldError.invalid(f"{field}.template.spec.restartPolicy", restart, detail))
    return found


def _job_selector(spec: Message) -> list[FieldError]:
    """ValidateJobSpec's selector rules (a Job awaiting its generated selector has none yet)."""
    if not spec.HasField("selector"):
        return [FieldError.required("spec.selector")] if spec.manualSelector else []
    found = label_selector_errors(spec.selector, "spec.selector")
    labels = dict(spec.template.metadata.labels)
    if not selector_matches(spec.selector, labels):
        detail = "`selector` does not match template `labels`"
        found.append(FieldError.invalid("spec.template.metadata.labels", go_string_map(labels), detail))
    return found


def _elastic_indexed(spec: Message, old: Message) -> bool:
    """An Indexed Job whose completions follow parallelism may scale both (ElasticIndexedJob)."""
    return (
        spec.completionMode == "Indexed"
        and old.completionMode == "Indexed"
        and spec.completions == spec.parallelism
        and old.completions == old.parallelism
    )


def _optional_value(message: Message, name: str) -> object:
    return getattr(message, name) if message.HasField(name) else None


def _job_update(job: Message, old: Message) -> list[FieldError]:
    spec, old_spec = job.spec, old.spec
    found: list[FieldError] = []
    if not _elastic_indexed(spec, old_spec) and _optional_value(spec, "completions") != _optional_value(
        old_spec, "completions"
    ):
        found.append(FieldError.invalid("spec.completions", _optional_value(spec, "completions"), "field is immutable"))
    if old_spec.HasField("selector") and not messages_equal(spec.selector, old_spec.selector):
        found.append(FieldError.invalid("spec.selector", go_label_selector(spec.selector), "field is immutable"))
    for name, go_type in _IMMUTABLE_JOB_FIELDS.items():
        value = _optional_value(spec, name)
        if value != _optional_value(old_spec, name):
            shown = GoText(f"batch.{go_type}{{...}}") if go_type and value is not None else value
            found.append(FieldError.invalid(f"spec.{name}", shown, "field is immutable"))
    template = type(spec.template)()
    template.CopyFrom(spec.template)
    if old_spec.suspend and not old.status.HasField("startTime"):
        template.metadata.ClearField("labels")
        template.metadata.labels.update(old_spec.template.metadata.labels)
        template.metadata.ClearField("annotations")
        template.metadata.annotations.update(old_spec.template.metadata.annotations)
        for name in _SCHEDULING_FIELDS:
            copy_field(template.spec, old_spec.template.spec, name)
    elif old_spec.template.spec.schedulingGates and not spec.template.spec.schedulingGates:
        copy_field(template.spec, old_spec.template.spec, "schedulingGates")
    if not messages_equal(template, old_spec.template):
        found.append(FieldError.invalid("spec.template", GoText("core.PodTemplateSpec{...}"), "field is immutable"))
    return found


@validator(_BATCH + "Job")
def validate_job(job: Message, old: Message | None) -> list[FieldError]:
    found = _job_spec(job.spec, "spec") + _job_selector(job.spec)
    if old is not None:
        found += _job_update(job, old)
    return found


def _time_zone_errors(spec: Message) -> list[FieldError]:
    if not spec.HasField("timeZone"):
        return []
    zone, field = spec.timeZone, "spec.timeZone"
    if not zone:
        return [FieldError.invalid(field, zone, "timeZone must be nil or non-empty string")]
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            return [FieldError.invalid(field, zone, f"unknown time zone {zone}")]
    found = []
    if zone.lower() == "local":
        detail = "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
        found.append(FieldError.invalid(field, zone, detail))
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        found.append(FieldError.invalid(field, zone, f"unknown time zone {zone}"))
    return found


def _cron_job_spec(spec: Message, allow_tz: bool) -> list[FieldError]:
    found: list[FieldError] = []
    if not spec.schedule:
        found.append(FieldError.required("spec.schedule"))
    else:
        try:
            parse_standard(spec.schedule)
        except CronError as error:
            found.append(FieldError.invalid("spec.schedule", spec.schedule, str(error)))
        if "TZ" in spec.schedule:
            if not allow_tz:
                detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
                found.append(FieldError.invalid("spec.schedule", spec.schedule, detail))
            elif spec.HasField("timeZone"):
                detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
                found.append(FieldError.invalid("spec.schedule", spec.schedule, detail))
    found += _time_zone_errors(spec)
    if spec.HasField("startingDeadlineSeconds"):
        found += nonnegative("spec.startingDeadlineSeconds", spec.startingDeadlineSeconds)
    found += enum("spec.concurrencyPolicy", spec.concurrencyPolicy, ("Allow", "Forbid", "Replace"))
    job = spec.jobTemplate.spec
    found += _job_spec(job, "spec.jobTemplate.spec")
    if job.HasField("selector"):
        detail = "`selector` will be auto-generated"
        found.append(FieldError.invalid("spec.jobTemplate.spec.selector", go_label_selector(job.selector), detail))
    if job.manualSelector:
        found.append(FieldError.not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.HasField(name):
            found += nonnegative(f"spec.{name}", getattr(spec, name))
    return found


@validator(_BATCH + "CronJob")
def validate_cron_job(cron_job: Message, old: Message | None) -> list[FieldError]:
    # An existing schedule with TZ may stay as it is (upstream's allowTZInSchedule on update).
    allow_tz = old is not None and "TZ" in old.spec.schedule
    found = _cron_job_spec(cron_job.spec, allow_tz)
    name = cron_job.metadata.name
    if old is None and len(name) > MAX_CRONJOB_NAME:
        found.append(FieldError.invalid("metadata.name", name, f"must be no more than {MAX_CRONJOB_NAME} characters"))
    return found
