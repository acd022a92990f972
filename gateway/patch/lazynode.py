"""The document model of gopkg.in/evanphx/json-patch.v4 (v4.12.0), which kube-apiserver 1.32 uses
for JSON patch and JSON merge patch.

A node holds a JSON value as raw text and is parsed one level at a time, on first need, into an
object (``doc``) or an array (``ary``) of child nodes. This is observable: scalars compare by their
compacted raw text (``1`` is not ``1.0``, ``"<"`` is not the ``"\\u003c"`` Go's encoder wrote), an
object that was never touched keeps the member order it had, a touched one is written with sorted
keys. JSON ``null`` inside an object or array is a missing node (``None``); an operation's explicit
``"value": null`` is a node whose raw text is absent (Go: a nil ``*json.RawMessage``).

Nodes of the current object start from its decoded values (their raw text is what Go's encoder
writes for them), so the object is not encoded and parsed again.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import gateway.patch.gojson as gojson
from gateway.patch.gofmt import NIL_DEREF, ServerPanic

RAW, DOC, ARY = "raw", "doc", "ary"

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')
_WHITESPACE = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\r\n]+')
_UNSET = object()


class NotContainer(Exception):
    """The node's JSON is not an object (or not an array) — json.Unmarshal failed."""


def compact(text: str) -> str:
    """json.Compact: insignificant whitespace removed, nothing else changed."""
    return _WHITESPACE.sub(lambda m: m.group(1) or "", text)


def _split(text: str) -> tuple[str, list[tuple[str, str | None]]]:
    """The members (or elements, keyed "") of a JSON object or array text, as raw texts."""
    text = text.strip(" \t\r\n")
    kind = text[0]
    items: list[tuple[str, str | None]] = []
    depth, key, start, end = 0, None, -1, 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if depth == 1:
            if tok in (",", "}", "]"):
                if start >= 0:
                    raw = text[start:end]
                    items.append((key or "", None if raw == "null" else raw))
                key, start = None, -1
            elif kind == "{" and key is None:
                key = _scrub(json.loads(tok))
            elif tok != ":" and start < 0:
                start = m.start()
        if tok in ("{", "["):
            depth += 1
        elif tok in ("}", "]"):
            depth -= 1
        end = m.end()
    return kind, items


def _scrub(s: str) -> str:
    return gojson.SURROGATES.sub("\ufffd", s)


class Node:
    """One lazyNode: raw JSON text (or a decoded value of the current object), parsed on demand."""

    __slots__ = ("_raw", "ary", "doc", "value", "which")

    def __init__(self, raw: str | None = None, value: Any = _UNSET) -> None:
        self._raw = raw
        self.value = value  # a decoded value of the current object, standing for its encoding
        self.doc: dict[str, Node | None] | None = None
        self.ary: list[Node | None] | None = None
        self.which = RAW

    @classmethod
    def of(cls, value: Any) -> Node | None:
        """The node of a decoded value (None, JSON null, is a missing node)."""
        return None if value is None else cls(value=value)

    # -- raw text --------------------------------------------------------------------------------

    @property
    def raw(self) -> str | None:
        if self.value is not _UNSET:
            return gojson.marshal(self.value)
        return self._raw

    def is_array(self) -> bool:
        """findObject's isArray(*node.raw): dereferences the raw pointer."""
        if self.value is not _UNSET:
            return isinstance(self.value, list)
        if self._raw is None:
            raise ServerPanic(NIL_DEREF)
        stripped = self._raw.lstrip(" \n\t")
        return stripped.startswith("[")

    # -- parsing ---------------------------------------------------------------------------------

    def _parse(self, want: str) -> bool:
        """json.Unmarshal of the raw text into a map (want=DOC) or a slice (want=ARY)."""
        if self.value is not _UNSET:
            if want == DOC and isinstance(self.value, dict):
                self.doc = {k: Node.of(v) for k, v in self.value.items()}
            elif want == ARY and isinstance(self.value, list):
                self.ary = [Node.of(v) for v in self.value]
            else:
                return False
            self.which = want
            return True
        if self._raw is None:
            return False
        text = self._raw.strip(" \t\r\n")
        if text == "null":  # Unmarshal of null leaves a nil map or slice
            if want == DOC:
                self.doc = None
            else:
                self.ary = None
            self.which = want
            return True
        if not text.startswith("{" if want == DOC else "["):
            return False
        _, items = _split(text)
        if want == DOC:
            self.doc = {k: (None if v is None else Node(v)) for k, v in items}
        else:
            self.ary = [None if v is None else Node(v) for _, v in items]
        self.which = want
        return True

    def into_doc(self) -> dict[str, Node | None] | None:
        if self.which == DOC:
            return self.doc
        if self.value is _UNSET and self._raw is None:
            raise NotContainer("invalid state detected")
        if not self._parse(DOC):
            raise NotContainer("not an object")
        return self.doc

    def into_ary(self) -> list[Node | None] | None:
        if self.which == ARY:
            return self.ary
        if self.value is _UNSET and self._raw is None:
            raise NotContainer("invalid state detected")
        if not self._parse(ARY):
            raise NotContainer("not an array")
        return self.ary

    def try_doc(self) -> bool:
        return self._parse(DOC)

    def try_ary(self) -> bool:
        return self._parse(ARY)

    # -- comparing (lazyNode.equal) ----------------------------------------------------------------

    def compact_raw(self) -> str | None:
        raw = self.raw
        return None if raw is None else compact(raw)

    def equal(self, other: Node | None) -> bool:
        if other is None:
            raise ServerPanic(NIL_DEREF)
        if self.which == RAW and not self.try_doc() and not self.try_ary():
            if other.which != RAW:
                return False
            return (self.compact_raw() or "") == (other.compact_raw() or "")
        if self.which == DOC:
            if other.which == RAW and not other.try_doc():
                return False
            if other.which != DOC:
                return False
            mine, theirs = self.doc or {}, other.doc or {}
            if len(mine) != len(theirs):
                return False
            for key, child in mine.items():
                if key not in theirs:
                    return False
                their_child = theirs[key]
                if (child is None) != (their_child is None):
                    return False
                if child is not None and not child.equal(their_child):
                    return False
            return True
        if other.which != ARY and not other.try_ary():
            return False
        mine_list, theirs_list = self.ary or [], other.ary or []
        if len(mine_list) != len(theirs_list):
            return False
        for child, their_child in zip(mine_list, theirs_list, strict=True):
            if child is None:
                raise ServerPanic(NIL_DEREF)
            if not child.equal(their_child):
                return False
        return True

    # -- writing ---------------------------------------------------------------------------------

    def marshal(self) -> str:
        """json.Marshal of the node: raw text compacted and HTML-escaped, parsed levels re-encoded."""
        if self.which == RAW:
            if self.value is not _UNSET:
                return gojson.marshal(self.value)
            return "null" if self._raw is None else gojson.html_escape(compact(self._raw))
        if self.which == DOC:
            if self.doc is None:
                return "null"
            return "{" + ",".join(f"{gojson.marshal_string(k)}:{marshal(self.doc[k])}" for k in sorted(self.doc)) + "}"
        if self.ary is None:
            return "null"
        return "[" + ",".join(marshal(child) for child in self.ary) + "]"

    def to_value(self) -> Any:
        """The decoded value of the node, as Go would decode its encoding (PreserveInts)."""
        if self.which == RAW:
            if self.value is not _UNSET:
                return copy.deepcopy(self.value)
            if self._raw is None:
                return None
            value, _ = gojson.loads(self._raw.encode("utf-8", errors="surrogateescape"))
            return gojson.without_bad_numbers(value) if "e" in self._raw or "E" in self._raw else value
        if self.which == DOC:
            return None if self.doc is None else {k: to_value(self.doc[k]) for k in sorted(self.doc)}
        return None if self.ary is None else [to_value(child) for child in self.ary]


def marshal(node: Node | None) -> str:
    return "null" if node is None else node.marshal()


def to_value(node: Node | None) -> Any:
    return None if node is None else node.to_value()


def deep_copy(node: Node | None) -> tuple[Node | None, int]:
    """deepCopy: the node re-encoded and the size of that encoding in bytes."""
    if node is None:
        return None, 0
    text = node.marshal()
    return Node(text), len(text.encode("utf-8", errors="surrogateescape"))


def parse_text(data: bytes) -> str:
    """Patch bytes as text for raw nodes (Go keeps the bytes; invalid UTF-8 decodes as U+FFFD later)."""
    return data.decode("utf-8", errors="replace")


def split(text: str) -> tuple[str, list[tuple[str, str | None]]]:
    """The kind ('{' or '[') and members of a JSON object or array text."""
    return _split(text)
