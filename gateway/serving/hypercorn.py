"""The gateway on hypercorn, configured through its Config only (no run-time patching).

What hypercorn 0.18 does not do, and this server therefore lacks (the README's "HTTP servers"): Go's
reason phrases (its status lines end after the code: "HTTP/1.1 409 "); client certificates (the ASGI
scope has no "tls" extension, so a client certificate identifies nobody: such clients are
anonymous); letting go at once of an idle keep-alive connection the client closed (it waits for the
keep-alive timeout); and a per-connection lane for API Priority and Fairness (each request starts in
the foreground).

Request headers beyond kube-apiserver's limit (1 MiB, plus Go's 4 KiB of slack) get Go's plain-text
431. The native servers refuse them while they read them; h11 only while the header block is still
incomplete: when the last read completes an oversized block, it passes, so ``HeaderLimit`` checks
what arrived before the app sees it.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config

from protokube.gateway.serving.limits import GRACE, HEADER_LIMIT, KEEP_ALIVE_TIMEOUT, MAX_HEADER_BYTES
from protokube.gateway.serving.tls import TLSSettings

GO_431 = b"431 Request Header Fields Too Large"
Message = dict[str, Any]


class HeaderLimit:
    """Go's 431 for a request whose headers are beyond the limit, in front of ``app``."""

    def __init__(self, app: Callable[[Message, Any, Any], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Message, receive: Any, send: Callable[[Message], Awaitable[None]]) -> None:
        kind = scope["type"]
        if kind != "lifespan" and sum(len(k) + len(v) + 4 for k, v in scope["headers"]) > HEADER_LIMIT:  # ": ", CRLF
            prefix = "http.response" if kind == "http" else "websocket.http.response"  # a handshake's answer
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"%d" % len(GO_431))]
            await send({"type": f"{prefix}.start", "status": 431, "headers": [*headers, (b"connection", b"close")]})
            await send({"type": f"{prefix}.body", "body": GO_431, "more_body": False})
            return
        await self.app(scope, receive, send)


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
    # (HeaderLimit checks what h11 lets through).
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
    await hypercorn_serve(HeaderLimit(app), config(sock, tls, insecure, access_log), shutdown_trigger=shutdown.wait)
