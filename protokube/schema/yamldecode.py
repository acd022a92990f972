"""YAML bodies → the plain values JSON parsing gives, as kube-apiserver reads them (sigs.k8s.io/yaml
over go-yaml v2: only the first document, duplicate keys reported as strict decoding does).

go-yaml is a port of LibYAML, so LibYAML's event stream (PyYAML's C parser) fails where go-yaml
fails, with its messages. The values are built straight from the events, without a node tree: an
anchored value is built once and an alias shares it. Aliases are counted as go-yaml counts them —
every node a full expansion would visit — and a document is refused only when the share of
visits through aliases passes go-yaml's limit ("document contains excessive aliasing"); a
document without aliases is never refused for its size. The work is bounded by the body's size.
Requires PyYAML built with LibYAML (its wheels are).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml import events
from yaml.cyaml import CParser

from protokube.schema.jsondecode import DecodeError, go_base64

MAX_DEPTH = 500
DEPTH_EXCEEDED = "yaml: exceeded max depth"

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_BINARY = "tag:yaml.org,2002:binary"
_SCALARS = ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


# YAML 1.1's implicit types by a plain scalar's first character, without timestamps (go-yaml leaves
# them strings when decoding into interface{}).
_IMPLICIT = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_BOOL = "tag:yaml.org,2002:bool"
# go-yaml v2 resolves these single letters as booleans too (resolve.go), keys and values; PyYAML does not.
_LETTER_BOOLS = {"y": True, "Y": True, "n": False, "N": False}


@dataclass
class Document:
    """A YAML body's value and what strict decoding reports: ``line 5: key "name" already set in map``."""

    value: Any
    duplicates: list[str] = field(default_factory=list)


def parse(body: bytes) -> Document:
    """The first document of a YAML body as JSON values (DecodeError worded as go-yaml's)."""
    parser = CParser(body)
    try:
        return _Builder().build(parser)
    except yaml.YAMLError as err:
        raise DecodeError(_message(err)) from None
    finally:
        parser.dispose()


def _message(err: yaml.YAMLError) -> str:
    """go-yaml's wording: its line is the problem's (0-based, +1 for scanner errors), else the context's."""
    if isinstance(err, yaml.reader.ReaderError):
        return f"yaml: {err.reason}"
    if not isinstance(err, yaml.MarkedYAMLError):
        return f"yaml: {err}"
    line = 0
    if err.problem_mark is not None and err.problem_mark.line:
        line = err.problem_mark.line + isinstance(err, yaml.scanner.ScannerError)
    elif err.context_mark is not None:
        line = err.context_mark.line
    return f"yaml: {f'line {line}: ' if line else ''}{err.problem or 'unknown problem parsing YAML content'}"


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's share of decoded nodes that may come through aliases: 99% up to 400,000 nodes,
    falling linearly to 10% at 4,000,000."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


_MERGE_KEY = object()  # a "<<" key: its value's pairs are merged into the mapping
_WANT_MAP = "yaml: map merge requires map or sequence of maps as the value"
_NO_KEY = object()  # a mapping frame waiting for its next key
_OPEN = object()  # an anchor whose node is still being built


class _Frame:
    """A sequence or mapping being built; ``size`` counts the nodes its full expansion visits."""

    __slots__ = ("anchor", "is_list", "key", "line", "size", "value")

    def __init__(self, value: list | dict, anchor: str | None, size: int, line: int) -> None:
        self.value = value
        self.is_list = isinstance(value, list)
        self.anchor = anchor
        self.size = size
        self.line = line
        self.key: Any = _NO_KEY


class _Builder:
    """Values from events. A failure go-yaml finds while decoding (after parsing the document) is
    kept and raised once the document has parsed, so a later syntax error is reported first."""

    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}  # name → (value, size) or _OPEN
        self.decoded = 1  # the document node
        self.aliased = 0
        self.duplicates: list[str] = []
        self.failure = ""
        self.result: Any = None

    def build(self, parser: CParser) -> Document:
        parser.get_event()  # the stream's start
        if isinstance(parser.get_event(), events.StreamEndEvent):
            return Document(None)
        handlers = {
            events.ScalarEvent: self.scalar,
            events.AliasEvent: self.alias,
            events.SequenceStartEvent: self.start,
            events.MappingStartEvent: self.start,
            events.SequenceEndEvent: self.end,
            events.MappingEndEvent: self.end,
        }
        event = parser.get_event()
        while not isinstance(event, events.DocumentEndEvent):
            handlers[type(event)](event)
            event = parser.get_event()
        if self.failure:
            raise DecodeError(self.failure)
        return Document(self.result, self.duplicates)

    def fail(self, message: str) -> None:
        self.failure = self.failure or message

    def count(self, nodes: int, aliased: int = 0) -> None:
        self.decoded += nodes
        self.aliased += aliased
        aliasing = self.aliased > 100 and self.decoded > 1000
        if aliasing and self.aliased / self.decoded > _allowed_alias_ratio(self.decoded):
            self.fail("yaml: document contains excessive aliasing")

    def expecting(self, key: Any) -> bool:
        """Whether the next node is a mapping's key (_NO_KEY) or the value of a ``<<`` key (_MERGE_KEY)."""
        return bool(self.stack) and not self.stack[-1].is_list and self.stack[-1].key is key

    def scalar(self, event: events.ScalarEvent) -> None:
        try:
            value = _scalar(event)
        except _Undecodable as err:
            self.fail(str(err))
            value = None
        size = 1
        if value is _MERGE_KEY:
            if self.expecting(_NO_KEY):
                size = 0  # go-yaml does not decode a merge key
            else:
                value = event.value  # "<<" is special only as a key
        self.decoded += size
        if self.aliased > 100:
            self.count(0)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, size)
        self.add(value, size, event.start_mark.line + 1)

    def alias(self, event: events.AliasEvent) -> None:
        target = self.anchors.get(event.anchor)
        if target is None:
            raise DecodeError(f"yaml: unknown anchor '{event.anchor}' referenced")
        if target is _OPEN:
            self.fail(f"yaml: anchor '{event.anchor}' value contains itself")
            target = (None, 0)
        value, size = target
        if isinstance(value, list) and self.expecting(_MERGE_KEY):
            self.fail(_WANT_MAP)
        self.count(1)
        self.count(size, size)
        self.add(value, 1 + size, event.start_mark.line + 1)

    def start(self, event: events.CollectionStartEvent) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise DecodeError(DEPTH_EXCEEDED)
        is_list = isinstance(event, events.SequenceStartEvent)
        size = 0 if is_list and self.expecting(_MERGE_KEY) else 1
        self.count(size)
        if event.anchor is not None:
            self.anchors[event.anchor] = _OPEN
        self.stack.append(_Frame([] if is_list else {}, event.anchor, size, event.start_mark.line + 1))

    def end(self, event: events.CollectionEndEvent) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (frame.value, frame.size)
        self.add(frame.value, frame.size, frame.line)

    def add(self, value: Any, size: int, line: int) -> None:
        """A finished node: the document's value, a sequence's item, a mapping's key or value."""
        if not self.stack:
            self.result = value
            return
        frame = self.stack[-1]
        frame.size += size
        if frame.is_list:
            frame.value.append(value)
        elif frame.key is _NO_KEY:
            frame.key = value
        else:
            key, frame.key = frame.key, _NO_KEY
            if key is _MERGE_KEY:
                self.merge(frame.value, value, line)
            else:
                self.set(frame.value, key, value, line)

    def set(self, mapping: dict, key: Any, value: Any, line: int) -> None:
        """Set a pair (the last of equal keys wins) and report a duplicate as strict decoding does."""
        if isinstance(key, list | dict):
            self.fail(f"yaml: invalid map key: {json.dumps(key)}")
            return
        name = _key_text(key)
        if name in mapping:
            shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else name
            self.duplicates.append(f"line {line}: key {shown} already set in map")
        mapping[name] = value

    def merge(self, mapping: dict, value: Any, line: int) -> None:
        """go-yaml's merge: a mapping's pairs, or those of a sequence of mappings (earlier ones win)."""
        sources = reversed(value) if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                self.fail(_WANT_MAP)
                return
            for key, item in source.items():
                self.set(mapping, key, item, line)


class _Undecodable(Exception):
    """A scalar go-yaml parses but cannot decode (or JSON cannot hold): reported after parsing."""


def _scalar(event: events.ScalarEvent) -> Any:
    """A scalar's value: a plain one's implicit YAML 1.1 type, a quoted or block one's text."""
    value = event.value
    if event.tag is not None:
        return _tagged(event.tag, value)
    if event.implicit[0]:
        if value in _LETTER_BOOLS:
            return _LETTER_BOOLS[value]
        for tag, regexp in _IMPLICIT.get(value[:1], ()):
            if regexp.match(value):
                return _tagged(tag, value)
    return value


def _tagged(tag: str, value: str) -> Any:
    """A scalar of a (resolved or explicit) tag; a tag go-yaml cannot resolve leaves the text."""
    if tag == _MERGE:
        return _MERGE_KEY
    if tag == _BINARY:
        try:
            return go_base64(value).decode("utf-8", "replace")
        except ValueError:
            raise _Undecodable("yaml: !!binary value contains invalid base64 data") from None
    if tag not in _SCALARS:
        return value
    if tag == _BOOL and value in _LETTER_BOOLS:
        return _LETTER_BOOLS[value]
    try:
        typed = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, value))
    except (ValueError, KeyError):
        found = next((t for t, regexp in _IMPLICIT.get(value[:1], ()) if regexp.match(value)), _STR)
        raise _Undecodable(f"yaml: cannot decode {_short(found)} `{value}` as a {_short(tag)}") from None
    if isinstance(typed, float) and not math.isfinite(typed):
        raise _Undecodable(f"json: unsupported value: {_go_float(typed)}")
    return typed


def _short(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


def _go_float(value: float) -> str:
    return "NaN" if value != value else ("+Inf" if value > 0 else "-Inf")


def _key_text(key: Any) -> str:
    """A mapping key as JSON's string key."""
    if isinstance(key, str):
        return key
    return str(key).lower() if isinstance(key, bool) else str(key)
