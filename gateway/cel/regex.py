"""CEL's regular expressions as cel-go evaluates them: RE2 syntax and linear-time matching (Go's
regexp, here RE2 itself through google-re2), Go's error texts for a pattern that does not parse,
and the functions that use them — the standard ``matches`` and Kubernetes' regex library
(``find``, ``findAll``: k8s.io/apiserver/pkg/cel/library/regex.go)."""

from __future__ import annotations

import functools
import math
from typing import Any

import re2
from celpy import celtypes
from celpy.evaluation import CELEvalError

from protokube.gateway.cel import cost
from protokube.gateway.cel.library import fail, method, register

String = celtypes.StringType
FUNCTIONS = frozenset({"matches", "find", "findAll"})

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would write each refused pattern to stderr
# RE2's words for what a pattern does wrong, as Go's regexp/syntax says them (the others are the same).
_GO_WORDS = {
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "no argument for repetition operator": "missing argument to repetition operator",
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "invalid named capture group": "invalid named capture",
    "trailing \\": "trailing backslash at end of expression",
    "pattern too large - compile failed": "expression too large",
}
# Work (program size times text length) a search may do on the event loop; past it the evaluation
# goes on a thread (cost.off_the_loop), where RE2 lets go of the GIL while it searches.
INLINE_WORK = 2_000_000


class RegexError(ValueError):
    """The pattern does not parse; ``str()`` is Go's regexp.Compile error."""


def _go_error(pattern: str, message: str) -> str:
    code, _, arg = message.partition(": ")
    if code == "invalid perl operator" and arg.startswith("(?<"):
        # Go reads (?< as a named capture (its lookbehinds are not supported either): the name
        # runs to the next '>', else to the end of the pattern.
        rest = pattern[max(pattern.find(arg), 0) :]
        end = rest.find(">")
        code, arg = "invalid named capture", rest if end < 0 else rest[: end + 1]
    elif code == "pattern too large - compile failed":
        arg = pattern
    return f"error parsing regexp: {_GO_WORDS.get(code, code)}: `{arg}`"


def _has_any_byte_escape(pattern: str) -> bool:
    """``\\C`` (any byte) outside ``\\Q...\\E``: RE2 takes it, Go refuses it."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
        elif pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
        elif pattern[i + 1] == "C":
            return True
        else:
            i += 2
    return False


@functools.lru_cache(maxsize=256)
def compiled(pattern: str) -> Any:
    """The compiled pattern (RegexError when it does not parse)."""
    try:
        regex = re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        text = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        raise RegexError(_go_error(pattern, text)) from None
    if _has_any_byte_escape(pattern):
        raise RegexError("error parsing regexp: invalid escape sequence: `\\C`")
    return regex


def cost_of(text: str, pattern: str) -> int:
    """cel-go's cost of applying ``pattern`` to ``text``: a traversal of the text (plus one) for
    each four characters of the pattern (interpreter/runtimecost.go, library/cost.go)."""
    return math.ceil((1 + len(text)) * 0.1) * math.ceil(len(pattern) * 0.25)


def _regex(text: Any, pattern: Any, prefix: str = "") -> Any:
    """The compiled pattern to apply to ``text``, or the CEL error to answer with."""
    if not isinstance(pattern, str):
        return fail("no such overload")
    try:
        regex = compiled(str(pattern))
    except RegexError as err:
        return fail(f"{prefix}{err}")
    if regex.programsize * len(text) > INLINE_WORK:
        cost.off_the_loop()
    return regex


@register("matches", String)
def matches(text: String, pattern: Any) -> Any:
    """Go's regexp.MatchString: a match anywhere in the text."""
    regex = _regex(text, pattern)
    if isinstance(regex, CELEvalError):
        return regex
    return celtypes.BoolType(regex.search(text) is not None)


@method("find", String)
def find(text: String, pattern: Any) -> Any:
    """Go's FindString: the leftmost match, "" when there is none."""
    regex = _regex(text, pattern, "Illegal regex: ")
    if isinstance(regex, CELEvalError):
        return regex
    match = regex.search(text)
    return String(match.group() if match else "")


@method("findAll", String)
def find_all(text: String, pattern: Any, limit: Any = -1) -> Any:
    """Go's FindAllString: at most ``limit`` matches (all when negative), where an empty match
    right after the previous match does not count."""
    regex = _regex(text, pattern, "Illegal regex: ")
    if isinstance(regex, CELEvalError):
        return regex
    if not isinstance(limit, int):
        return fail("no such overload")
    found: list[String] = []
    if limit == 0:
        return celtypes.ListType(found)
    previous = -1
    for match in regex.finditer(text):
        start, end = match.span()
        if not start == end == previous:
            found.append(String(match.group()))
            if len(found) == limit:
                break
        previous = end
    return celtypes.ListType(found)
