"""Cells of batch/v1 Jobs and CronJobs (upstream's printJob, printCronJob)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.printing.cells.base import NONE, Row, cell, format_label_selector, time_seconds
from protokube.gateway.printing.humanize import human_duration, since


def _condition_true(job: Message, kind: str) -> bool:
    """upstream's hasJobCondition: the first condition of the type decides."""
    condition = next((c for c in job.status.conditions if c.type == kind), None)
    return condition is not None and condition.status == "True"


@cell("job_status")
def job_status(row: Row) -> str:
    job = row.obj
    if _condition_true(job, "Complete"):
        return "Complete"
    if _condition_true(job, "Failed"):
        return "Failed"
    if job.metadata.HasField("deletionTimestamp"):
        return "Terminating"
    if _condition_true(job, "Suspended"):
        return "Suspended"
    if _condition_true(job, "FailureTarget"):
        return "FailureTarget"
    return "Running"


@cell("job_completions")
def job_completions(row: Row) -> str:
    spec, succeeded = row.obj.spec, row.obj.status.succeeded
    if spec.HasField("completions"):
        return f"{succeeded}/{spec.completions}"
    # Without completions upstream's defaulting sets parallelism (to 1 when both are unset).
    parallelism = spec.parallelism if spec.HasField("parallelism") else 1
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


@cell("job_duration")
def job_duration(row: Row) -> str:
    status = row.obj.status
    start = time_seconds(status.startTime) if status.HasField("startTime") else None
    if start is None:
        return ""
    end = time_seconds(status.completionTime) if status.HasField("completionTime") else None
    return human_duration((end if end is not None else row.now) - start)


@cell("cronjob_timezone")
def cronjob_timezone(row: Row) -> str:
    spec = row.obj.spec
    return spec.timeZone if spec.HasField("timeZone") else NONE


@cell("cronjob_suspend")
def cronjob_suspend(row: Row) -> str:
    """upstream's printBoolPtr of spec.suspend, which its defaulting sets to false."""
    spec = row.obj.spec
    return "True" if spec.HasField("suspend") and spec.suspend else "False"


@cell("cronjob_active")
def cronjob_active(row: Row) -> int:
    return len(row.obj.status.active)


@cell("cronjob_last_schedule")
def cronjob_last_schedule(row: Row) -> str:
    status = row.obj.status
    if not status.HasField("lastScheduleTime"):
        return NONE
    return since(time_seconds(status.lastScheduleTime), row.now)


@cell("cronjob_containers")
def cronjob_containers(row: Row) -> str:
    return ",".join(c.name for c in row.obj.spec.jobTemplate.spec.template.spec.containers)


@cell("cronjob_images")
def cronjob_images(row: Row) -> str:
    return ",".join(c.image for c in row.obj.spec.jobTemplate.spec.template.spec.containers)


@cell("cronjob_selector")
def cronjob_selector(row: Row) -> str:
    job_spec = row.obj.spec.jobTemplate.spec
    return format_label_selector(job_spec.selector if job_spec.HasField("selector") else None)
