"""Field paths and sets of them, and their FieldsV1 form (sigs.k8s.io/structured-merge-diff/v4/fieldpath).

A path element is a small tuple ``(kind, payload)`` whose natural ordering is upstream's
PathElement.Compare (field names < keys < values < indexes):

- ``(FIELD, "name")``                      ``.name``              ``f:name``
- ``(KEY, (("name", canon), ...))``        ``[name="c"]``         ``k:{"name":"c"}`` (keys sorted by name)
- ``(VALUE, canon)``                       ``[="x"]``             ``v:"x"``
- ``(INDEX, 3)``                           ``[3]``                ``i:3``

``canon`` is a value's canonical key (values.canonical), so ``v:1`` and ``v:1.0`` are one element,
as in upstream. A ``Set`` is upstream's trie: ``members`` are the paths that end here, ``children``
the subtrees; an element can be both (a list item owned as a whole and some of its fields).
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import orjson

from gateway.fieldmanager.values import (
    JSON,
    canonical,
    from_canonical,
    go_json,
    go_json_string,
    to_string,
)

FIELD, KEY, VALUE, INDEX = 0, 1, 2, 3

PathElement = tuple[int, Any]
Path = tuple[PathElement, ...]


class FieldsV1Error(ValueError):
    """A FieldsV1 document that upstream's Set.FromJSON rejects."""


def field(name: str) -> PathElement:
    return (FIELD, name)


def key(**fields: JSON) -> PathElement:
    """A map-list item by its key fields, e.g. ``key(name="c")``."""
    return key_of(fields.items())


def key_of(pairs: Any) -> PathElement:
    return (KEY, tuple(sorted(((name, canonical(v)) for name, v in pairs), key=lambda p: p[0])))


def value(v: JSON) -> PathElement:
    return (VALUE, canonical(v))


def index(i: int) -> PathElement:
    return (INDEX, i)


def make_path(*parts: str | int | PathElement) -> Path:
    """upstream's MakePathOrDie: strings are field names, ints indexes, tuples path elements."""
    out: list[PathElement] = []
    for p in parts:
        if isinstance(p, str):
            out.append((FIELD, p))
        elif isinstance(p, int):
            out.append((INDEX, p))
        else:
            out.append(p)
    return tuple(out)


def element_string(pe: PathElement) -> str:
    """upstream's PathElement.String: ``.name``, ``[name="c",port=80]``, ``[="x"]``, ``[0]``."""
    kind, payload = pe
    if kind == FIELD:
        return "." + payload
    if kind == KEY:
        return "[" + ",".join(f"{name}={to_string(from_canonical(v))}" for name, v in payload) + "]"
    if kind == VALUE:
        return f"[={to_string(from_canonical(payload))}]"
    return f"[{payload}]"


def path_string(path: Path) -> str:
    return "".join(element_string(pe) for pe in path)


# --- FieldsV1 keys (serialize-pe.go) -----------------------------------------------------------


@functools.lru_cache(maxsize=16384)
def serialize_element(pe: PathElement) -> str:
    """upstream's SerializePathElement: ``f:name``, ``k:{"name":"c"}``, ``v:"x"``, ``i:0``."""
    kind, payload = pe
    if kind == FIELD:
        return "f:" + payload
    if kind == KEY:
        return "k:{" + ",".join(go_json_string(n) + ":" + go_json(from_canonical(v)) for n, v in payload) + "}"
    if kind == VALUE:
        return "v:" + go_json(from_canonical(payload))
    return f"i:{payload}"


_INT = re.compile(r"[+-]?[0-9]+\Z")
_DECODER = json.JSONDecoder()


class _Unknown(Exception):
    """A key of a type this version does not know (upstream: ErrUnknownPathElementType, skipped)."""


def _json_prefix(text: str) -> JSON:
    """The first JSON value of ``text`` (json-iterator reads one value and ignores the rest)."""
    try:
        return _DECODER.raw_decode(text.lstrip(" \t\r\n"))[0]
    except ValueError as e:
        raise FieldsV1Error(str(e)) from None


def deserialize_element(text: str) -> PathElement:
    """upstream's DeserializePathElement."""
    if len(text) < 2:
        raise FieldsV1Error("key must be 2 characters long:")
    if text[1] != ":":
        raise FieldsV1Error(f"missing colon: {text}")
    kind, rest = text[0], text[2:]
    if kind == "f":
        return (FIELD, rest)
    if kind == "v":
        return (VALUE, canonical(_json_prefix(rest)))
    if kind == "k":
        obj = _json_prefix(rest)
        if not isinstance(obj, dict):
            raise FieldsV1Error(f"ReadObjectCB: expect {{ or n, but found {rest[:1]}")
        return key_of(obj.items())
    if kind == "i":
        if not _INT.match(rest):
            raise FieldsV1Error(f'strconv.Atoi: parsing "{rest}": invalid syntax')
        return (INDEX, int(rest))
    raise _Unknown


# --- Sets (set.go) -----------------------------------------------------------------------------


class Set:
    """A set of paths as a trie. Treat sets returned by operations and by decoding as read-only: they
    share nodes, and decoded sets are cached (with their FieldsV1 bytes and derived facts in ``memo``)."""

    __slots__ = ("children", "members", "memo", "v1")

    def __init__(self, members: set[PathElement] | None = None, children: dict[PathElement, Set] | None = None):
        self.members: set[PathElement] = members if members is not None else set()
        self.children: dict[PathElement, Set] = children if children is not None else {}
        self.v1: bytes | None = None  # the canonical FieldsV1 object as (orjson) JSON bytes, when known
        self.memo: dict[Any, Any] | None = None  # facts computed from this (read-only) set

    @classmethod
    def of(cls, *paths: Path) -> Set:
        s = cls()
        for p in paths:
            s.insert(p)
        return s

    def insert(self, path: Path) -> None:
        if not path:
            return
        self.v1 = self.memo = None
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = Set()
            node = child
        node.members.add(path[-1])

    def descend(self, pe: PathElement) -> Set:
        self.v1 = self.memo = None
        child = self.children.get(pe)
        if child is None:
            child = self.children[pe] = Set()
        return child

    def has(self, path: Path) -> bool:
        if not path:
            return False
        node: Set | None = self
        for pe in path[:-1]:
            node = node.children.get(pe)  # type: ignore[union-attr]
            if node is None:
                return False
        return path[-1] in node.members  # type: ignore[union-attr]

    def empty(self) -> bool:
        return not self.members and all(c.empty() for c in self.children.values())

    def size(self) -> int:
        return len(self.members) + sum(c.size() for c in self.children.values())

    def with_prefix(self, pe: PathElement) -> Set:
        return self.children.get(pe) or Set()

    def is_subset_of(self, other: Set) -> bool:
        if not self.members <= other.members:
            return False
        for pe, mine in self.children.items():
            theirs = other.children.get(pe)
            if theirs is None:
                if not mine.empty():
                    return False
            elif not mine.is_subset_of(theirs):
                return False
        return True

    def union(self, other: Set) -> Set:
        """The paths of both (one of them itself when it holds the other: unchanged sets keep their
        cached FieldsV1)."""
        if not other.members and not other.children:
            return self
        if not self.members and not self.children:
            return other
        if other.is_subset_of(self) and other.children.keys() <= self.children.keys():
            return self
        if self.is_subset_of(other) and self.children.keys() <= other.children.keys():
            return other
        children = dict(self.children)
        for pe, theirs in other.children.items():
            mine = children.get(pe)
            children[pe] = theirs if mine is None else mine.union(theirs)
        return Set(self.members | other.members, children)

    def intersection(self, other: Set) -> Set:
        children = {}
        small, large = (self.children, other.children)
        for pe, mine in small.items():
            theirs = large.get(pe)
            if theirs is not None:
                both = mine.intersection(theirs)
                if not both.empty():
                    children[pe] = both
        return Set(self.members & other.members, children)

    def difference(self, other: Set) -> Set:
        """The paths of this set that ``other`` lacks (``self`` itself when that is all of them)."""
        if not other.members and not other.children:
            return self
        members = self.members - other.members if other.members else self.members
        changed = len(members) != len(self.members)
        children = {}
        for pe, mine in self.children.items():
            theirs = other.children.get(pe)
            if theirs is None:
                children[pe] = mine
                continue
            rest = mine.difference(theirs)
            if rest is not mine:
                changed = True
            if not rest.empty():
                children[pe] = rest
            else:
                changed = True
        return Set(members, children) if changed else self

    def recursive_difference(self, other: Set) -> Set:
        """Removes ``other``'s members with everything under them, and ``other``'s paths."""
        members = self.members - other.members if other.members else self.members
        changed = len(members) != len(self.members)
        children = {}
        for pe, mine in self.children.items():
            if pe in other.members:
                changed = True
                continue
            theirs = other.children.get(pe)
            if theirs is None:
                children[pe] = mine
                continue
            rest = mine.recursive_difference(theirs)
            if rest is not mine:
                changed = True
            if not rest.empty():
                children[pe] = rest
            else:
                changed = True
        return Set(members, children) if changed else self

    def leaves(self) -> Set:
        """The members that have no children, at every level."""
        return Set(
            {pe for pe in self.members if pe not in self.children},
            {pe: c.leaves() for pe, c in self.children.items()},
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Set):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    def iterate(self, prefix: Path = ()) -> Iterator[Path]:
        """Every path, in upstream's order: this node's members sorted, then each child sorted."""
        for pe in sorted(self.members):
            yield (*prefix, pe)
        for pe in sorted(self.children):
            yield from self.children[pe].iterate((*prefix, pe))

    def __iter__(self) -> Iterator[Path]:
        return self.iterate()

    def __str__(self) -> str:
        return "\n".join(path_string(p) for p in self.iterate())

    def __repr__(self) -> str:
        return f"Set({[path_string(p) for p in self.iterate()]})"

    # --- FieldsV1 ---

    def to_fields_v1(self) -> dict[str, Any]:
        """The FieldsV1 JSON object, keys in upstream's order (emitContentsV1). A fresh object.

        The set becomes read-only: it is remembered so that decoding these FieldsV1 again (the next
        write of the object) costs nothing."""
        if self.v1 is not None:
            return orjson.loads(self.v1)
        fields = _emit(self, include_self=False)
        self.v1 = orjson.dumps(fields)
        _CACHE.remember(self.v1, self)
        return fields

    def to_json(self) -> bytes:
        """The FieldsV1 bytes exactly as upstream's Set.ToJSON writes them (Go's escaping included)."""
        return _emit_json(self, include_self=False).encode()

    @classmethod
    def from_fields_v1(cls, fields: Any) -> Set:
        """upstream's Set.FromJSON over a FieldsV1 JSON object (already parsed). The result is shared
        with other decodings of the same FieldsV1: read-only."""
        try:
            text = orjson.dumps(fields)
        except (TypeError, orjson.JSONEncodeError):
            text = b""
        cached = _CACHE.get(text) if text else None
        if cached is not None:
            return cached
        found, _ = _read(fields)
        s = found or cls()
        if text:
            s.v1 = orjson.dumps(_emit(s, include_self=False))
            _CACHE.remember(text, s)
        return s

    @classmethod
    def from_json(cls, data: bytes | str) -> Set:
        try:
            parsed = json.loads(data)
        except ValueError as e:
            raise FieldsV1Error(str(e)) from None
        return cls.from_fields_v1(parsed)


class _SetCache:
    """Decoded FieldsV1 by their JSON bytes (least recently used first out): objects are written
    again and again with the same managers. A set takes about ten times the memory of its JSON, so
    only sets of at most 8 KiB of JSON are kept, 512 of them (tens of MB at worst; a typical Pod's
    three managers take ~30 KB)."""

    MAX_ENTRIES = 512
    MAX_BYTES = 8192

    def __init__(self) -> None:
        self._sets: OrderedDict[bytes, Set] = OrderedDict()

    def get(self, text: bytes) -> Set | None:
        s = self._sets.get(text)
        if s is not None:
            self._sets.move_to_end(text)
        return s

    def remember(self, text: bytes, s: Set) -> None:
        if len(text) > self.MAX_BYTES:
            return
        self._sets[text] = s
        self._sets.move_to_end(text)
        if len(self._sets) > self.MAX_ENTRIES:
            self._sets.popitem(last=False)

    def clear(self) -> None:
        self._sets.clear()


_CACHE = _SetCache()


def _ordered(s: Set) -> Iterator[tuple[PathElement, bool, Set | None]]:
    """Members and children merged in order: (element, is member, child set or None)."""
    for pe in sorted(s.members | s.children.keys()):
        yield pe, pe in s.members, s.children.get(pe)


def _emit(s: Set, include_self: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if include_self and (s.members or s.children):
        out["."] = {}
    children = s.children
    if not children:
        for pe in sorted(s.members):
            out[serialize_element(pe)] = {}
        return out
    members = s.members
    for pe in sorted(members | children.keys()):
        child = children.get(pe)
        out[serialize_element(pe)] = {} if child is None else _emit(child, pe in members)
    return out


def _emit_json(s: Set, include_self: bool) -> str:
    parts = []
    if include_self and (s.members or s.children):
        parts.append('".":{}')
    for pe, member, child in _ordered(s):
        name = go_json_string(serialize_element(pe))
        parts.append(name + ":" + ("{}" if child is None else _emit_json(child, member)))
    return "{" + ",".join(parts) + "}"


def _read(obj: Any) -> tuple[Set | None, bool]:
    """upstream's readIterV1: the children of a node and whether the node itself is a member."""
    if obj is None:
        return None, True
    if not isinstance(obj, dict):
        raise FieldsV1Error(f"ReadMapCB: expect {{ or n, but found {json.dumps(obj)[:1]}")
    children: Set | None = None
    is_member = False
    for name, sub in obj.items():
        if name == ".":
            is_member = True
            continue
        try:
            pe = deserialize_element(name)
        except _Unknown:
            continue
        grandchildren, child_is_member = _read(sub)
        if child_is_member:
            if children is None:
                children = Set()
            children.members.add(pe)
        if grandchildren is not None:
            if children is None:
                children = Set()
            children.children[pe] = grandchildren
    if children is None:
        is_member = True
    return children, is_member
