"""Large lists: N realistic pods listed as JSON, protobuf and CBOR, whole and in pages of 500.

The pods are written straight into a storage service, then a fresh gateway loads them into its watch
cache. Lists are timed from a separate process (``bench.loadgen lists``, time to the last byte):

- cache: the default consistent list (no resourceVersion), served from the watch cache by concatenating
  each object's cached encoding; ``resourceVersion=0`` too (JSON); the very first list of each format
  (cold: every object is encoded once then) is reported separately;
- pages of 500 without a resourceVersion: the first page from the cache, the next ones (continue
  tokens) from storage at the first page's revision, as upstream does;
- exact: ``resourceVersion=<rv>&resourceVersionMatch=Exact`` from storage (every object decoded and
  encoded anew), whole and in pages of 500.

The limit, measured in the same run: ``json.dumps`` of the same list as plain dicts (stdlib, C accelerated).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.common import (
    Row,
    at_most,
    fmt_bytes,
    fmt_ms,
    gateway,
    loadgen,
    ratio_row,
    request,
    storage_server,
    wait_for,
)
from bench.pods import load_pods

PAGE = 500
FORMATS = {"JSON": "application/json", "protobuf": "application/vnd.kubernetes.protobuf", "CBOR": "application/cbor"}
PATH = "/api/v1/namespaces/default/pods"
GOAL_TIME = 0.5  # the JSON list from the cache in at most half the time json.dumps takes
GOAL_SIZE = 0.6  # protobuf body at most 60% of JSON's


def wait_cached(gw, count: int, timeout: float = 300) -> dict:
    """Wait until the gateway's cache lists ``count`` pods; returns the list's metadata."""

    def check():
        status, body = request(gw, "GET", PATH + "?limit=1", timeout=timeout)
        if status != 200:
            return None
        meta = json.loads(body)["metadata"]
        return meta if meta.get("remainingItemCount", 0) + 1 >= count else None

    return wait_for(check, timeout, f"{count} pods in the watch cache", interval=0.2)


def naive_dumps_ms(gw, repeats: int) -> tuple[float, int]:
    """The limit: stdlib json.dumps of the same list as plain dicts (median ms), and its size."""
    _, body = request(gw, "GET", PATH + "?resourceVersion=0")
    document = json.loads(body)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = json.dumps(document)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1000, len(out)


def requests(rv: str, repeats: int, storage_repeats: int) -> list[dict]:
    reqs = []
    next_page = f"{PATH}?limit={PAGE}"  # a continue token carries the revision: no resourceVersion with it
    for fmt, accept in FORMATS.items():
        reqs += [
            {"name": f"{fmt} cache", "accept": accept, "path": PATH + "?", "repeats": repeats},
            {"name": f"{fmt} cache, pages", "path": f"{PATH}?limit={PAGE}", "follow": True, "next": next_page},
            {"name": f"{fmt} exact", "path": f"{PATH}?resourceVersion={rv}&resourceVersionMatch=Exact"},
            {
                "name": f"{fmt} exact, pages",
                "path": f"{PATH}?resourceVersion={rv}&resourceVersionMatch=Exact&limit={PAGE}",
                "follow": True,
                "next": next_page,
            },
        ]
        if fmt == "JSON":
            reqs.append({"name": "JSON cache rv=0", "path": PATH + "?resourceVersion=0", "repeats": repeats})
        for r in reqs:
            r.setdefault("accept", accept)
            r.setdefault("repeats", storage_repeats)
    return reqs


def run(quick: bool) -> dict:
    count = 2_000 if quick else 10_000
    repeats, storage_repeats = (3, 2) if quick else (5, 3)
    results: dict = {"pods": count, "page": PAGE}
    with tempfile.TemporaryDirectory(prefix="bench-lists-") as tmp:
        tmp_path = Path(tmp)
        with storage_server(tmp_path / "storage") as address:
            started = time.perf_counter()
            load_pods(address, 0, count)
            results["load_seconds"] = time.perf_counter() - started
            gates = ("--feature-gates", "CBORServingAndStorage=true")
            with gateway(tmp_path / "gateway", "--storage", address, *gates) as gw:
                meta = wait_cached(gw, count)
                results["cache_fill_seconds"] = time.perf_counter() - gw.started
                base = {"host": gw.host, "port": gw.port}
                cold = [
                    {"name": f"{f} cache, first", "accept": a, "path": PATH, "repeats": 1} for f, a in FORMATS.items()
                ]
                results["lists"] = loadgen("lists", {**base, "requests": cold}, 600)
                reqs = requests(meta["resourceVersion"], repeats, storage_repeats)
                results["lists"].update(loadgen("lists", {**base, "requests": reqs}, 1200))
                results["naive_json_dumps_ms"], results["naive_json_bytes"] = naive_dumps_ms(gw, repeats)
    return results


def rows(results: dict) -> list[Row]:
    n, lists = results["pods"], results["lists"]
    naive = results["naive_json_dumps_ms"]
    limit = f"json.dumps {fmt_ms(naive)}"
    out = []
    for name, r in lists.items():
        pages = f", {r['pages']} pages" if r["pages"] > 1 else ""
        figure = f"list {n:,} pods, {name}{pages}"
        check = at_most if name == "JSON cache" else None
        out.append(ratio_row("lists", figure, fmt_ms(r["median_ms"]), limit, r["median_ms"] / naive, check, GOAL_TIME))
    json_bytes = lists["JSON cache"]["bytes"]
    for fmt in ("protobuf", "CBOR"):
        size = lists[f"{fmt} cache"]["bytes"]
        check = at_most if fmt == "protobuf" else None
        out.append(
            ratio_row(
                "lists",
                f"{fmt} list body size",
                fmt_bytes(size),
                f"JSON {fmt_bytes(json_bytes)}",
                size / json_bytes,
                check,
                GOAL_SIZE,
            )
        )
    out.append(Row("lists", "JSON bytes per pod", fmt_bytes(json_bytes / n)))
    out.append(Row("lists", f"gateway start until {n:,} pods listed", f"{results['cache_fill_seconds']:.1f} s"))
    return out
