"""certificates.k8s.io/v1 CertificateSigningRequests (k8s.io/kubernetes pkg/apis/certificates/
validation): a PEM CERTIFICATE REQUEST with a valid signature, known and unique usages, a signer
name of the form example.com/signer, expiration of at least ten minutes."""

from __future__ import annotations

from cryptography import x509
from google.protobuf.message import Message

from protokube.gateway.errors import FieldError, GoText
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.syntax import dns1123_label_problems, dns1123_subdomain_problems

USAGES = (
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
)
LEGACY_SIGNER = "kubernetes.io/legacy-unknown"


def _go_bytes(data: bytes) -> GoText:
    """A []byte as Go's %#v prints it."""
    return GoText("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


def parse_request(pem: bytes) -> x509.CertificateSigningRequest:
    """certificates.ParseCSR: the first PEM block, a CERTIFICATE REQUEST; a ValueError in Go's words
    when it is not one."""
    start = pem.find(b"-----BEGIN ")
    if start < 0 or not pem[start:].startswith(b"-----BEGIN CERTIFICATE REQUEST-----"):
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        return x509.load_pem_x509_csr(pem[start:])
    except ValueError:
        raise ValueError("x509: malformed certificate request") from None


def _request_problem(pem: bytes) -> str | None:
    """certificates.ParseCSR then CheckSignature: the first problem, as Go words it."""
    try:
        request = parse_request(pem)
    except ValueError as problem:
        return str(problem)
    if not request.is_signature_valid:
        return "x509: ECDSA verification failure"
    return None


def signer_name_errors(field: str, name: str) -> list[FieldError]:
    """ValidateSignerName: a fully qualified domain and a path, ``example.com/signer-name``."""
    if not name:
        return [FieldError.required(field)]
    segments = name.split("/")
    if len(segments) != 2:
        detail = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [FieldError.invalid(field, name, detail)]
    domain, path = segments
    found = []
    if len(domain) > 253:
        found.append(FieldError.too_long(field, 253))
    labels = domain.split(".")
    for label in labels:
        problems = dns1123_label_problems(label)
        if problems:
            found += [FieldError.invalid(field, domain, f'validating label "{label}": {p}') for p in problems]
            break
    if len(labels) < 2:
        found.append(
            FieldError.invalid(field, domain, "should be a domain with at least two segments separated by dots")
        )
    for label in path.split("."):
        problems = dns1123_subdomain_problems(label)
        if problems:
            found += [FieldError.invalid(field, path, f'validating label "{label}": {p}') for p in problems]
            break
    longest = 253 + (253 + 63 + 1) + 1  # a domain, "/", and a path with room for a label, ".", a subdomain
    if len(name) > longest:
        found.append(FieldError.too_long(field, longest))
    return found


@validator("k8s.io.api.certificates.v1.CertificateSigningRequest")
def validate_certificate_signing_request(csr: Message, old: Message | None) -> list[FieldError]:
    spec = csr.spec
    found: list[FieldError] = []
    problem = _request_problem(spec.request)
    if problem is not None:
        found.append(FieldError.invalid("spec.request", _go_bytes(spec.request), problem))
    if not spec.usages:
        found.append(FieldError.required("spec.usages"))
    seen: set[str] = set()
    for i, usage in enumerate(spec.usages):
        if usage not in USAGES:
            found.append(FieldError.not_supported(f"spec.usages[{i}]", usage, USAGES))
    for i, usage in enumerate(spec.usages):
        if usage in seen:
            found.append(FieldError.duplicate(f"spec.usages[{i}]", usage))
        seen.add(usage)
    if spec.signerName == LEGACY_SIGNER:
        detail = "the legacy signerName is not allowed via this API version"
        found.append(FieldError.invalid("spec.signerName", spec.signerName, detail))
    else:
        found += signer_name_errors("spec.signerName", spec.signerName)
    if spec.HasField("expirationSeconds") and spec.expirationSeconds < 600:
        detail = "may not specify a duration less than 600 seconds (10 minutes)"
        found.append(FieldError.invalid("spec.expirationSeconds", spec.expirationSeconds, detail))
    return found
