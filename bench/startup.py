"""Start-up: time until a fresh gateway is ready and its idle memory, serving every built-in kind,
against the same server serving only the first groups (core/v1, apps/v1, coordination.k8s.io/v1, the
API before every GA kind was added; ``--runtime-config``), in the same run.

Each gateway starts on an empty data dir (embedded storage, certificates made on first start, so
both pay the same fixed costs); "ready" is the first 200 from ``/readyz`` (every watch cache
synced, system namespaces made). Idle memory is the gateway process's RSS two seconds later.
Goal: all kinds within 2× of the small API on both figures.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import Row, at_most, fmt_bytes, gateway, ratio_row, request, rss_bytes, wait_for

SMALL_API = "api/all=false,api/v1=true,apps/v1=true,coordination.k8s.io/v1=true"
GOAL = 2.0
SETTLE_SECONDS = 2.0


def measure(*args: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp, gateway(Path(tmp) / "data", *args) as gw:
        wait_for(lambda: request(gw, "GET", "/readyz")[0] == 200, 60, "/readyz")
        ready = time.perf_counter() - gw.started
        time.sleep(SETTLE_SECONDS)
        status, body = request(gw, "GET", "/apis")
        assert status == 200
        return {"ready_seconds": ready, "rss": rss_bytes(gw.pid), "apis_bytes": len(body)}


def run(quick: bool) -> dict:
    rounds = 1 if quick else 3
    small = [measure("--runtime-config", SMALL_API) for _ in range(rounds)]
    full = [measure() for _ in range(rounds)]
    return {
        "small": {"ready_seconds": min(r["ready_seconds"] for r in small), "rss": min(r["rss"] for r in small)},
        "all": {"ready_seconds": min(r["ready_seconds"] for r in full), "rss": min(r["rss"] for r in full)},
        "rounds": rounds,
    }


def rows(results: dict) -> list[Row]:
    small, full = results["small"], results["all"]
    return [
        ratio_row(
            "startup",
            "ready after start, all kinds",
            f"{full['ready_seconds']:.2f} s",
            f"first groups {small['ready_seconds']:.2f} s",
            full["ready_seconds"] / small["ready_seconds"],
            at_most,
            GOAL,
        ),
        ratio_row(
            "startup",
            "idle RSS, all kinds",
            fmt_bytes(full["rss"]),
            f"first groups {fmt_bytes(small['rss'])}",
            full["rss"] / small["rss"],
            at_most,
            GOAL,
        ),
    ]
