"""The listening sockets, bound before serving."""

from __future__ import annotations

import socket


def listen_socket(listen: str, reuse_port: bool = False) -> socket.socket:
    """Bind and listen before serving, so the address accepts connections once we say it does
    (``reuse_port``: several gateway processes bind it, the kernel spreads connections)."""
    host, _, port = listen.rpartition(":")
    sock = socket.create_server((host.strip("[]"), int(port)), reuse_port=reuse_port, backlog=1024)
    sock.set_inheritable(True)
    return sock
