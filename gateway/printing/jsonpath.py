"""The JSONPath of printer columns (client-go util/jsonpath, the subset CRDs' additionalPrinterColumns
use): ``.a.b``, ``['a.b']``, ``[0]``, ``[-1]``, ``[*]``, ``[?(@.type=="Ready")]``. ``find`` gives
every value the path reaches, in order."""

from __future__ import annotations

import re
from typing import Any

_STEP = re.compile(
    r"""\.(?P<name>[^.\[]+)"""  # .name
    r"""|\[\s*['"](?P<quoted>[^'"]*)['"]\s*\]"""  # ['name'] or ["name"]
    r"""|\[(?P<index>-?\d+)\]"""  # [0], [-1]
    r"""|\[(?P<star>\*)\]|\.(?P<dotstar>\*)"""  # [*], .*
    r"""|\[\?\(@\.(?P<key>[\w.-]+)\s*(?P<op>==|!=)\s*(?P<value>'[^']*'|"[^"]*"|[^)\s]+)\s*\)\]"""  # filters
)


class JSONPathError(ValueError):
    """A path this subset cannot read."""


def steps(path: str) -> list[re.Match[str]]:
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if not text.startswith((".", "[")):
        text = "." + text
    found, pos = [], 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None:
            raise JSONPathError(f"unrecognized JSONPath at {text[pos:]!r}")
        found.append(match)
        pos = match.end()
    return found


def find(obj: Any, path: str) -> list[Any]:
    values = [obj]
    for step in steps(path):
        values = [out for value in values for out in _apply(step, value)]
    return values


def _apply(step: re.Match[str], value: Any) -> list[Any]:
    name = step["name"] if step["name"] is not None else step["quoted"]
    if name is not None:
        return [value[name]] if isinstance(value, dict) and name in value else []
    if step["index"] is not None:
        index = int(step["index"])
        return [value[index]] if isinstance(value, list) and -len(value) <= index < len(value) else []
    if step["star"] or step["dotstar"]:
        return list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, list) else []
    if step["key"] is not None and isinstance(value, list):
        wanted = step["value"].strip("'\"")
        keep = []
        for item in value:
            actual = find(item, "." + step["key"])
            matched = bool(actual) and _text(actual[0]) == wanted
            if matched == (step["op"] == "=="):
                keep.append(item)
        return keep
    return []


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
