"""HTTPS POSTs for webhook calls: HTTP/1.1 over asyncio streams, framed by h11 (httpx's own
HTTP/1.1 layer, already installed with it), with keep-alive connections pooled per destination.

httpx costs about 2.5 ms of CPU per call here (anyio's streams, and httpcore trying to import
sniffio on every request); this is the few lines a webhook call needs: one request, one answer
read up to a bound, the connection kept when both ends are done with it.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import defaultdict
from dataclasses import dataclass

import h11

READ_SIZE = 64 * 1024
IDLE_PER_DESTINATION = 32
IDLE_TIMEOUT = 90.0  # seconds a kept connection waits for reuse (Go's DefaultTransport IdleConnTimeout)


class TooLarge(Exception):
    """The answer's body exceeds the bound."""


class _IdleClosed(ConnectionError):
    """A kept connection the server had closed: nothing of the answer came."""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    location: str = ""  # a redirect's Location header


@dataclass(frozen=True, slots=True)
class Destination:
    host: str  # where to connect (an address or a name)
    port: int
    server_name: str  # the TLS server name (SNI and the name the certificate must carry)
    context: ssl.SSLContext


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.state = h11.Connection(our_role=h11.CLIENT)
        self.idle_since = 0.0

    def close(self) -> None:
        self.writer.close()


class Transport:
    def __init__(self) -> None:
        self._idle: defaultdict[Destination, list[_Connection]] = defaultdict(list)

    async def post(
        self, destination: Destination, target: str, headers: list[tuple[str, str]], body: bytes, limit: int
    ) -> Reply:
        """The answer. A kept connection the server closed meanwhile is replaced
        once, when nothing of the answer came (Go's transport retries those too)."""
        idle = self._idle[destination]
        while idle:
            connection = idle.pop()
            if time.monotonic() - connection.idle_since > IDLE_TIMEOUT:
                connection.close()
                continue
            try:
                return await self._exchange(destination, connection, target, headers, body, limit)
            except _IdleClosed:
                continue
        connection = await self._connect(destination)
        return await self._exchange(destination, connection, target, headers, body, limit)

    async def _connect(self, destination: Destination) -> _Connection:
        reader, writer = await asyncio.open_connection(
            destination.host, destination.port, ssl=destination.context, server_hostname=destination.server_name
        )
        return _Connection(reader, writer)

    async def _exchange(
        self,
        destination: Destination,
        connection: _Connection,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        limit: int,
    ) -> Reply:
        state = connection.state
        try:
            request = h11.Request(method="POST", target=target, headers=[*headers, ("Content-Length", str(len(body)))])
            connection.writer.write(
                state.send(request) + state.send(h11.Data(data=body)) + state.send(h11.EndOfMessage())
            )
            await connection.writer.drain()
            answer = await _answer(connection, limit)
        except BaseException:
            connection.close()
            raise
        if (
            state.our_state is h11.DONE
            and state.their_state is h11.DONE
            and len(self._idle[destination]) < IDLE_PER_DESTINATION
        ):
            state.start_next_cycle()
            connection.idle_since = now = time.monotonic()
            idle = self._idle[destination]
            while idle and now - idle[0].idle_since > IDLE_TIMEOUT:  # the oldest first
                idle.pop(0).close()
            idle.append(connection)
        else:
            connection.close()
        return answer


async def _answer(connection: _Connection, limit: int) -> Reply:
    state, response, chunks, size, received = connection.state, None, [], 0, False
    while True:
        event = state.next_event()
        if event is h11.NEED_DATA:
            data = await connection.reader.read(READ_SIZE)
            if not data and not received:
                raise _IdleClosed
            received = True
            state.receive_data(data)
        elif isinstance(event, h11.Response):
            response = event
        elif isinstance(event, h11.Data):
            size += len(event.data)
            if size > limit:
                raise TooLarge
            chunks.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            assert response is not None
            content_type = next((v for k, v in response.headers if k == b"content-type"), b"")
            location = next((v for k, v in response.headers if k == b"location"), b"")
            return Reply(
                response.status_code, content_type.decode("latin-1"), b"".join(chunks), location.decode("latin-1")
            )
        elif isinstance(event, h11.ConnectionClosed):
            raise ConnectionResetError("EOF")
