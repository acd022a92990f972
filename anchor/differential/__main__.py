"""make anchor-diff: the scripted requests against kube-apiserver (the anchor) and protokube, side by
side; every difference printed, explained by known-differences.yaml or not; exit 1 on any
unexplained one. The full report goes to .cache/anchor/diff-report.md."""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from anchor import launch
from anchor.differential import known, scenarios
from anchor.differential.compare import Difference, compare
from anchor.differential.session import Session
from bench.common import gateway
from protokube.gateway.security import certs

REPORT = launch.ROOT / ".cache" / "anchor" / "diff-report.md"
# protokube without its kube-controller-manager controllers: the anchor runs none either, so a
# Deployment gets no status and a namespace no default ServiceAccount on both sides.
PROTOKUBE_ARGS = ("--controllers=-*",)


def _run(session: Session) -> list[str]:
    """Every scenario against one server; the failures of scenarios that raised (they stop there)."""
    failures = []
    for scenario in scenarios.SCENARIOS:
        try:
            scenario(session)
        except Exception:  # a scenario that cannot go on is itself a difference to report
            failures.append(f"{scenario.__name__}: {traceback.format_exc(limit=3).strip().splitlines()[-1]}")
    return failures


def differences(theirs: Session, ours: Session) -> list[Difference]:
    found: list[Difference] = []
    for name in [*theirs.observed, *(n for n in ours.observed if n not in theirs.observed)]:
        left, right = theirs.observed.get(name), ours.observed.get(name)
        if left is None or right is None:
            found.append(
                Difference(name, "observation", "made" if left else "not made", "made" if right else "not made")
            )
        else:
            found += compare(name, left, right)
    return found


def _report(
    unexplained: list[Difference], explained: list[tuple[Difference, known.Known]], failures: dict[str, list[str]]
) -> str:
    lines = ["# kube-apiserver (theirs) against protokube (ours)", ""]
    for label, failed in failures.items():
        lines += [f"- a scenario stopped on {label}: {f}" for f in failed]
    lines += ["", f"## Unexplained ({len(unexplained)})", ""]
    lines += [f"- `{d.key}`: theirs {d.theirs} / ours {d.ours}" for d in unexplained]
    lines += ["", f"## Explained by known-differences.yaml ({len(explained)})", ""]
    lines += [f"- `{d.key}`: theirs {d.theirs} / ours {d.ours} — {k.upstream}" for d, k in explained]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anchor.differential", description=__doc__.split("\n")[0])
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--show", metavar="REGEX", help="print both servers' observations whose names match")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="anchor-diff-") as tmp,
        launch.anchor(Path(tmp) / "kube") as kube,
        gateway(Path(tmp) / "protokube", *PROTOKUBE_ARGS) as ours_gw,
    ):
        pki = certs.ensure(Path(tmp) / "protokube" / "pki")
        print(f"both servers ready in {time.monotonic() - started:.1f} s", flush=True)
        theirs = Session("kube-apiserver", kube.client())
        ours = Session("protokube", launch.admin_client(f"https://127.0.0.1:{ours_gw.secure_port}", pki))
        run_started = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            failures = dict(zip(("kube-apiserver", "protokube"), pool.map(_run, (theirs, ours)), strict=True))
        print(f"scenarios ran in {time.monotonic() - run_started:.1f} s", flush=True)
    if args.show:
        for name in theirs.observed.keys() & ours.observed.keys():
            if re.search(args.show, name):
                for session in (theirs, ours):
                    print(f"== {name} ({session.label})\n{json.dumps(asdict(session.observed[name]), indent=1)}")
    found = differences(theirs, ours)
    entries = known.load()
    matched = [(d, known.explain(d, entries)) for d in found]
    unexplained = [d for d, k in matched if k is None]
    explained = [(d, k) for d, k in matched if k is not None]
    failures = {label: failed for label, failed in failures.items() if failed}
    text = _report(unexplained, explained, failures)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text)
    print(text if len(text) < 20000 else text[:20000] + "\n... (the rest in the report)")
    print(
        f"{len(theirs.observed)} observations, {len(found)} differences, {len(unexplained)} unexplained; "
        f"report: {args.report}; {time.monotonic() - started:.0f} s in all"
    )
    return 1 if unexplained or failures else 0


if __name__ == "__main__":
    sys.exit(main())
