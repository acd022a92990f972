"""Cells of certificates.k8s.io/v1 CertificateSigningRequests (upstream's printCertificateSigningRequest)."""

from __future__ import annotations

from protokube.gateway.printing.cells.base import NONE, Row, cell
from protokube.gateway.printing.humanize import human_duration


@cell("csr_signer_name")
def csr_signer_name(row: Row) -> str:
    return row.obj.spec.signerName or NONE


@cell("csr_requested_duration")
def csr_requested_duration(row: Row) -> str:
    spec = row.obj.spec
    return human_duration(spec.expirationSeconds) if spec.HasField("expirationSeconds") else NONE


@cell("csr_condition")
def csr_condition(row: Row) -> str:
    """upstream's extractCSRStatus: Denied over Approved over Pending, then Failed and Issued."""
    kinds = {c.type for c in row.obj.status.conditions}
    status = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        status += ",Failed"
    if row.obj.status.certificate:
        status += ",Issued"
    return status
