"""Serving the gateway with hypercorn: HTTPS on the secure port, plain HTTP on an optional
insecure one, and what hypercorn does not do by itself (reason phrases, client certificates).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import h11
import hypercorn.asyncio.run as hypercorn_run
from hypercorn.asyncio import serve
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.config import Config
from hypercorn.events import Event, Updated
from quart import Quart

from gateway.flowcontrol import lanes

_h11_response_init = h11.Response.__init__


MAX_HEADER_BYTES = 1 << 20  # k8s.io/apiserver SecureServingInfo: MaxHeaderBytes
HEADER_LIMIT = MAX_HEADER_BYTES + 4096  # what Go's net/http accepts: MaxHeaderBytes and 4 KiB of slack


def _response_with_reason(self: h11.Response, **kwargs: object) -> None:
    if not kwargs.get("reason"):
        with contextlib.suppress(ValueError):
            kwargs["reason"] = HTTPStatus(int(kwargs["status_code"])).phrase.encode()
    _h11_response_init(self, **kwargs)


def use_standard_reason_phrases() -> None:
    """hypercorn writes HTTP/1.1 status lines without a reason phrase ("HTTP/1.1 409 "); clients that
    show or compare it (the official Python client puts it in every ApiException) expect Go's ("409
    Conflict"). hypercorn has no setting for it, so h11's responses get the standard phrase here.
    Called once by ``serve_app``, the process's only HTTP server."""
    if h11.Response.__init__ is not _response_with_reason:
        h11.Response.__init__ = _response_with_reason  # type: ignore[method-assign]


@dataclass(frozen=True, slots=True)
class TLSSettings:
    cert_file: str
    key_file: str
    client_ca_file: str  # client certificates signed by this CA are accepted (and requested)


class _ClientCertificate:
    """Puts the TLS client certificate into the ASGI scope (the ASGI "tls" extension)."""

    def __init__(self, app: Any, certificate_der: bytes | None) -> None:
        self.app = app
        chain = [ssl.DER_cert_to_PEM_cert(certificate_der)] if certificate_der else []
        self.tls = {"client_cert_chain": chain}

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable, *rest: Any) -> None:
        scope.setdefault("extensions", {})["tls"] = self.tls
        await self.app(scope, receive, send, *rest)


class _TLSAwareServer(TCPServer):
    """hypercorn's per-connection server, telling the app which client certificate (if any) the
    connection presented; hypercorn has no setting for it.

    It also lets go of a connection the client has closed while it was idle: hypercorn (0.18) kept
    such a connection — its socket and three tasks — until the keep-alive timeout (75 s), so
    clients that open and close connections quickly could hold thousands of descriptors.
    """

    _idle = True  # no request in flight (hypercorn's Updated events say when that changes)
    _peer_gone = False

    async def run(self) -> None:
        ssl_object = self.writer.get_extra_info("ssl_object")
        if ssl_object is not None:
            self.app = _ClientCertificate(self.app, ssl_object.getpeercert(binary_form=True))
        lanes.open_connection()  # this task's context: the requests read from it inherit the lane
        await super().run()

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated):
            self._idle = event.idle
        await super().protocol_send(event)

    async def _read_data(self) -> None:
        await super()._read_data()
        self._peer_gone = True
        if self._idle:  # nothing in flight: end the keep-alive wait now
            await self.idle_task.restart(self._task_group, self._idle_timeout)

    async def _idle_timeout(self) -> None:
        if self._peer_gone:
            await asyncio.shield(self._initiate_server_close())
            return
        await super()._idle_timeout()


def listen_socket(listen: str, reuse_port: bool = False) -> socket.socket:
    """Bind and listen before serving, so the address accepts connections once we say it does
    (``reuse_port``: several gateway processes bind it, the kernel spreads connections)."""
    host, _, port = listen.rpartition(":")
    sock = socket.create_server((host.strip("[]"), int(port)), reuse_port=reuse_port, backlog=1024)
    sock.set_inheritable(True)
    return sock


async def serve_app(
    app: Quart,
    sock: socket.socket,
    shutdown: asyncio.Event,
    *,
    tls: TLSSettings | None = None,
    insecure: socket.socket | None = None,
    access_log: bool = False,
) -> None:
    """Serve on ``sock`` (with TLS when given) and on the plain-HTTP ``insecure`` socket if any."""
    use_standard_reason_phrases()
    hypercorn_run.TCPServer = _TLSAwareServer  # type: ignore[misc]
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    if tls is not None:
        config.certfile, config.keyfile, config.ca_certs = tls.cert_file, tls.key_file, tls.client_ca_file
        config.verify_mode = ssl.CERT_OPTIONAL  # ask for a client certificate; anonymous without one
    if insecure is not None:
        config.insecure_bind = [f"fd://{insecure.fileno()}"]
    config.accesslog = "-" if access_log else None
    config.errorlog = "-"
    config.keep_alive_timeout = 75
    config.graceful_timeout = 2
    config.include_server_header = False
    # Headers up to kube-apiserver's MaxHeaderBytes (1 MiB; Go adds 4 KiB of slack), then 431.
    config.h11_max_incomplete_size = HEADER_LIMIT
    config.h2_max_header_list_size = MAX_HEADER_BYTES
    await serve(app, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
