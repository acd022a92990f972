"""Writes end to end: configmap creates, then updates, patches, applies and no-op patches of them, through
the gateway at 1 and 32 clients.

The load client (``bench.loadgen writes``) runs in its own process. Each update is a PUT carrying the
resourceVersion of the client's last write of that object (no conflicts). The limits: upstream's SLO
for mutating API calls (p99 ≤ 1 s), and the raw put rate of the same storage service at 32 clients over
gRPC, measured right after (every write through the gateway is one storage transaction).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.common import Row, at_least, at_most, fmt_ms, fmt_rate, gateway, loadgen, ratio_row
from bench.common import clients as clients_text
from bench.storage import put_load

CLIENTS = (1, 32)
SLO_MS = 1000.0
GOAL = 0.5  # "well under" the SLO: p99 at most half of it
PHASES = {  # the load's phases: their names in the rows, plural and singular
    "create": ("creates", "create"),
    "update": ("updates", "update"),
    "patch": ("patches", "patch"),
    "apply": ("applies", "apply"),
    "noop": ("no-op patches", "no-op patch"),
}
PATCH_GOAL = 0.7  # patch throughput at least this share of create's
APPLY_GOAL = 2.0  # apply p99 at most this multiple of patch p99
CREATE_GOAL = 0.5  # creates/s at 32 clients at least this share of the storage's own puts/s (issue 30)


def run(quick: bool) -> dict:
    seconds = 1.5 if quick else 8.0
    results: dict = {"seconds_per_phase": seconds, "clients": {}}
    with tempfile.TemporaryDirectory(prefix="bench-writes-") as tmp, gateway(Path(tmp) / "data") as gw:
        base = {"host": gw.host, "port": gw.port}
        loadgen("writes", {**base, "clients": 4, "seconds": 0.5, "tag": "warm"}, 60)
        for clients in CLIENTS:
            config = {**base, "clients": clients, "seconds": seconds, "tag": f"c{clients}"}
            results["clients"][str(clients)] = loadgen("writes", config, seconds * len(PHASES) + 60)
        results["storage_puts_32"] = asyncio.run(put_load(gw.storage, 32, min(seconds, 3.0)))
    return results


def rows(results: dict) -> list[Row]:
    out = []
    storage = results["storage_puts_32"]["puts_per_s"]
    for clients, phases in results["clients"].items():
        for phase, (plural, singular) in PHASES.items():
            r = phases.get(phase)
            if r is None:
                out.append(Row("writes", f"{plural}, {clients_text(clients)}", "not run (creates failed)"))
                continue
            errors = f", {r['errors']} errors" if r["errors"] else ""
            goal = (at_least, CREATE_GOAL) if phase == "create" and clients == str(max(CLIENTS)) else ()
            out.append(
                ratio_row(
                    "writes",
                    f"{plural}/s, {clients_text(clients)}{errors}",
                    fmt_rate(r["per_s"]),
                    f"storage puts 32c {fmt_rate(storage)}",
                    r["per_s"] / storage,
                    *goal,
                )
            )
            out.append(Row("writes", f"{singular} p50, {clients_text(clients)}", fmt_ms(r["p50_ms"])))
            check = at_most if clients == str(max(CLIENTS)) else None
            out.append(
                ratio_row(
                    "writes",
                    f"{singular} p99, {clients_text(clients)}",
                    fmt_ms(r["p99_ms"]),
                    "SLO 1 s",
                    r["p99_ms"] / SLO_MS,
                    check,
                    GOAL,
                )
            )
    out += _patch_rows(results["clients"].get(str(max(CLIENTS)), {}))
    return out


def _patch_rows(phases: dict) -> list[Row]:
    """Patch throughput against create's and apply p99 against patch's, both at 32 clients."""
    create, patch, apply = phases.get("create"), phases.get("patch"), phases.get("apply")
    if not (create and patch and apply):
        return [Row("writes", "patch and apply vs create", "not run")]
    many = clients_text(max(CLIENTS))
    return [
        ratio_row(
            "writes",
            f"patch throughput vs create, {many}",
            fmt_rate(patch["per_s"]),
            f"creates {fmt_rate(create['per_s'])}",
            patch["per_s"] / create["per_s"],
            at_least,
            PATCH_GOAL,
        ),
        ratio_row(
            "writes",
            f"apply p99 vs patch p99, {many}",
            fmt_ms(apply["p99_ms"]),
            f"patch p99 {fmt_ms(patch['p99_ms'])}",
            apply["p99_ms"] / patch["p99_ms"],
            at_most,
            APPLY_GOAL,
        ),
    ]
