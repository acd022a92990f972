"""What a rewrite keeps from a file that exists: each message's hand-maintained option blocks.

The ``kind`` and ``resource`` options (and any other ``protokube.options.v1`` message option
except ``atomic``, which the tool derives from ``+structType=atomic``) are metadata the tool has
no upstream source for. They are kept exactly as written, with the comment lines right above
each of them.
"""

from __future__ import annotations

import re
from pathlib import Path

_MESSAGE = re.compile(r"^message (\w+) \{")
_OPTION = re.compile(r"^  option \(protokube\.options\.v1\.(\w+)\)")
DERIVED_MESSAGE_OPTIONS = frozenset({"atomic"})


def _statement_end(lines: list[str], start: int) -> int:
    """The index of the line that ends the option statement starting at ``start``."""
    depth = 0
    for i in range(start, len(lines)):
        in_string = False
        escaped = False
        for ch in lines[i]:
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
        if depth == 0 and lines[i].rstrip().endswith(";"):
            return i
    raise SystemExit(f"unterminated option statement at line {start + 1}")


def kept_options(path: Path) -> dict[str, list[str]]:
    """Message name -> the lines of its hand-maintained option blocks, in file order."""
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    kept: dict[str, list[str]] = {}
    message: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if (m := _MESSAGE.match(line)) is not None:
            message = m.group(1)
        elif line.startswith("}"):
            message = None
        elif message is not None and (m := _OPTION.match(line)) is not None:
            end = _statement_end(lines, i)
            if m.group(1) not in DERIVED_MESSAGE_OPTIONS:
                start = i
                while start > 0 and lines[start - 1].startswith("  //"):
                    start -= 1
                kept.setdefault(message, []).extend(lines[start : end + 1])
            i = end
        i += 1
    return kept
