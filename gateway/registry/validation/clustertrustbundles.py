"""certificates.k8s.io/v1alpha1 ClusterTrustBundles (k8s.io/kubernetes 1.32 pkg/apis/certificates/
validation ValidateClusterTrustBundle and core/validation ValidateClusterTrustBundleName): a name
prefixed by its signer name (``example.com/foo`` → ``example.com:foo:``) or, without one, free of
colons; a valid signer name, which never changes; a trust bundle of at most 1 MiB that is only PEM
CERTIFICATE blocks without headers, each an X.509 CA certificate, at least one, none repeated. An
update that keeps the bundle's text does not parse it again.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass

from cryptography import x509
from google.protobuf.message import Message

import protokube.gen.protokube.options.v1.options_pb2 as opts
from protokube.gateway.errors import FieldError
from protokube.gateway.registry.validation.base import validator
from protokube.gateway.registry.validation.certificates import signer_name_errors
from protokube.gateway.registry.validation.common import immutable, invalid_each
from protokube.gateway.registry.validation.meta import name_problems

MAX_TRUST_BUNDLE_SIZE = 1024 * 1024  # certificates.MaxTrustBundleSize
OMITTED = "<value omitted>"
BUNDLE = "spec.trustBundle"


def bundle_name_problems(signer_name: str, name: str, prefix: bool = False) -> list[str]:
    """ValidateClusterTrustBundleName: what is wrong with a name (or generateName) for the signer."""
    if not signer_name:
        if ":" in name:
            return ['ClusterTrustBundle without signer name must not have ":" in its name']
        return name_problems(opts.NAME_RULE_UNSPECIFIED, name, prefix)
    required = signer_name.replace("/", ":") + ":"
    if not name.startswith(required):
        return [f"ClusterTrustBundle for signerName {signer_name} must be named with prefix {required}"]
    return name_problems(opts.NAME_RULE_UNSPECIFIED, name[len(required) :], prefix)


@dataclass(frozen=True, slots=True)
class PemBlock:
    type: str
    has_headers: bool
    data: bytes


def _line(data: str) -> tuple[str, str]:
    """encoding/pem's getLine: the first line without its end and trailing blanks, and the rest."""
    line, newline, rest = data.partition("\n")
    return line.rstrip(" \t\r"), rest if newline else ""


def pem_blocks(text: str) -> Iterator[PemBlock]:
    """The blocks encoding/pem's Decode finds in turn (Go 1.23, as Kubernetes 1.32 is built): text
    between blocks and blocks that do not decode are skipped."""
    rest = text
    while True:
        if rest.startswith("-----BEGIN "):
            rest = rest[len("-----BEGIN ") :]
        elif "\n-----BEGIN " in rest:
            rest = rest.split("\n-----BEGIN ", 1)[1]
        else:
            return
        type_line, rest = _line(rest)
        if not type_line.endswith("-----"):
            continue
        block_type = type_line[: -len("-----")]
        headers = False
        while True:
            if not rest:
                return
            line, following = _line(rest)
            if ":" not in line:
                break
            headers, rest = True, following
        if not headers and rest.startswith("-----END "):
            end, trailer_at = 0, len("-----END ")
        else:
            end = rest.find("\n-----END ")
            trailer_at = end + len("\n-----END ")
        if end < 0:
            continue
        trailer = rest[trailer_at:]
        expected = block_type + "-----"
        if not trailer.startswith(expected) or _line(trailer[len(expected) :])[0]:
            continue
        encoded = "".join(rest[:end].split())
        try:
            data = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            continue
        _, rest = _line(rest[end + len("\n-----END ") - 1 :])
        yield PemBlock(block_type, headers, data)


def _entry_problem(index: int, block: PemBlock) -> str | None:
    if block.type != "CERTIFICATE":
        return f"entry {index} has bad block type: {block.type}"
    if block.has_headers:
        return f"entry {index} has PEM block headers"
    try:
        certificate = x509.load_der_x509_certificate(block.data)
        constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        constraints = None
    except ValueError:
        return f"entry {index} does not parse as X.509"
    if constraints is None or not constraints.ca:
        return f"entry {index} does not have the CA bit set"
    return None


def trust_bundle_errors(bundle: str) -> list[FieldError]:
    """validateTrustBundle: the blocks' problems, else a missing or repeated trust anchor."""
    if len(bundle.encode()) > MAX_TRUST_BUNDLE_SIZE:
        return [FieldError.too_long(BUNDLE, MAX_TRUST_BUNDLE_SIZE)]
    found: list[FieldError] = []
    indices: dict[bytes, list[int]] = {}
    for index, block in enumerate(pem_blocks(bundle)):
        problem = _entry_problem(index, block)
        if problem is not None:
            found.append(FieldError.invalid(BUNDLE, OMITTED, problem))
        else:
            indices.setdefault(block.data, []).append(index)
    if found:
        return found
    if not indices:
        return [FieldError.invalid(BUNDLE, OMITTED, "at least one trust anchor must be provided")]
    # upstream ranges over a Go map: repeated anchors come out in no set order; here, by first index.
    repeated = sorted(group for group in indices.values() if len(group) > 1)
    return [
        FieldError.invalid(BUNDLE, OMITTED, f"duplicate trust anchor (indices [{' '.join(map(str, group))}])")
        for group in repeated
    ]


@validator("k8s.io.api.certificates.v1alpha1.ClusterTrustBundle")
def validate_cluster_trust_bundle(bundle: Message, old: Message | None) -> list[FieldError]:
    metadata, spec = bundle.metadata, bundle.spec
    found: list[FieldError] = []
    if old is None and metadata.generateName:
        prefix_problems = bundle_name_problems(spec.signerName, metadata.generateName, prefix=True)
        found += invalid_each("metadata.generateName", metadata.generateName, prefix_problems)
    if metadata.name:
        found += invalid_each("metadata.name", metadata.name, bundle_name_problems(spec.signerName, metadata.name))
    if spec.signerName:
        found += signer_name_errors("spec.signerName", spec.signerName)
    if old is None or spec.trustBundle != old.spec.trustBundle:
        found += trust_bundle_errors(spec.trustBundle)
    if old is not None:
        found += immutable("spec.signerName", spec.signerName, old.spec.signerName)
    return found
