"""The load client, run in a process of its own: ``python -m bench.loadgen MODE CONFIG_JSON``; prints JSON.

A minimal HTTP/1.1 keep-alive client over asyncio (uvloop) — Content-Length bodies for requests, a raw
protocol for watch streams — because a full client (httpx) costs more CPU per request than the server
being measured. Modes:

- ``writes``: ``clients`` concurrent writers create configmaps for ``seconds``, then update (PUT with the
  resourceVersion of the last write) the ones they created for ``seconds``, then patch them (strategic
  merge) and apply them (server-side apply) for ``seconds`` each, then patch them with what they already
  hold (no-op patches: a storage read confirms the watch cache's copy, nothing is written): rate and latency
  of each phase. Every other write changes its object (a patch never sets a value the update phase left
  there).
- ``watch``: ``watchers`` concurrent watches of ``path``; prints ``ready`` once all are open, then records the
  delay between the send time a writer put into each object (``"sent":"<unix time>"``) and its arrival, until
  a line ``stop`` on stdin (or ``max_seconds``). With ``tls`` as for ``gets``.
- ``lists``: sequential GETs of lists, each repeated: the time to the last byte and the body size. With
  ``follow``, continue tokens are followed page by page (``next``: the path the token is appended to).
- ``gets``: ``clients`` concurrent keep-alive connections GET ``path`` for ``seconds``: rate and latency.
  With ``tls`` ({"ca", "cert", "key"} file paths) over HTTPS with that client certificate.
- ``fairness``: ``elephants`` connections create configmaps in ``namespace`` back to back as user
  ``elephant`` (impersonated; after a 429 a connection waits ``backoff`` seconds, as clients honour
  Retry-After), while one connection GETs ``path`` every ``interval`` seconds as ``mouse``, for
  ``seconds``: the mouse's latencies and answers, the elephant's answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
import sys
import time
from typing import Any
from urllib.parse import quote

import uvloop

from bench.common import latency_summary, percentile, quantiles

HEADER_END = b"\r\n\r\n"


class HTTPError(Exception):
    pass


class Connection:
    """One keep-alive HTTP/1.1 connection; requests one at a time."""

    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None = None) -> None:
        self.host, self.port = host, port
        self.tls = tls
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=1 << 20, ssl=self.tls)

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        if self.writer is None:
            await self.connect()
        assert self.reader is not None and self.writer is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        for key, value in (headers or {}).items():
            head += f"{key}: {value}\r\n"
        if body or method in ("POST", "PUT", "PATCH"):
            if not any(k.lower() == "content-type" for k in headers or {}):
                head += "Content-Type: application/json\r\n"
            head += f"Content-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        response_head = await self.reader.readuntil(HEADER_END)
        status = int(response_head[9:12])
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", response_head)
        if length is not None:
            body = await self.reader.readexactly(int(length.group(1)))
        elif re.search(rb"(?i)\r\ntransfer-encoding: *chunked", response_head):
            body = await self._chunked()
        else:
            raise HTTPError(f"response without a length: {response_head[:200]!r}")
        if re.search(rb"(?i)\r\nconnection: *close", response_head):
            self.close()  # hypercorn ends a connection after keep_alive_max_requests (1,000) requests
        return status, body

    async def _chunked(self) -> bytes:
        assert self.reader is not None
        parts = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


RESOURCE_VERSION = re.compile(rb'"resourceVersion":"(\d+)"')
STRATEGIC_MERGE = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def configmap(name: str, data: dict[str, str], resource_version: str = "") -> bytes:
    meta: dict[str, Any] = {"name": name}
    if resource_version:
        meta["resourceVersion"] = resource_version
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}).encode()


def summary(latencies: list[float], elapsed: float, errors: int) -> dict:
    return {**latency_summary(latencies, elapsed), "errors": errors}


# --- writes --------------------------------------------------------------------------------
async def writes(cfg: dict) -> dict:
    host, port, clients, seconds = cfg["host"], cfg["port"], cfg["clients"], cfg["seconds"]
    collection = f"/api/v1/namespaces/{cfg.get('namespace', 'default')}/configmaps"
    tag = cfg.get("tag", "w")
    payload = {"key": "x" * cfg.get("value_bytes", 200)}
    conns = [Connection(host, port) for _ in range(clients)]
    await asyncio.gather(*(c.connect() for c in conns))
    created: list[list[tuple[str, str]]] = [[] for _ in range(clients)]  # (name, resourceVersion) per client
    result: dict[str, dict] = {}

    async def phase(name: str, step) -> None:
        latencies: list[float] = []
        errors = 0
        deadline = time.perf_counter() + seconds

        async def client(n: int) -> None:
            nonlocal errors
            i = 0
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                ok = await step(n, i)
                latencies.append(time.perf_counter() - start)
                errors += not ok
                i += 1

        began = time.perf_counter()
        await asyncio.gather(*(client(n) for n in range(clients)))
        result[name] = summary(latencies, time.perf_counter() - began, errors)

    async def create(n: int, i: int) -> bool:
        name = f"{tag}-{n}-{i}"
        status, body = await conns[n].request("POST", collection, configmap(name, payload))
        match = RESOURCE_VERSION.search(body)
        if status == 201 and match:
            created[n].append((name, match.group(1).decode()))
            return True
        return False

    async def update(n: int, i: int) -> bool:
        mine = created[n]
        slot = i % len(mine)
        name, rv = mine[slot]
        data = {"key": payload["key"], "i": str(i)}
        status, body = await conns[n].request("PUT", f"{collection}/{name}", configmap(name, data, rv))
        match = RESOURCE_VERSION.search(body)
        if status == 200 and match:
            mine[slot] = (name, match.group(1).decode())
            return True
        return False

    async def patch(n: int, i: int) -> bool:
        """A strategic merge patch of one data key (no resourceVersion: the server retries conflicts)."""
        name, _ = created[n][i % len(created[n])]
        body = json.dumps({"data": {"i": f"p{i}"}}).encode()
        status, _ = await conns[n].request("PATCH", f"{collection}/{name}", body, STRATEGIC_MERGE)
        return status == 200

    async def unchanged(n: int, i: int) -> bool:
        """A strategic merge patch setting the key every object has held since its create."""
        name, _ = created[n][i % len(created[n])]
        body = json.dumps({"data": {"key": payload["key"]}}).encode()
        status, _ = await conns[n].request("PATCH", f"{collection}/{name}", body, STRATEGIC_MERGE)
        return status == 200

    async def apply(n: int, i: int) -> bool:
        """Server-side apply of the same key by one field manager (it owns it from the first apply)."""
        name, _ = created[n][i % len(created[n])]
        body = configmap(name, {"applied": str(i)})
        path = f"{collection}/{name}?fieldManager=bench&force=true"
        status, _ = await conns[n].request("PATCH", path, body, APPLY)
        return status == 200

    await phase("create", create)
    if all(created) and not cfg.get("creates_only"):
        await phase("update", update)
        await phase("patch", patch)
        await phase("apply", apply)
        await phase("noop", unchanged)
    for c in conns:
        c.close()
    return result


# --- watch ---------------------------------------------------------------------------------
SENT = re.compile(rb'"sent":"(\d+\.\d+)"')


class WatchProtocol(asyncio.Protocol):
    """A watch stream read raw: the send times found in the bytes are all it needs (no JSON parsing)."""

    def __init__(self, request: bytes, latencies: list[float], opened: asyncio.Future) -> None:
        self.request = request
        self.latencies = latencies
        self.opened = opened
        self.tail = b""
        self.events = 0
        self.headers_seen = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.time()
        buf = self.tail + data
        if not self.headers_seen:
            end = buf.find(HEADER_END)
            if end < 0:
                self.tail = buf
                return
            self.headers_seen = True
            if not self.opened.done():
                ok = buf.startswith(b"HTTP/1.1 200")
                self.opened.set_result(ok) if ok else self.opened.set_exception(HTTPError(buf[:300].decode()))
            buf = buf[end + 4 :]
        last = 0
        for match in SENT.finditer(buf):
            self.latencies.append(now - float(match.group(1)))
            self.events += 1
            last = match.end()
        self.tail = buf[max(last, len(buf) - 64) :]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(HTTPError(f"watch connection lost: {exc}"))


async def watch(cfg: dict) -> dict:
    host, port, count = cfg["host"], cfg["port"], cfg["watchers"]
    tls = client_tls(cfg["tls"]) if cfg.get("tls") else None
    request = f"GET {cfg['path']} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    protocols: list[WatchProtocol] = []
    transports = []
    began = time.perf_counter()
    for first in range(0, count, 100):  # open in waves: a burst of 1,000 SYNs overflows the listen backlog
        wave = []
        for _ in range(first, min(count, first + 100)):
            opened = loop.create_future()
            transport, protocol = await loop.create_connection(
                lambda o=opened: WatchProtocol(request, latencies, o), host, port, ssl=tls
            )
            transports.append(transport)
            protocols.append(protocol)
            wave.append(opened)
        await asyncio.wait_for(asyncio.gather(*wave), 60)
    open_seconds = time.perf_counter() - began
    print("ready", flush=True)
    stop_line = loop.run_in_executor(None, sys.stdin.readline)
    await asyncio.wait([stop_line], timeout=cfg.get("max_seconds", 120))
    events = [p.events for p in protocols]
    for t in transports:
        t.close()
    return {
        "watchers": count,
        "open_seconds": open_seconds,
        "events": sum(events),
        "events_min_per_watcher": min(events),
        "events_max_per_watcher": max(events),
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies, default=float("nan")) * 1000,
        "cdf_ms": [s * 1000 for s in quantiles(latencies)],
    }


# --- lists ---------------------------------------------------------------------------------
def continue_token(body: bytes, accept: str) -> str:
    """The list's metadata.continue, read from the body in its own format without decoding the items."""
    if "protobuf" in accept:
        return _protobuf_continue(body)
    if "cbor" in accept:
        match = re.search(rb"\x68continue", body[-4096:])  # "continue" as a CBOR text string; metadata is last
        if match is None:
            return ""
        tail = body[-4096:][match.end() :]
        head = tail[0]
        if 0x60 <= head < 0x78:
            return tail[1 : 1 + head - 0x60].decode()
        if head == 0x78:
            return tail[2 : 2 + tail[1]].decode()
        if head == 0x79:
            n = int.from_bytes(tail[1:3], "big")
            return tail[3 : 3 + n].decode()
        raise HTTPError(f"unexpected CBOR head {head:#x} for continue")
    match = re.search(rb'"continue":"([^"]*)"', body[:4096])
    return match.group(1).decode() if match else ""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes, start: int = 0, end: int | None = None):
    """(field number, start, end) of each length-delimited field of a protobuf message."""
    pos, end = start, len(data) if end is None else end
    while pos < end:
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 2:
            length, pos = _varint(data, pos)
            yield key >> 3, pos, pos + length
            pos += length
        elif wire == 0:
            _, pos = _varint(data, pos)
        else:
            raise HTTPError(f"unexpected wire type {wire}")


def _protobuf_continue(body: bytes) -> str:
    # k8s\x00 + runtime.Unknown{raw = 2}; the list's ListMeta is field 1, its continue field 3.
    for number, start, end in _fields(body, 4):
        if number != 2:
            continue
        for list_field, meta_start, meta_end in _fields(body, start, end):
            if list_field == 1:
                for meta_field, s, e in _fields(body, meta_start, meta_end):
                    if meta_field == 3:
                        return body[s:e].decode()
                return ""
    return ""


async def lists(cfg: dict) -> dict:
    conn = Connection(cfg["host"], cfg["port"])
    await conn.connect()
    out = {}
    for item in cfg["requests"]:
        accept, path, repeats = item["accept"], item["path"], item["repeats"]
        times, size, pages = [], 0, 0
        for _ in range(repeats):
            start = time.perf_counter()
            size, pages, token = 0, 0, None
            while True:
                url = path if token is None else f"{item['next']}&continue={quote(token)}"
                status, body = await conn.request("GET", url, headers={"Accept": accept})
                if status != 200:
                    raise HTTPError(f"GET {url}: {status} {body[:300]!r}")
                size += len(body)
                pages += 1
                token = continue_token(body, accept) if item.get("follow") else ""
                if not token:
                    break
            times.append(time.perf_counter() - start)
        out[item["name"]] = {
            "median_ms": sorted(times)[len(times) // 2] * 1000,
            "min_ms": min(times) * 1000,
            "bytes": size,
            "pages": pages,
            "repeats": repeats,
        }
    conn.close()
    return out


# --- fill ----------------------------------------------------------------------------------
async def fill(cfg: dict) -> dict:
    """Create ``count`` objects in ``collection`` from ``template`` (its metadata.name replaced), over
    ``clients`` connections: the create throughput of a kind."""
    conns = [Connection(cfg["host"], cfg["port"]) for _ in range(cfg["clients"])]
    await asyncio.gather(*(c.connect() for c in conns))
    template, count = cfg["template"], cfg["count"]
    latencies: list[float] = []
    errors = 0
    names = iter(range(count))

    async def client(conn: Connection) -> None:
        nonlocal errors
        for i in names:
            body = json.dumps({**template, "metadata": {"name": f"o{i}"}}).encode()
            start = time.perf_counter()
            status, _ = await conn.request("POST", cfg["collection"], body)
            latencies.append(time.perf_counter() - start)
            errors += status != 201

    began = time.perf_counter()
    await asyncio.gather(*(client(c) for c in conns))
    elapsed = time.perf_counter() - began
    for c in conns:
        c.close()
    return summary(latencies, elapsed, errors)


# --- gets ----------------------------------------------------------------------------------
def client_tls(files: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=files["ca"])
    context.load_cert_chain(files["cert"], files["key"])
    return context


async def gets(cfg: dict) -> dict:
    tls = client_tls(cfg["tls"]) if cfg.get("tls") else None
    conns = [Connection(cfg["host"], cfg["port"], tls) for _ in range(cfg["clients"])]
    await asyncio.gather(*(c.connect() for c in conns))
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + cfg["seconds"]

    async def client(conn: Connection) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            status, _ = await conn.request("GET", cfg["path"])
            latencies.append(time.perf_counter() - start)
            errors += status != 200

    began = time.perf_counter()
    await asyncio.gather(*(client(c) for c in conns))
    elapsed = time.perf_counter() - began
    for c in conns:
        c.close()
    return summary(latencies, elapsed, errors)


# --- fairness --------------------------------------------------------------------------------
async def fairness(cfg: dict) -> dict:
    host, port, path = cfg["host"], cfg["port"], cfg["path"]
    deadline = time.monotonic() + cfg["seconds"]
    elephant_codes: dict[str, int] = {}

    async def elephant(number: int) -> None:
        conn = Connection(host, port)
        headers = {"Impersonate-User": cfg["elephant"]}
        creates = f"/api/v1/namespaces/{cfg['namespace']}/configmaps"
        sent = 0
        while time.monotonic() < deadline:
            sent += 1
            body = configmap(f"e{os.getpid()}-{number}-{sent}", {"k": "v"})  # unique across rounds
            status, _ = await conn.request("POST", creates, body, headers)
            elephant_codes[str(status)] = elephant_codes.get(str(status), 0) + 1
            if status == 429:  # the connection stays open (unless the answer said otherwise), as client-go's
                await asyncio.sleep(cfg["backoff"])
        conn.close()

    async def mouse() -> tuple[list[float], dict[str, int]]:
        conn = Connection(host, port)
        await conn.connect()  # its requests' latencies, not the TCP handshake's
        headers = {"Impersonate-User": cfg["mouse"]}
        latencies, codes = [], {}
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status, _ = await conn.request("GET", path, headers=headers)
            latencies.append(time.perf_counter() - started)
            codes[str(status)] = codes.get(str(status), 0) + 1
            await asyncio.sleep(cfg["interval"])
        conn.close()
        return latencies, codes

    began = time.monotonic()
    elephants = [elephant(n) for n in range(cfg["elephants"])]
    if not cfg["mouse"]:  # no mouse user: the elephant alone (the mouse runs in a process of its own)
        await asyncio.gather(*elephants)
        return {"elephant": elephant_codes}
    *_, (latencies, codes) = await asyncio.gather(*elephants, mouse())
    return {
        "mouse": {**latency_summary(latencies, time.monotonic() - began), "codes": codes},
        "elephant": elephant_codes,
    }


MODES = {"writes": writes, "watch": watch, "lists": lists, "gets": gets, "fairness": fairness, "fill": fill}


def main(argv: list[str]) -> int:
    mode, config = argv[0], json.loads(argv[1])
    result = uvloop.run(MODES[mode](config))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
