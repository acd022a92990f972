"""TLS of the secure port: the server's context (a client certificate is asked for, never required)
and what a connection's handshake tells the application (the ASGI "tls" extension)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any

HTTP2, HTTP11 = "h2", "http/1.1"
TLS_VERSIONS = {"TLSv1.2": 0x0303, "TLSv1.3": 0x0304}  # as the ASGI extension numbers them


@dataclass(frozen=True, slots=True)
class TLSSettings:
    cert_file: str
    key_file: str
    client_ca_file: str  # client certificates signed by this CA are accepted (and requested)


def server_context(settings: TLSSettings, http2: bool) -> ssl.SSLContext:
    """The serving certificate, client certificates of the CA asked for (anonymous without one, as
    kube-apiserver's tls.VerifyClientCertIfGiven), TLS 1.2 at least, ALPN h2 first when offered."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(settings.cert_file, settings.key_file)
    context.load_verify_locations(settings.client_ca_file)
    context.verify_mode = ssl.CERT_OPTIONAL
    context.set_alpn_protocols([HTTP2, HTTP11] if http2 else [HTTP11])
    return context


def cipher_ids(context: ssl.SSLContext) -> dict[str, int]:
    """The IANA number of each cipher suite the context may choose, by OpenSSL's name."""
    return {cipher["name"]: cipher["id"] & 0xFFFF for cipher in context.get_ciphers()}


def tls_extension(ssl_object: ssl.SSLObject, ciphers: dict[str, int]) -> dict[str, Any]:
    """The ASGI "tls" extension of a connection whose handshake is done: the client's certificate
    (verified against the client CA during the handshake) as PEM, or none."""
    certificate = ssl_object.getpeercert(binary_form=True)
    cipher = ssl_object.cipher()
    return {
        "server_cert": None,
        "client_cert_chain": [ssl.DER_cert_to_PEM_cert(certificate)] if certificate else [],
        "tls_version": TLS_VERSIONS.get(ssl_object.version() or ""),
        "cipher_suite": ciphers.get(cipher[0]) if cipher else None,
    }
