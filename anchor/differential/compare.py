"""Differences between two servers' observations of the same scripted request: its status, each
header, and each place in the body (a Status's reason, message and details included) where the
two normalized bodies differ in shape or value."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from anchor.differential.session import Observation

MISSING = object()


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where kube-apiserver (theirs) and protokube (ours) answered differently."""

    observation: str
    where: str  # "status", "header NAME" or "body PATH"
    theirs: str
    ours: str

    @property
    def key(self) -> str:
        """What known-differences entries match: "OBSERVATION WHERE"."""
        return f"{self.observation} {self.where}"


def _show(value: Any) -> str:
    if value is MISSING:
        return "(absent)"
    shown = json.dumps(value, sort_keys=True)
    return shown if len(shown) <= 200 else shown[:197] + "..."


def _body(path: str, theirs: Any, ours: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        found = []
        for key in [*theirs, *(k for k in ours if k not in theirs)]:
            found += _body(f"{path}.{key}", theirs.get(key, MISSING), ours.get(key, MISSING))
        return found
    if isinstance(theirs, list) and isinstance(ours, list):
        found = [] if len(theirs) == len(ours) else [(f"{path}.length", len(theirs), len(ours))]
        for index, (left, right) in enumerate(zip(theirs, ours, strict=False)):
            found += _body(f"{path}[{index}]", left, right)
        return found
    return [] if theirs == ours else [(path, theirs, ours)]


def compare(name: str, theirs: Observation, ours: Observation) -> list[Difference]:
    found = []
    if theirs.status != ours.status:
        found.append(Difference(name, "status", str(theirs.status), str(ours.status)))
    for header in sorted(theirs.headers.keys() | ours.headers.keys()):
        left, right = theirs.headers.get(header, MISSING), ours.headers.get(header, MISSING)
        if left != right:
            found.append(Difference(name, f"header {header}", _show(left), _show(right)))
    for path, left, right in _body("body", theirs.body, ours.body):
        found.append(Difference(name, path, _show(left), _show(right)))
    return found
