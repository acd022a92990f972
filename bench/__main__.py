"""protokube's benchmark suite: every figure compared with a limit measured in the same run.

    python -m bench [--quick] [--only section,...] [--results DIR]

Prints one table (figure, value, limit, ratio, goal, met), and writes DIR/results.json (raw numbers)
and PNG charts to DIR (default bench/results/, not committed). Exits non-zero only when a section
fails to run; a goal not met is reported, not an error (timings on shared machines are noisy).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import sys
import time
import traceback
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from bench import (
    admission,
    apf,
    customresources,
    encodings,
    fixture,
    floor,
    http_ceiling,
    lists,
    memory,
    openapi,
    robustness,
    scaleout,
    startup,
    storage,
    tls,
    watch_fanout,
    writes,
)
from bench.common import RESULTS_DIR, Row, machine, markdown_table, table

SECTIONS: dict[str, ModuleType] = {
    "encodings": encodings,
    "storage": storage,
    "http": http_ceiling,
    "tls": tls,
    "writes": writes,
    "lists": lists,
    "watch": watch_fanout,
    "memory": memory,
    "startup": startup,
    "fixture": fixture,
    "scaleout": scaleout,
    "openapi": openapi,
    "apf": apf,
    "robustness": robustness,
    "customresources": customresources,
    "admission": admission,
    "floor": floor,
}
SIZES = {
    True: "quick: 1-3 s per load; lists of 2,000 pods; memory at 2,000 and 10,000 pods; 10 and 200 watchers",
    False: "full: 5-15 s per load; lists of 10,000 pods; memory at 10,000 and 100,000 pods; 10 and 1,000 watchers",
}


def raise_file_limit() -> None:
    """1,000 watch connections need more descriptors than a default soft limit of 1,024 (servers inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller loads, under 2 minutes in all")
    parser.add_argument("--only", default="", help=f"comma-separated sections of: {','.join(SECTIONS)}")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="folder for results.json and charts")
    parser.add_argument("--markdown", action="store_true", help="also write results.md, the table in Markdown")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    raise_file_limit()
    args.results.mkdir(parents=True, exist_ok=True)

    began = time.perf_counter()
    print(f"protokube bench ({SIZES[args.quick]})", flush=True)
    sections: dict[str, dict] = {}
    rows: list[Row] = []
    failed = []
    for i, name in enumerate(names, 1):
        module = SECTIONS[name]
        start = time.perf_counter()
        print(f"[{i}/{len(names)}] {name} ...", end=" ", flush=True)
        try:
            result = module.run(args.quick)
            result["seconds"] = time.perf_counter() - start
            rows += module.rows(result)
            print(f"{result['seconds']:.1f} s", flush=True)
        except Exception:
            result = {"error": traceback.format_exc(), "seconds": time.perf_counter() - start}
            rows.append(Row(name, "FAILED", "see results.json"))
            failed.append(name)
            print(f"FAILED after {result['seconds']:.1f} s\n{result['error']}", flush=True)
        sections[name] = result

    if "storage" in sections and "error" not in sections["storage"]:
        print("\nstorage detail:\n" + storage.report(sections["storage"]))
    print()
    print(table(rows))
    goals = [r for r in rows if r.met is not None]
    print(f"\ngoals met: {sum(r.met for r in goals)}/{len(goals)}; total {time.perf_counter() - began:.0f} s")

    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "quick": args.quick,
        "sizes": SIZES[args.quick],
        "sections": sections,
        "rows": [asdict(r) for r in rows],
    }
    path = args.results / "results.json"
    path.write_text(json.dumps(document, indent=1, default=str))
    if args.markdown:
        (args.results / "results.md").write_text(markdown_table(rows) + "\n")
    from bench import charts  # matplotlib loads only when charts are drawn

    pngs = charts.draw(sections, args.results)
    print(f"wrote {path} and {len(pngs)} charts in {args.results}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
