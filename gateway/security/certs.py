"""The server's certificates: a self-signed CA, the serving certificate and the admin client
certificate, made on first start in the data dir and renewed before they expire (as k3s does).

Keys are ECDSA P-256, written with mode 0600. The serving certificate names localhost,
127.0.0.1, ::1, the host name and any --tls-san; a change to those names makes a new one. Client
certificates carry the user in their Common Name and groups in Organization, as upstream's x509
authenticator reads them.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
LEAF_DAYS = 365
# A certificate with less than this share of its lifetime left is renewed on start.
RENEW_FRACTION = 1 / 3
ADMIN_USER, ADMIN_GROUP = "protokube-admin", "system:masters"
PrivateKey = ec.EllipticCurvePrivateKey


@dataclass(frozen=True, slots=True)
class Pair:
    """A certificate and its key, as files."""

    cert: Path
    key: Path

    def load(self) -> tuple[x509.Certificate, PrivateKey]:
        cert = x509.load_pem_x509_certificate(self.cert.read_bytes())
        key = serialization.load_pem_private_key(self.key.read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return cert, key


@dataclass(frozen=True, slots=True)
class TLSFiles:
    ca: Pair
    serving: Pair
    admin: Pair


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def write_private(path: Path, data: bytes) -> None:
    """Write a file readable by its owner only (keys, and anything that holds one)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, 0o600)


def _save(pair: Pair, cert: x509.Certificate, key: PrivateKey) -> None:
    write_private(pair.key, key_pem(key))
    pair.cert.write_bytes(pem(cert))


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, key: PrivateKey, days: int) -> x509.CertificateBuilder:
    now = _now()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))  # tolerate small clock differences
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def new_ca(common_name: str = "protokube-ca") -> tuple[x509.Certificate, PrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(f"{common_name}@{int(_now().timestamp())}")
    cert = (
        _builder(name, name, key, CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _leaf(
    ca: tuple[x509.Certificate, PrivateKey], subject: x509.Name, usage: x509.ObjectIdentifier, days: int
) -> tuple[x509.CertificateBuilder, PrivateKey]:
    ca_cert, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(subject, ca_cert.subject, key, days)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        )  # digitalSignature, keyEncipherment
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    return builder, key


def issue_client(
    ca: tuple[x509.Certificate, PrivateKey], user: str, groups: tuple[str, ...] = (), days: int = LEAF_DAYS
) -> tuple[x509.Certificate, PrivateKey]:
    """A client certificate for ``user`` in ``groups`` (CN and O, as upstream's x509 authenticator reads)."""
    builder, key = _leaf(ca, _name(user, groups), ExtendedKeyUsageOID.CLIENT_AUTH, days)
    return builder.sign(ca[1], hashes.SHA256()), key


def serving_names(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    names = ["localhost", "127.0.0.1", "::1", socket.gethostname(), *extra]
    return tuple(dict.fromkeys(n for n in names if n))


def issue_serving(
    ca: tuple[x509.Certificate, PrivateKey],
    names: tuple[str, ...],
    days: int = LEAF_DAYS,
    common_name: str = "protokube-apiserver",
) -> tuple[x509.Certificate, PrivateKey]:
    builder, key = _leaf(ca, _name(common_name), ExtendedKeyUsageOID.SERVER_AUTH, days)
    builder = builder.add_extension(x509.SubjectAlternativeName([_san(n) for n in names]), critical=False)
    return builder.sign(ca[1], hashes.SHA256()), key


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _sans(cert: x509.Certificate) -> set[str]:
    try:
        extension = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(v) for v in extension.get_values_for_type(x509.DNSName)} | {
        str(v) for v in extension.get_values_for_type(x509.IPAddress)
    }


def needs_renewal(cert: x509.Certificate) -> bool:
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    return cert.not_valid_after_utc - _now() < lifetime * RENEW_FRACTION


def ensure(directory: Path, extra_sans: tuple[str, ...] = ()) -> TLSFiles:
    """The CA, serving and admin certificates under ``directory``: made when missing, renewed when
    close to expiry (or, for the serving certificate, when the names it must carry changed)."""
    files = TLSFiles(
        ca=Pair(directory / "ca.crt", directory / "ca.key"),
        serving=Pair(directory / "serving.crt", directory / "serving.key"),
        admin=Pair(directory / "admin.crt", directory / "admin.key"),
    )
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    fresh_ca = not files.ca.cert.exists() or not files.ca.key.exists() or needs_renewal(files.ca.load()[0])
    if fresh_ca:
        _save(files.ca, *new_ca())
    ca = files.ca.load()
    names = serving_names(extra_sans)
    if fresh_ca or _stale(files.serving, ca) or _sans(files.serving.load()[0]) != {_canonical(n) for n in names}:
        _save(files.serving, *issue_serving(ca, names))
    if fresh_ca or _stale(files.admin, ca):
        _save(files.admin, *issue_client(ca, ADMIN_USER, (ADMIN_GROUP,)))
    return files


def _stale(pair: Pair, ca: tuple[x509.Certificate, PrivateKey]) -> bool:
    """Missing, close to expiry, or issued by another CA."""
    if not pair.cert.exists() or not pair.key.exists():
        return True
    cert = pair.load()[0]
    return needs_renewal(cert) or cert.issuer != ca[0].subject


def _canonical(name: str) -> str:
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
