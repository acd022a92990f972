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


def _identity(item: Any) -> str | None:
    """What names a list item, so lists of named things are compared by name, not by position
    (a resource added in one release would shift every later one)."""
    if not isinstance(item, dict):
        return None
    for key in ("name", "subresource"):
        if isinstance(item.get(key), str):
            return item[key]
    meta = item.get("metadata")
    return meta.get("name") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    names = [_identity(item) for item in items]
    if not items or None in names or len(set(names)) != len(names):
        return None
    return dict(zip(names, items, strict=True))  # type: ignore[arg-type]


def _body(path: str, theirs: Any, ours: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(theirs, list) and isinstance(ours, list):
        left, right = _keyed(theirs), _keyed(ours)
        if left is not None and right is not None:
            common = [n for n in left if n in right]
            found = [] if common == [n for n in right if n in left] else [(f"{path}.order", list(left), list(right))]
            for name in [*left, *(n for n in right if n not in left)]:
                found += _body(f"{path}[{name}]", left.get(name, MISSING), right.get(name, MISSING))
            return found
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
