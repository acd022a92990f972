"""Serving the gateway over HTTP: the server is a seam (``--http-server``).

- ``native`` (the default): our own HTTP/1.1 on httptools (http1.py, WebSockets in upgrade.py) and
  HTTP/2 (http2.py) over TLS by ALPN, on the gateway's event loop (native.py): Go's reason phrases,
  client certificates in the ASGI "tls" extension, header limits and errors as Go's net/http.
- ``hypercorn``: hypercorn configured through its Config only; what it lacks is in hypercorn.py.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from protokube.gateway.serving.sockets import listen_socket
from protokube.gateway.serving.tls import TLSSettings

SERVERS = ("native", "hypercorn")
__all__ = ["SERVERS", "TLSSettings", "listen_socket", "serve_app"]


async def serve_app(
    app: Any,
    sock: socket.socket,
    shutdown: asyncio.Event,
    *,
    tls: TLSSettings | None = None,
    insecure: socket.socket | None = None,
    access_log: bool = False,
    server: str = "native",
) -> None:
    """Serve ``app`` on ``sock`` (HTTPS when ``tls`` is given) and plain HTTP on ``insecure`` until
    ``shutdown`` is set, with the HTTP server named (one of SERVERS)."""
    if server == "hypercorn":
        from protokube.gateway.serving import hypercorn as chosen
    elif server == "native":
        from protokube.gateway.serving import native as chosen  # type: ignore[no-redef]
    else:
        raise ValueError(f"unknown HTTP server {server!r}: one of {', '.join(SERVERS)}")
    await chosen.serve(app, sock, shutdown, tls=tls, insecure=insecure, access_log=access_log)
