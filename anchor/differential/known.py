"""anchor/known-differences.yaml: the differences that are intended (kube-apiserver 1.32, which
protokube serves, against the anchor's newer release) or that come from the harness, each with the
reason and the upstream change that explains it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from anchor.differential.compare import Difference

FILE = Path(__file__).resolve().parents[1] / "known-differences.yaml"


@dataclass(frozen=True, slots=True)
class Known:
    """An explained difference: a regex over Difference.key (and, when given, over what each server
    answered there, as the report shows it), why it is so, and its upstream change."""

    match: re.Pattern[str]
    why: str
    upstream: str
    theirs: re.Pattern[str] | None = None
    ours: re.Pattern[str] | None = None

    def explains(self, difference: Difference) -> bool:
        return bool(
            self.match.search(difference.key)
            and (self.theirs is None or self.theirs.fullmatch(difference.theirs))
            and (self.ours is None or self.ours.fullmatch(difference.ours))
        )


def load(path: Path = FILE) -> list[Known]:
    entries = yaml.safe_load(path.read_text()) or []
    return [
        Known(
            re.compile(e["match"]),
            e["why"],
            e["upstream"],
            re.compile(e["theirs"]) if "theirs" in e else None,
            re.compile(e["ours"]) if "ours" in e else None,
        )
        for e in entries
    ]


def explain(difference: Difference, known: list[Known]) -> Known | None:
    return next((k for k in known if k.explains(difference)), None)
