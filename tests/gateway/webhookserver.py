"""A real HTTPS admission webhook server on loopback for the tests: aiohttp in a thread of its
own, a certificate (made here with ``cryptography``) for 127.0.0.1 and the Service names the
tests use, signed by a CA of its own (``ca_bundle``). Tests choose each path's handler: a function
of the AdmissionReview's request to the response's fields, or to raw bytes; every review received
is kept."""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import json
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# A handler answers the review's request with the response's fields, raw bytes (a 200 of JSON), or
# (status, content type, bytes).
Handler = Callable[[dict[str, Any]], dict[str, Any] | bytes | tuple[int, str, bytes]]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    dns_names: tuple[str, ...] = (),
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer or (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    else:
        names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), *(x509.DNSName(n) for n in dns_names)]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class WebhookServer:
    """``handlers``: path → handler; ``reviews``: path → the requests received there."""

    def __init__(self, dns_names: tuple[str, ...] = (), also_on: str = "") -> None:
        """``also_on``: another address to listen on (with the same port), e.g. the host's own."""
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = _certificate("webhook-test-ca", ca_key, None)
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate("webhook", key, (ca.subject, ca_key), dns_names)
        self.ca_pem = _pem(ca)
        self.ca_bundle = base64.b64encode(self.ca_pem).decode()
        self._dir = tempfile.TemporaryDirectory()
        cert_file, key_file = Path(self._dir.name, "tls.crt"), Path(self._dir.name, "tls.key")
        cert_file.write_bytes(_pem(cert))
        pkcs8 = serialization.PrivateFormat.PKCS8
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption()))
        self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ssl.load_cert_chain(cert_file, key_file)
        self.handlers: dict[str, Handler] = {}
        self.reviews: dict[str, list[dict[str, Any]]] = {}
        self.queries: dict[str, list[str]] = {}
        self.port = 0
        self.also_on = also_on
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def start(self) -> WebhookServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/{path:.*}", self._serve)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self._ssl)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        if self.also_on:
            await web.TCPSite(self._runner, self.also_on, self.port, ssl_context=self._ssl).start()

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        review = await request.json()
        self.reviews.setdefault(path, []).append(review)
        self.queries.setdefault(path, []).append(request.query_string)
        handler = self.handlers[path]
        answer = await asyncio.get_running_loop().run_in_executor(None, handler, review["request"])
        if isinstance(answer, bytes):
            return web.Response(body=answer, content_type="application/json")
        if isinstance(answer, tuple):
            status, content_type, body = answer
            return web.Response(status=status, body=body, content_type=content_type)
        response = {"uid": review["request"]["uid"], **answer}
        if "patch" in response and isinstance(response["patch"], list):
            response["patch"] = base64.b64encode(json.dumps(response["patch"]).encode()).decode()
            response.setdefault("patchType", "JSONPatch")
        return web.json_response({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response})

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._dir.cleanup()


def host_address() -> str:
    """This host's address on its default route ("" when it has none but loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))  # no packet is sent: a UDP connect only picks the route
        except OSError:
            return ""
        address = probe.getsockname()[0]
    return "" if address.startswith("127.") else address


def allow(_: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True}


def slow(seconds: float) -> Handler:
    def handler(_: dict[str, Any]) -> dict[str, Any]:
        time.sleep(seconds)
        return {"allowed": True}

    return handler
