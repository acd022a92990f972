"""One HTTP request as the filter chain and the handlers see it, and the response they answer with.

It is built once from the ASGI scope and the body as the server hands it over (gateway/asgi.py),
and carries what the filters learn on the way in (the request id, what the URL addresses, later the
user). Handlers read the body, query and headers from here. Their ``Response`` is a plain object
that gateway/asgi.py writes as ASGI messages: no web framework's request or response is made per
request.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Final
from urllib.parse import parse_qsl

from mypy_extensions import mypyc_attr

from protokube.gateway import errors
from protokube.gateway.requestinfo import RequestInfo, parse_bool
from protokube.gateway.user import ANONYMOUS_USER, UserInfo

PRETTY_AGENTS: Final = ("curl", "Wget", "Mozilla/5.0")
# kube-apiserver's default limit on request bodies (3 MiB).
MAX_BODY_BYTES: Final = 3 * 1024 * 1024
# When a request's timeout ends it (time.monotonic(); None: no timeout), set by the timeout filter
# for the handler's task: work that would run on after the 504 stops there, as upstream's request
# context is cancelled at its deadline (CEL evaluations on threads read it, gateway/cel/cost.py).
REQUEST_DEADLINE: Final[ContextVar[float | None]] = ContextVar("request_deadline", default=None)
# Parsed query strings are kept, up to this many of up to this length.
MEMO_QUERIES: Final = 1024
MEMO_QUERY_LENGTH: Final = 256


class QueryArgs(Mapping[str, str]):
    """The query's parameters: each name's first value, and ``getlist`` for all of them. The parse
    of a query string is kept (clients send the same ones again), shared by the requests that sent
    it and never changed."""

    __slots__ = ("_values",)

    def __init__(self, query: str = "") -> None:
        self._values = _parsed_query(query) if len(query) <= MEMO_QUERY_LENGTH else _parse_query(query)

    def __getitem__(self, key: str) -> str:
        return self._values[key][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def get(self, key: str, default: Any = None) -> Any:
        values = self._values.get(key)
        return values[0] if values else default

    def getlist(self, key: str) -> list[str]:
        """Every value of the parameter, in the query's order."""
        return list(self._values.get(key, ()))

    def lists(self) -> dict[str, list[str]]:
        """Every parameter with all its values."""
        return {key: list(values) for key, values in self._values.items()}


def _parse_query(query: str) -> dict[str, tuple[str, ...]]:
    parsed: dict[str, list[str]] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        parsed.setdefault(key, []).append(value)
    return {key: tuple(values) for key, values in parsed.items()}


_parsed_query: Final = functools.lru_cache(maxsize=MEMO_QUERIES)(_parse_query)


class RequestHeaders:
    """A request's headers as the server handed them over: latin-1 text, names in any case, a
    repeated header's values kept in order. Looked up case-insensitively through an index built at
    the first lookup (no per-request framework object)."""

    __slots__ = ("_index", "_raw")

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._index: dict[str, list[str]] | None = None

    def _indexed(self) -> dict[str, list[str]]:
        """Each header's values by its name in lower case."""
        index = self._index
        if index is None:
            index = {}
            for key, value in self._raw:
                index.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
            self._index = index
        return index

    def _values(self, name: str) -> list[str] | None:
        index = self._index
        return (index if index is not None else self._indexed()).get(name.lower())

    def get(self, name: str, default: str | None = None) -> str | None:
        """The header's first value; ``default`` when the request has none."""
        values = self._values(name)
        return values[0] if values else default

    def getlist(self, name: str) -> list[str]:
        """Every value of the header, in the request's order."""
        return list(self._values(name) or ())

    def any_named(self, prefix: str) -> bool:
        """Whether some header's name starts with ``prefix`` (in any case): one search of the names
        joined, each after a newline (no header name holds one), asked of every request."""
        index = self._index if self._index is not None else self._indexed()
        return ("\n" + "\n".join(index)).find("\n" + prefix.lower()) >= 0

    def items(self) -> list[tuple[str, str]]:
        """Every header, repeated ones included, in the request's order."""
        return [(key.decode("latin-1"), value.decode("latin-1")) for key, value in self._raw]

    def size(self, per_header: int) -> int:
        """The headers' length in bytes, with ``per_header`` bytes more for each (its framing)."""
        return sum(len(key) + len(value) for key, value in self._raw) + per_header * len(self._raw)


# The body kept for the handler: past the API's limit it answers 413 (and the drain of an unread
# body gives up far earlier), so what comes beyond is read and dropped.
KEPT_BODY_BYTES: Final = MAX_BODY_BYTES + 1


class RequestBody:
    """A request's body as the server hands it over (``arrived``, ``gone``): ``async for chunk in
    body`` yields the chunks until the client has sent all of it (or gone away)."""

    __slots__ = ("_chunks", "_complete", "_kept", "_waiter", "disconnected")

    def __init__(self, complete: bool = False) -> None:
        """``complete``: no body comes (a WebSocket handshake has none)."""
        self._chunks: deque[bytes] = deque()
        self._complete = complete
        self._kept = 0
        self._waiter: asyncio.Future[None] | None = None
        self.disconnected = False

    def arrived(self, data: bytes, more: bool) -> None:
        if data and self._kept < KEPT_BODY_BYTES:
            self._kept += len(data)
            self._chunks.append(data)
        self._complete = not more
        self._wake()

    def gone(self) -> None:
        self.disconnected = self._complete = True
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def complete(self) -> bool:
        """Whether all of the body has been handed over (or its client has gone)."""
        return self._complete

    @property
    def size(self) -> int:
        """The bytes handed over so far (counted up to KEPT_BODY_BYTES)."""
        return self._kept

    def __aiter__(self) -> RequestBody:
        return self

    async def __anext__(self) -> bytes:
        while not self._chunks:
            if self._complete:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._chunks.popleft()


class ApiRequest:
    __slots__ = (
        "_body",
        "_body_whole",
        "args",
        "client_cert",
        "headers",
        "info",
        "method",
        "min_request_timeout",
        "on_stream_end",
        "on_watch_initialized",
        "path",
        "request_id",
        "secure",
        "user",
    )

    def __init__(self, scope: dict[str, Any], body: RequestBody) -> None:
        """``scope``: the request's ASGI scope; ``body``: its chunks as they arrive."""
        self._body = body
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.args = QueryArgs(scope["query_string"].decode("latin-1"))
        self.headers = RequestHeaders(scope["headers"])
        self._body_whole = False  # body() has read all of it
        self.request_id = ""  # set by the Audit-Id filter
        self.info: RequestInfo | None = None  # set by the request-info filter
        self.user: UserInfo = ANONYMOUS_USER  # set by the authentication filter
        self.secure = scope["scheme"] == "https"
        tls = (scope.get("extensions") or {}).get("tls") or {}
        chain = tls.get("client_cert_chain") or ()
        self.client_cert: str | None = chain[0] if chain else None  # PEM, verified during the handshake
        # --min-request-timeout, for a long-running request (set by the timeout filter).
        self.min_request_timeout = 1800.0
        # What to do when a streamed response (a watch) ends, long after the handler returned.
        self.on_stream_end: list[Callable[[], None]] = []
        # What to do once a watch has sent its initial events (flow control gives its seats back).
        self.on_watch_initialized: list[Callable[[], None]] = []

    def header(self, name: str) -> str:
        """A header's first value (its name in any case), "" when the request has none."""
        return self.headers.get(name) or ""

    async def body(self) -> bytes:
        """The body, read as it arrives and never more than MAX_BODY_BYTES of it: beyond, a 413 as
        upstream's limited reader answers (a declared Content-Length beyond is refused unread)."""
        length = self.header("Content-Length")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise errors.request_entity_too_large(f"limit is {MAX_BODY_BYTES}")
        chunks, size = [], 0
        async for chunk in self._body:
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise errors.request_entity_too_large(f"limit is {MAX_BODY_BYTES}")
            chunks.append(chunk)
        self._body_whole = True
        return b"".join(chunks)

    @property
    def body_complete(self) -> bool:
        """Whether the server has handed all of the body over: none of it is left on the connection."""
        return self._body.complete

    @property
    def body_read(self) -> bool:
        """Whether body() has read all of it."""
        return self._body_whole

    @property
    def body_size(self) -> int:
        """The body's bytes the server has handed over so far."""
        return self._body.size

    async def body_received(self, timeout: float, limit: int) -> bool:
        """Whether the rest of the body (what no handler read, dropped) arrives within ``timeout``
        seconds and ``limit`` bytes (the caller knows body() has not read all of it)."""
        size = 0
        try:
            async with asyncio.timeout(timeout):
                async for chunk in self._body:
                    size += len(chunk)
                    if size > limit:
                        return False
        except Exception:  # too slow or gone: the caller closes the connection
            return False
        return True

    def query(self) -> dict[str, str]:
        """Single-valued query parameters (the first value of each)."""
        return dict(self.args)

    def query_lists(self) -> Mapping[str, list[str]]:
        return self.args.lists()

    def watch_initialized(self) -> None:
        callbacks, self.on_watch_initialized = self.on_watch_initialized, []
        for callback in callbacks:
            callback()

    def stream_ended(self) -> None:
        for callback in self.on_stream_end:
            callback()

    @property
    def pretty(self) -> bool:
        """upstream's isPrettyPrint: ?pretty=true, or a browser/curl/wget User-Agent."""
        value = self.args.get("pretty")
        if value is not None:
            return value == "" or parse_bool("pretty", value)
        return self.header("User-Agent").startswith(PRETTY_AGENTS)


class ResponseHeaders:
    """A response's headers in the order they were set, with werkzeug's ``Headers`` semantics for
    what the gateway does with them: setting one replaces its value where it first stood (and drops
    its repetitions), ``add`` appends a repetition, names match in any case. Each is kept with its
    name in lower case, the form it is written in (gateway/asgi.py) and compared in: a header's first
    value under that name, each repetition under (name, its number) — one dict lookup per header set
    or read, in the order of setting."""

    __slots__ = ("_headers", "_repetitions")

    def __init__(self, headers: Mapping[str, object] | None = None) -> None:
        self._headers: dict[str | tuple[str, int], PreparedHeader] = {}  # (lower-case name, name, value)
        self._repetitions = 0  # repetitions ever added (numbers their keys)
        if headers:
            self.update(headers)

    def __setitem__(self, name: str, value: object) -> None:
        lowered = name.lower()
        if self._repetitions:
            self._drop_repetitions(lowered)
        self._headers[lowered] = (lowered, name, _text(value))

    def __delitem__(self, name: str) -> None:
        lowered = name.lower()
        self._headers.pop(lowered, None)
        if self._repetitions:
            self._drop_repetitions(lowered)

    def _drop_repetitions(self, lowered: str) -> None:
        headers = self._headers
        for key in [key for key in headers if isinstance(key, tuple) and key[0] == lowered]:
            del headers[key]

    def get(self, name: str, default: str | None = None) -> str | None:
        header = self._headers.get(name.lower())
        return default if header is None else header[2]

    def add(self, name: str, value: object) -> None:
        self._append(prepared_header(name, value))

    def add_prepared(self, headers: Iterable[PreparedHeader]) -> None:
        """``add`` of headers prepared once (``prepared_header``) for many responses."""
        for header in headers:
            self._append(header)

    def _append(self, header: PreparedHeader) -> None:
        lowered = header[0]
        if lowered not in self._headers:
            self._headers[lowered] = header
            return
        self._repetitions += 1
        self._headers[(lowered, self._repetitions)] = header

    def update(self, headers: Mapping[str, object]) -> None:
        for name, value in headers.items():
            self[name] = value

    def items(self) -> list[tuple[str, str]]:
        return [(name, value) for _, name, value in self._headers.values()]

    def encoded(self) -> list[tuple[bytes, bytes]]:
        """The headers as ASGI messages carry them: names in lower case, values UTF-8 (as Go writes them)."""
        return [(lowered.encode(), value.encode()) for lowered, _, value in self._headers.values()]


PreparedHeader = tuple[str, str, str]  # (lower-case name, name, value), as ResponseHeaders keeps them


def prepared_header(name: str, value: object) -> PreparedHeader:
    """A header as ResponseHeaders keeps it, its value checked: made once where many responses carry it."""
    return name.lower(), name, _text(value)


def _text(value: object) -> str:
    """A header's value as text, as werkzeug's ``Headers`` takes it; never with a line break (which
    would split the header)."""
    text = value if isinstance(value, str) else str(value)
    if "\n" in text or "\r" in text:
        raise ValueError("Header values must not contain newline characters.")
    return text


@mypyc_attr(allow_interpreted_subclasses=True)  # handlers/watch.py's WatchResponse (tools/compile.py)
class Response:
    """What a handler answers: a status, headers and a body, either in memory (``body``; its
    Content-Length set) or streamed (``chunks``, for watches). Made as Quart's ``Response`` is
    (a body without a content type is text/html), so the headers come out in the same order."""

    __slots__ = ("body", "chunks", "headers", "status_code")

    def __init__(
        self,
        body: bytes | str | AsyncIterable[bytes] = b"",
        status: int = 200,
        headers: Mapping[str, object] | None = None,
        content_type: str | None = None,
    ) -> None:
        self.status_code = status
        self.headers = ResponseHeaders(headers)
        if content_type is not None or not headers or self.headers.get("Content-Type") is None:
            self.headers["Content-Type"] = "text/html; charset=utf-8" if content_type is None else content_type
        self.chunks: AsyncIterable[bytes] | None = None
        if isinstance(body, str):
            body = body.encode()
        if isinstance(body, bytes):
            self.body = body
            self.headers["Content-Length"] = str(len(body))
        else:
            self.body = b""
            self.chunks = body

    @property
    def content_length(self) -> int | None:
        """The Content-Length header's value; None for a streamed body (or a 304, which has none)."""
        value = self.headers.get("Content-Length")
        return int(value) if value is not None else None


# What answers a request: the filter chain, each filter in it, the router.
Handler = Callable[[ApiRequest], Awaitable[Response]]
