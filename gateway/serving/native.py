"""The gateway's own server: asyncio protocols on the gateway's event loop (uvloop with APF's lanes).

Each accepted connection gets a context of its own, in which ``lanes.open_connection`` runs once:
every request read from it runs in a copy, so that the connection's lane carries over from one of
its requests to the next (gateway/lanes.py). Over TLS, ALPN picks HTTP/2 (http2.py) or
HTTP/1.1 (http1.py) once the handshake is done; the plain listener speaks HTTP/1.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib.util
import logging
import socket
import ssl
import sys
from typing import Any

from protokube.gateway import lanes
from protokube.gateway.serving.http1 import ASGI, ASGIApp, Http1Protocol
from protokube.gateway.serving.limits import GRACE, KEEP_ALIVE_TIMEOUT, MAX_HEADER_BYTES
from protokube.gateway.serving.tls import HTTP2, TLSSettings, cipher_ids, server_context, tls_extension

log = logging.getLogger("protokube.serving")


def http2_available() -> bool:
    """Whether this checkout has the HTTP/2 protocol (gateway/serving/http2.py)."""
    return importlib.util.find_spec("protokube.gateway.serving.http2") is not None


class Listener:
    """What the connections of one listening socket share, and the connections open on it."""

    def __init__(self, app: ASGIApp, scheme: str, ciphers: dict[str, int], access_log: logging.Logger | None) -> None:
        self.app = app
        self.scheme = scheme
        self.ciphers = ciphers
        self.access_log = access_log
        self.connections: set[Connection] = set()

    def connection(self) -> Connection:
        return Connection(self)


class Connection(asyncio.Protocol):
    """One accepted connection, handed to the protocol it speaks once it is established."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.inner: Any = None
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        listener = self.listener
        self.transport = transport
        context = contextvars.copy_context()
        context.run(lanes.open_connection)
        ssl_object = transport.get_extra_info("ssl_object")
        tls = tls_extension(ssl_object, listener.ciphers) if ssl_object is not None else None
        options: dict[str, Any] = {
            "scheme": listener.scheme,
            "server": address(transport.get_extra_info("sockname")),
            "client": address(transport.get_extra_info("peername")),
            "tls": tls,
            "context": context,
        }
        if ssl_object is not None and ssl_object.selected_alpn_protocol() == HTTP2:
            from protokube.gateway.serving.http2 import Http2Protocol

            self.inner = Http2Protocol(listener.app, max_header_list_size=MAX_HEADER_BYTES, **options)
        else:
            self.inner = Http1Protocol(
                listener.app, keep_alive_timeout=KEEP_ALIVE_TIMEOUT, access_log=listener.access_log, **options
            )
        listener.connections.add(self)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.listener.connections.discard(self)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    async def shutdown(self) -> None:
        await self.inner.shutdown()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()  # type: ignore[attr-defined]


def address(name: Any) -> tuple[str, int] | None:
    """(host, port) of a socket address; None for a Unix socket's."""
    return (str(name[0]), int(name[1])) if isinstance(name, tuple) else None


class Lifespan:
    """The ASGI lifespan protocol: the application's startup before serving, its shutdown after."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        self.started: asyncio.Future[None] = loop.create_future()
        self.stopped: asyncio.Future[None] = loop.create_future()
        self.task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.run())
        await self.inbox.put({"type": "lifespan.startup"})
        await self.started

    async def shutdown(self) -> None:
        if self.task is None or self.task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.stopped

    async def run(self) -> None:
        scope = {"type": "lifespan", "asgi": ASGI, "state": {}}
        try:
            await self.app(scope, self.inbox.get, self.send)
        except Exception as err:  # an application without a lifespan: served all the same
            if not self.started.done():
                log.debug("the application does not take the lifespan protocol: %s", err)
        for future in (self.started, self.stopped):
            if not future.done():
                future.set_result(None)

    async def send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self.started.set_result(None)
        elif kind == "lifespan.startup.failed":
            self.started.set_exception(RuntimeError(f"startup failed: {message.get('message', '')}"))
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
            self.stopped.set_result(None)


def access_logger(enabled: bool) -> logging.Logger | None:
    """One line per request on standard output (--access-log)."""
    if not enabled:
        return None
    logger = logging.getLogger("protokube.access")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


async def serve(
    app: ASGIApp,
    sock: socket.socket,
    shutdown: asyncio.Event,
    *,
    tls: TLSSettings | None = None,
    insecure: socket.socket | None = None,
    access_log: bool = False,
) -> None:
    """Serve ``app`` on ``sock`` (with TLS when given) and on the plain-HTTP ``insecure`` socket,
    until ``shutdown`` is set; then in-flight requests get GRACE seconds to finish."""
    loop = asyncio.get_running_loop()
    lifespan = Lifespan(app)
    await lifespan.startup()
    logger = access_logger(access_log)
    context: ssl.SSLContext | None = server_context(tls, http2_available()) if tls is not None else None
    listeners: list[Listener] = []
    servers: list[asyncio.Server] = []
    for listening, ssl_context in ((sock, context), (insecure, None)):
        if listening is None:
            continue
        scheme = "https" if ssl_context is not None else "http"
        listener = Listener(app, scheme, cipher_ids(ssl_context) if ssl_context else {}, logger)
        listeners.append(listener)
        servers.append(await loop.create_server(listener.connection, sock=listening, ssl=ssl_context, backlog=1024))
    try:
        await shutdown.wait()
    finally:
        for server in servers:
            server.close()
        await close_connections([c for listener in listeners for c in listener.connections])
        await lifespan.shutdown()


async def close_connections(connections: list[Connection]) -> None:
    """Let in-flight requests finish (GRACE seconds at most), idle connections close; then abort."""
    if not connections:
        return
    closing = [asyncio.ensure_future(connection.shutdown()) for connection in connections]
    _, pending = await asyncio.wait(closing, timeout=GRACE)
    for connection in connections:
        connection.abort()
    for task in pending:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*pending, return_exceptions=True)
