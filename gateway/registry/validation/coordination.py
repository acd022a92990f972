"""coordination.k8s.io/v1 Leases (k8s.io/kubernetes pkg/apis/coordination/validation)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator


@validator("k8s.io.api.coordination.v1.Lease")
def validate_lease(lease: Message, old: Message | None) -> list[FieldError]:
    spec = lease.spec
    found = []
    if spec.HasField("leaseDurationSeconds") and spec.leaseDurationSeconds <= 0:
        found.append(
            FieldError.invalid("spec.leaseDurationSeconds", spec.leaseDurationSeconds, "must be greater than 0")
        )
    if spec.HasField("leaseTransitions") and spec.leaseTransitions < 0:
        detail = "must be greater than or equal to 0"
        found.append(FieldError.invalid("spec.leaseTransitions", spec.leaseTransitions, detail))
    return found
