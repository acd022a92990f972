"""The HTTP ceiling: a bare Quart app on hypercorn that answers every GET with one fixed body.

    python -m bench.bareapp --listen 127.0.0.1:PORT --body FILE

Served as the gateway is served on ``--http-server hypercorn`` — the same socket and ``serve_app`` on uvloop — so the
difference between the two is the gateway's own work per request on that server.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

import uvloop
from quart import Quart, Response

from protokube.gateway.serving import listen_socket, serve_app


def create_app(body: bytes) -> Quart:
    app = Quart("bare")

    @app.route("/", defaults={"path": ""})
    @app.route("/<path:path>")
    async def fixed(path: str) -> Response:
        return Response(body, 200, content_type="application/json")

    return app


async def main_async(listen: str, body: bytes) -> None:
    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, shutdown.set)
    await serve_app(create_app(body), listen_socket(listen), shutdown, server="hypercorn")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bareapp")
    parser.add_argument("--listen", required=True)
    parser.add_argument("--body", type=Path, required=True)
    args = parser.parse_args(argv)
    uvloop.run(main_async(args.listen, args.body.read_bytes()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
