"""The gateway on hypercorn, configured through its Config only (no run-time patching).

What hypercorn 0.18 does not do, and this server therefore lacks (the README's "HTTP servers"): Go's
reason phrases (its status lines end after the code: "HTTP/1.1 409 "); client certificates (the ASGI
scope has no "tls" extension, so a client certificate identifies nobody: such clients are
anonymous); letting go at once of an idle keep-alive connection the client closed (it waits for the
keep-alive timeout); and a per-connection lane for API Priority and Fairness (each request starts in
the foreground).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from typing import Any

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from protokube.gateway.serving.limits import GRACE, HEADER_LIMIT, KEEP_ALIVE_TIMEOUT, MAX_HEADER_BYTES
from protokube.gateway.serving.tls import TLSSettings


def config(sock: socket.socket, tls: TLSSettings | None, insecure: socket.socket | None, access_log: bool) -> Config:
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    if tls is not None:
        config.certfile, config.keyfile, config.ca_certs = tls.cert_file, tls.key_file, tls.client_ca_file
        config.verify_mode = ssl.CERT_OPTIONAL  # ask for a client certificate; anonymous without one
    if insecure is not None:
        config.insecure_bind = [f"fd://{insecure.fileno()}"]
    config.accesslog = "-" if access_log else None
    config.errorlog = "-"
    config.keep_alive_timeout = KEEP_ALIVE_TIMEOUT
    config.graceful_timeout = GRACE
    config.include_server_header = False
    # Headers up to kube-apiserver's MaxHeaderBytes (1 MiB; Go adds 4 KiB of slack), then 431
    # (gateway/filters/headerlimit.py checks what h11 lets through).
    config.h11_max_incomplete_size = HEADER_LIMIT
    config.h2_max_header_list_size = MAX_HEADER_BYTES
    return config


async def serve(
    app: Any,
    sock: socket.socket,
    shutdown: asyncio.Event,
    *,
    tls: TLSSettings | None = None,
    insecure: socket.socket | None = None,
    access_log: bool = False,
) -> None:
    """Serve on ``sock`` (with TLS when given) and on the plain-HTTP ``insecure`` socket if any."""
    await hypercorn_serve(app, config(sock, tls, insecure, access_log), shutdown_trigger=shutdown.wait)
