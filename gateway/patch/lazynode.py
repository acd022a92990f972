"""The document model of gopkg.in/evanphx/json-patch.v4 (v4.12.0), which kube-apiserver 1.32 uses
for JSON patch and JSON merge patch.

A node holds a JSON value as raw text and is parsed one level at a time, on first need, into an
object (``doc``) or an array (``ary``) of child nodes. This is observable: scalars compare by their
compacted raw text (``1`` is not ``1.0``, ``"<"`` is not the ``"\\u003c"`` Go's encoder wrote), an
object that was never touched keeps the member order it had, a touched one is written with sorted
keys. JSON ``null`` inside an object or array is a missing node (``None``); an operation's explicit
``"value": null`` is a node whose raw text is absent (Go: a nil ``*json.RawMessage``).

Nodes of the current object start from its decoded values (their raw text is what Go's encoder
writes for them), so the object is not encoded and parsed again. A text is scanned once, the first
time one of its levels is parsed, for where every object and array of it has its members: a child
node is a span of its parent's text. Walks over nodes keep their own stack (documents nest up to
10,000 levels).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import protokube.gateway.patch.gojson as gojson
from protokube.gateway.patch.gofmt import NIL_DEREF, ServerPanic
from protokube.schema import deep

RAW, DOC, ARY = "raw", "doc", "ary"

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')
_WHITESPACE = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\r\n]+')
_LEADING_SPACE = re.compile(r"[ \t\r\n]*")
_UNSET = object()

Span = tuple[str, int, int]  # a member's key ("" in an array) and where its raw text starts and ends


class NotContainer(Exception):
    """The node's JSON is not an object (or not an array) — json.Unmarshal failed."""


def compact(text: str) -> str:
    """json.Compact: insignificant whitespace removed, nothing else changed."""
    return _WHITESPACE.sub(lambda m: m.group(1) or "", text)


class _Source:
    """A JSON text, and where the members of each of its objects and arrays are (by the position of
    the ``{`` or ``[``), found in one pass when first asked for."""

    __slots__ = ("_members", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._members: dict[int, list[Span]] | None = None

    def members(self, start: int) -> list[Span]:
        if self._members is None:
            self._members = _scan(self.text)
        return self._members[start]


def _scan(text: str) -> dict[int, list[Span]]:
    """The members of every object and array of ``text``: a member's raw text runs from its first
    token to the end of its last (a nested value's closing bracket)."""
    found: dict[int, list[Span]] = {}
    # The open objects and arrays, innermost last: [is an object, members, key, start, end].
    stack: list[list[Any]] = []
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if stack:
            top = stack[-1]
            if tok in (",", "}", "]"):
                if top[3] >= 0:
                    top[1].append((top[2] or "", top[3], top[4]))
                top[2], top[3] = None, -1
            elif top[0] and top[2] is None:
                top[2] = gojson.SURROGATES.sub("\ufffd", json.loads(tok))
            elif tok != ":" and top[3] < 0:
                top[3] = m.start()
        if tok in ("{", "["):
            members: list[Span] = []
            found[m.start()] = members
            stack.append([tok == "{", members, None, -1, m.end()])
        elif tok in ("}", "]") and stack:
            stack.pop()
            if stack:
                stack[-1][4] = m.end()
        elif stack:
            stack[-1][4] = m.end()
    return found


def _is_null(text: str, start: int, end: int) -> bool:
    return end - start == 4 and text.startswith("null", start)


class Node:
    """One lazyNode: raw JSON text (or a decoded value of the current object), parsed on demand."""

    __slots__ = ("_end", "_source", "_start", "ary", "doc", "value", "which")

    def __init__(self, raw: str | None = None, value: Any = _UNSET) -> None:
        self._source = None if raw is None else _Source(raw)
        self._start, self._end = 0, 0 if raw is None else len(raw)
        self.value = value  # a decoded value of the current object, standing for its encoding
        self.doc: dict[str, Node | None] | None = None
        self.ary: list[Node | None] | None = None
        self.which = RAW

    @classmethod
    def of(cls, value: Any) -> Node | None:
        """The node of a decoded value (None, JSON null, is a missing node)."""
        return None if value is None else cls(value=value)

    @classmethod
    def _member(cls, source: _Source, start: int, end: int) -> Node | None:
        """The node of a member of a parsed text (None for null)."""
        if _is_null(source.text, start, end):
            return None
        node = cls()
        node._source, node._start, node._end = source, start, end
        return node

    # -- raw text --------------------------------------------------------------------------------

    @property
    def raw(self) -> str | None:
        if self.value is not _UNSET:
            return gojson.marshal(self.value)
        return None if self._source is None else self._source.text[self._start : self._end]

    def _bounds(self) -> tuple[int, int]:
        """Where the raw text's value starts and ends (whitespace around it left out)."""
        assert self._source is not None
        text, end = self._source.text, self._end
        start = _LEADING_SPACE.match(text, self._start, end).end()  # type: ignore[union-attr]
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
        return start, end

    def is_array(self) -> bool:
        """findObject's isArray(*node.raw): dereferences the raw pointer."""
        if self.value is not _UNSET:
            return isinstance(self.value, list)
        if self._source is None:
            raise ServerPanic(NIL_DEREF)
        text = self._source.text
        start = self._start
        while start < self._end and text[start] in " \n\t":
            start += 1
        return text.startswith("[", start, self._end)

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
        source = self._source
        if source is None:
            return False
        start, end = self._bounds()
        if _is_null(source.text, start, end):  # Unmarshal of null leaves a nil map or slice
            if want == DOC:
                self.doc = None
            else:
                self.ary = None
            self.which = want
            return True
        if not source.text.startswith("{" if want == DOC else "[", start, end):
            return False
        members = source.members(start)
        if want == DOC:
            self.doc = {k: Node._member(source, s, e) for k, s, e in members}
        else:
            self.ary = [Node._member(source, s, e) for _, s, e in members]
        self.which = want
        return True

    def into_doc(self) -> dict[str, Node | None] | None:
        if self.which == DOC:
            return self.doc
        if self.value is _UNSET and self._source is None:
            raise NotContainer("invalid state detected")
        if not self._parse(DOC):
            raise NotContainer("not an object")
        return self.doc

    def into_ary(self) -> list[Node | None] | None:
        if self.which == ARY:
            return self.ary
        if self.value is _UNSET and self._source is None:
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
        """lazyNode.equal, level by level in upstream's order (it parses what it compares)."""
        steps = [_equal_steps(self, other)]
        while steps:
            pair = next(steps[-1], _DONE)
            if pair is _DONE:
                steps.pop()
            elif pair is None:
                return False
            else:
                steps.append(_equal_steps(*pair))
        return True

    # -- writing ---------------------------------------------------------------------------------

    def marshal(self) -> str:
        """json.Marshal of the node: raw text compacted and HTML-escaped, parsed levels re-encoded."""
        out: list[str] = []
        stack: list[Node | _Text | None] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, _Text):
                out.append(item)
            elif item is None:
                out.append("null")
            elif item.which == RAW:
                out.append(item._marshal_raw())
            elif (item.doc if item.which == DOC else item.ary) is None:
                out.append("null")
            elif item.which == DOC:
                assert item.doc is not None
                keys = sorted(item.doc)
                out.append("{")
                stack.append(_Text("}"))
                for i in range(len(keys) - 1, -1, -1):
                    stack.append(item.doc[keys[i]])
                    stack.append(_Text(("," if i else "") + gojson.marshal_string(keys[i]) + ":"))
            else:
                assert item.ary is not None
                out.append("[")
                stack.append(_Text("]"))
                for i in range(len(item.ary) - 1, -1, -1):
                    stack.append(item.ary[i])
                    if i:
                        stack.append(_Text(","))
        return "".join(out)

    def _marshal_raw(self) -> str:
        if self.value is not _UNSET:
            return gojson.marshal(self.value)
        raw = self.raw
        return "null" if raw is None else gojson.html_escape(compact(raw))

    def to_value(self) -> Any:
        """The decoded value of the node, as Go would decode its encoding (PreserveInts)."""
        root: list[Any] = [None]
        stack: list[tuple[Node | None, Any, Any]] = [(self, root, 0)]  # (node, container of its value, key)
        while stack:
            node, target, key = stack.pop()
            if node is None:
                target[key] = None
            elif node.which == RAW:
                target[key] = node._raw_value()
            elif node.which == DOC:
                target[key] = None if node.doc is None else {k: None for k in sorted(node.doc)}
                if node.doc is not None:
                    stack.extend((node.doc[k], target[key], k) for k in target[key])
            else:
                target[key] = None if node.ary is None else [None] * len(node.ary)
                if node.ary is not None:
                    stack.extend((child, target[key], i) for i, child in enumerate(node.ary))
        return root[0]

    def _raw_value(self) -> Any:
        if self.value is not _UNSET:
            return deep.copy(self.value)
        raw = self.raw
        if raw is None:
            return None
        value, _ = gojson.loads(raw.encode("utf-8", errors="surrogateescape"))
        return gojson.without_bad_numbers(value) if "e" in raw or "E" in raw else value


class _Text(str):
    """Text ``Node.marshal`` appends as it is."""


_DONE = object()


def _equal_steps(node: Node, other: Node | None) -> Iterator[tuple[Node, Node] | None]:
    """``node.equal(other)`` one level at a time: yields the pairs of children to compare before it
    goes on, or None for a difference."""
    if other is None:
        raise ServerPanic(NIL_DEREF)
    if node.which == RAW and not node.try_doc() and not node.try_ary():
        if other.which != RAW or (node.compact_raw() or "") != (other.compact_raw() or ""):
            yield None
        return
    if node.which == DOC:
        if (other.which == RAW and not other.try_doc()) or other.which != DOC:
            yield None
            return
        mine, theirs = node.doc or {}, other.doc or {}
        if len(mine) != len(theirs):
            yield None
            return
        for key, child in mine.items():
            if key not in theirs or (child is None) != (theirs[key] is None):
                yield None
                return
            if child is not None:
                yield child, theirs[key]  # type: ignore[misc]
        return
    if other.which != ARY and not other.try_ary():
        yield None
        return
    mine_list, theirs_list = node.ary or [], other.ary or []
    if len(mine_list) != len(theirs_list):
        yield None
        return
    for child, their_child in zip(mine_list, theirs_list, strict=True):
        if child is None:
            raise ServerPanic(NIL_DEREF)
        yield child, their_child  # type: ignore[misc]


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
    """The kind ('{' or '[') and members of a JSON object or array text, as raw texts (None for null)."""
    source = _Source(text)
    start = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]
    members = [(k, None if _is_null(text, s, e) else text[s:e]) for k, s, e in source.members(start)]
    return text[start], members
