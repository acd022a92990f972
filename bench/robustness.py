"""Robustness: how fast the gateway turns away hostile requests, and whether doing so leaves memory behind.

A fixed mix of malformed requests — bodies that are not JSON, YAML, CBOR or protobuf, lone surrogates,
NaN, nesting 1,000 deep, bad selectors, continue tokens and resourceVersions, unsupported media types,
broken patches, invalid names, unknown paths and methods — is sent over 8 keep-alive connections.
Every answer must be a 4xx. The gateway's RSS is read after a warm-up of 1,000 such requests and again
after 10,000 more (quick run: 500 and 3,000): the goal is flat (ratio <= 1.1). Then a bystander's /readyz
p99 while an expensive CEL object and a 3 MiB YAML body are submitted, against its idle p99
(bystander.py; goal <= 2), and the RSS left after stalled watchers behind large events disconnect
(stalled_watchers.py; goal <= 1.2).
"""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
import time
from pathlib import Path

import uvloop

from bench import bystander, stalled_watchers
from bench.common import Row, at_most, fmt_bytes, fmt_rate, gateway, ratio_row, rss_bytes
from bench.loadgen import Connection

GOAL = 1.1
CONNECTIONS = 8
SIZES = {True: (500, 3_000), False: (1_000, 10_000)}  # quick: (warm-up, measured)
NS = "/api/v1/namespaces/default"
JSON, YAML = {"Content-Type": "application/json"}, {"Content-Type": "application/yaml"}


def _token(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


HOSTILE: list[tuple[str, str, bytes, dict[str, str]]] = [
    ("POST", f"{NS}/configmaps", b"{", JSON),
    ("POST", f"{NS}/configmaps", b'{"metadata":{"name":"a\\ud800"}}', JSON),
    ("POST", f"{NS}/configmaps", b'{"metadata":{"name":"n"},"data":{"k":NaN}}', JSON),
    ("POST", f"{NS}/configmaps", b'{"metadata":{"name":"n"},"data":' + b"[" * 1000 + b"]" * 1000 + b"}", JSON),
    ("POST", f"{NS}/configmaps", b"kind: [\n", YAML),
    ("POST", f"{NS}/configmaps", b"k8s\x00\xff\xff", {"Content-Type": "application/vnd.kubernetes.protobuf"}),
    ("POST", f"{NS}/configmaps", b"\xbf\xff", {"Content-Type": "application/cbor"}),
    ("POST", f"{NS}/configmaps", b"{}", {"Content-Type": "text/html"}),
    ("POST", f"{NS}/configmaps", json.dumps({"metadata": {"name": "Not_Valid!"}}).encode(), JSON),
    ("POST", f"{NS}/pods", json.dumps({"kind": "Service", "apiVersion": "v1"}).encode(), JSON),
    ("GET", f"{NS}/pods?labelSelector=a+in+(b", b"", {}),
    ("GET", f"{NS}/pods?fieldSelector=spec.unknown%3Dx", b"", {}),
    ("GET", f"{NS}/pods?limit=1&continue=" + _token(b'{"v":"meta.k8s.io/v1","rv":99999999999999999999}'), b"", {}),
    ("GET", f"{NS}/pods?resourceVersion=99999999999999999999&resourceVersionMatch=Exact", b"", {}),
    ("GET", f"{NS}/pods?timeout=abc", b"", {}),
    ("GET", f"{NS}/pods", b"", {"Accept": "text/html"}),
    ("PATCH", f"{NS}/configmaps/missing", b"[{", {"Content-Type": "application/json-patch+json"}),
    ("PATCH", f"{NS}/configmaps/missing", b"{}", {"Content-Type": "text/plain"}),
    ("GET", "/apis/nothing.example.com/v1/widgets", b"", {}),
    ("TRACE", f"{NS}/pods", b"", {}),
]


async def _hostile(port: int, count: int) -> dict:
    conns = [Connection("127.0.0.1", port) for _ in range(CONNECTIONS)]
    codes: dict[str, int] = {}
    counter = iter(range(count))

    async def client(conn: Connection) -> None:
        for i in counter:
            method, path, body, headers = HOSTILE[i % len(HOSTILE)]
            status, _ = await conn.request(method, path, body, headers)
            codes[str(status)] = codes.get(str(status), 0) + 1

    began = time.perf_counter()
    await asyncio.gather(*(client(c) for c in conns))
    elapsed = time.perf_counter() - began
    for conn in conns:
        conn.close()
    return {"requests": count, "seconds": elapsed, "per_s": count / elapsed, "codes": codes}


def run(quick: bool) -> dict:
    warm_up, count = SIZES[quick]
    with tempfile.TemporaryDirectory(prefix="bench-robustness-") as tmp, gateway(Path(tmp)) as gw:
        warm = uvloop.run(_hostile(gw.port, warm_up))
        time.sleep(0.5)
        before = rss_bytes(gw.pid)
        measured = uvloop.run(_hostile(gw.port, count))
        time.sleep(0.5)
        after = rss_bytes(gw.pid)
        heavy = bystander.measure(gw.port)
        stalled = stalled_watchers.measure(gw, quick)
    not_4xx = sum(n for code, n in measured["codes"].items() if not code.startswith("4"))
    return {
        "kinds": len(HOSTILE),
        "warm_up": warm,
        "measured": measured,
        "not_4xx": not_4xx,
        "rss_before": before,
        "rss_after": after,
        "rss_ratio": after / before,
        "bystander": heavy,
        "stalled_watchers": stalled,
    }


def rows(results: dict) -> list[Row]:
    measured = results["measured"]
    return [
        Row(
            "robustness",
            f"hostile requests ({results['kinds']} kinds, {CONNECTIONS} connections)",
            fmt_rate(measured["per_s"]),
            f"{results['not_4xx']} of {measured['requests']:,} not 4xx",
            None,
            "all 4xx",
            results["not_4xx"] == 0,
        ),
        ratio_row(
            "robustness",
            f"gateway RSS after {measured['requests']:,} rejected requests",
            fmt_bytes(results["rss_after"]),
            f"before {fmt_bytes(results['rss_before'])}",
            results["rss_ratio"],
            at_most,
            GOAL,
        ),
        *bystander.rows(results["bystander"]),
        stalled_watchers.row(results["stalled_watchers"]),
    ]
