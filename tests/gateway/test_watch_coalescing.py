"""Watch fan-out (gateway/watchcache/fanout.py): changes that arrive while a resource's many watchers
are being written to wait for the next round and go out together — several events in one chunk of
the response, each frame byte for byte what it would be alone.

Many watches of one namespace, none of them read until the burst of writes is over: the two looked
at (JSON and protobuf) hold fewer chunks than events, and their frames, in order, are the events of
the objects as a GET answers them in the same format.
"""

from __future__ import annotations

import socket
import struct
from itertools import accumulate

import httpx

from .helpers import GatewayProcess

WATCHERS = 300  # a round of this many makes the next wait 30 ms
WRITES = 40
PROTOBUF = "application/vnd.kubernetes.protobuf"


class PausedWatch:
    """A watch over a raw socket, not read until the writes are done: what the server sent waits in
    the socket's buffers, chunked as the server wrote it."""

    def __init__(self, port: int, path: str, accept: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n\r\n"
        self.sock.sendall(request.encode())
        self.data = b""
        while b"\r\n\r\n" not in self.data:
            self.data += self.sock.recv(4096)
        head, self.data = self.data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in head.lower(), head

    def chunks(self, body_size: int) -> list[bytes]:
        """The response's chunks until they carry ``body_size`` bytes."""
        self.sock.settimeout(30)
        chunks: list[bytes] = []
        while sum(map(len, chunks)) < body_size:
            if b"\r\n" in self.data:
                size_line, rest = self.data.split(b"\r\n", 1)
                size = int(size_line, 16)
                if len(rest) >= size + 2:
                    chunks.append(rest[:size])
                    self.data = rest[size + 2 :]
                    continue
            received = self.sock.recv(1 << 16)
            assert received, "the connection closed before the events came"
            self.data += received
        return chunks

    def close(self) -> None:
        self.sock.close()


def _field(number: int, value: bytes) -> bytes:
    """A length-delimited protobuf field (every length here is below 2**14: a varint of two bytes at most)."""
    length = len(value)
    varint = bytes([length]) if length < 0x80 else bytes([length & 0x7F | 0x80, length >> 7])
    return bytes([number << 3 | 2]) + varint + value


def _json_frame(obj: bytes) -> bytes:
    """The event line of an object as a GET answers it (Go's json.Encoder ends that with a newline)."""
    return b'{"type":"ADDED","object":' + obj.removesuffix(b"\n") + b"}\n"


def _protobuf_frame(obj: bytes) -> bytes:
    """A length-prefixed metav1.WatchEvent whose object.raw is the enveloped object."""
    event = _field(1, b"ADDED") + _field(2, _field(1, obj))
    return struct.pack(">I", len(event)) + event


def test_a_burst_reaches_paused_watchers_in_fewer_chunks_with_the_same_frames(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = client.get(path).json()["metadata"]["resourceVersion"]
    watch = f"{path}?watch=1&resourceVersion={start}"
    watches = [PausedWatch(server.port, watch, PROTOBUF if i == 1 else "application/json") for i in range(WATCHERS)]
    try:
        names = [f"c{i:02d}" for i in range(WRITES)]
        for name in names:  # one after the other: each its own revision, its own storage watch response
            created = client.post(path, json={"metadata": {"name": name}, "data": {"k": name}})
            assert created.status_code == 201, created.text

        as_json = [_json_frame(client.get(f"{path}/{name}").content) for name in names]
        as_protobuf = [
            _protobuf_frame(client.get(f"{path}/{name}", headers={"Accept": PROTOBUF}).content) for name in names
        ]
        for paused, expected in ((watches[0], as_json), (watches[1], as_protobuf)):
            chunks = paused.chunks(sum(map(len, expected)))
            assert b"".join(chunks) == b"".join(expected)  # every event, in order, each frame as alone
            assert set(accumulate(map(len, chunks))) <= set(accumulate(map(len, expected)))  # no frame split
            assert len(chunks) < WRITES, f"{len(chunks)} chunks for {WRITES} events"
    finally:
        for paused in watches:
            paused.close()
