"""Serving the gateway with hypercorn."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from http import HTTPStatus

import h11
from hypercorn.asyncio import serve
from hypercorn.config import Config
from quart import Quart

_h11_response_init = h11.Response.__init__


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


def listen_socket(listen: str) -> socket.socket:
    """Bind and listen before serving, so the address accepts connections once we say it does."""
    host, _, port = listen.rpartition(":")
    sock = socket.create_server((host.strip("[]"), int(port)), reuse_port=False, backlog=1024)
    sock.set_inheritable(True)
    return sock


async def serve_app(app: Quart, sock: socket.socket, shutdown: asyncio.Event, *, access_log: bool = False) -> None:
    use_standard_reason_phrases()
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.accesslog = "-" if access_log else None
    config.errorlog = "-"
    config.keep_alive_timeout = 75
    config.graceful_timeout = 2
    config.include_server_header = False
    await serve(app, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
