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
from collections.abc import Callable, Iterator
from typing import Any, Final

import orjson

from protokube.gateway.fieldmanager.values import (
    JSON,
    canonical,
    from_canonical,
    go_json,
    go_json_string,
    to_string,
)
from protokube.schema import deep

FIELD: Final = 0
KEY: Final = 1
VALUE: Final = 2
INDEX: Final = 3

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


_INT: Final = re.compile(r"[+-]?[0-9]+\Z")
_DECODER: Final = json.JSONDecoder()


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
    share nodes, and decoded sets are cached (with their FieldsV1 bytes and derived facts in ``memo``).

    No node is empty: each holds members or children (so a node is empty exactly when it has
    neither). Sets are as deep as the values they describe (10,000 levels for a custom object's
    preserved fields): every operation keeps its own stack and takes time linear in the nodes it
    visits."""

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
        return not self.members and not self.children

    def size(self) -> int:
        return sum(len(node.members) for node in _nodes(self))

    def with_prefix(self, pe: PathElement) -> Set:
        return self.children.get(pe) or Set()

    def is_subset_of(self, other: Set) -> bool:
        stack = [(self, other)]
        while stack:
            mine, theirs = stack.pop()
            if not mine.members <= theirs.members:
                return False
            for pe, child in mine.children.items():
                their_child = theirs.children.get(pe)
                if their_child is None:
                    return False
                stack.append((child, their_child))
        return True

    def union(self, other: Set) -> Set:
        """The paths of both (one of them itself when it holds the other: unchanged sets keep their
        cached FieldsV1)."""
        if other.is_subset_of(self) and other.children.keys() <= self.children.keys():
            return self
        if self.is_subset_of(other) and self.children.keys() <= other.children.keys():
            return other
        done: dict[tuple[int, int], Set] = {}
        for mine, theirs in reversed(_pairs(self, other, _nonempty_pairs)):
            done[id(mine), id(theirs)] = _union_node(mine, theirs, done)
        return _union(self, other, done)

    def intersection(self, other: Set) -> Set:
        done: dict[tuple[int, int], Set] = {}
        for mine, theirs in reversed(_pairs(self, other, _shared_pairs)):
            children = {}
            for pe, child in mine.children.items():
                their_child = theirs.children.get(pe)
                if their_child is not None and not (both := done[id(child), id(their_child)]).empty():
                    children[pe] = both
            done[id(mine), id(theirs)] = Set(mine.members & theirs.members, children)
        return done[id(self), id(other)]

    def difference(self, other: Set) -> Set:
        """The paths of this set that ``other`` lacks (``self`` itself when that is all of them)."""
        return self._minus(other, recursive=False)

    def recursive_difference(self, other: Set) -> Set:
        """Removes ``other``'s members with everything under them, and ``other``'s paths."""
        return self._minus(other, recursive=True)

    def _minus(self, other: Set, recursive: bool) -> Set:
        """difference, or with ``recursive`` recursive_difference (members of ``other`` take the
        children of the same element along); unchanged nodes are kept as they are."""
        walk = _recursive_pairs if recursive else _nonempty_pairs
        done: dict[tuple[int, int], Set] = {}
        for mine, theirs in reversed(_pairs(self, other, walk)):
            members = mine.members - theirs.members if theirs.members else mine.members
            changed = len(members) != len(mine.members)
            children = {}
            for pe, child in mine.children.items():
                if recursive and pe in theirs.members:
                    changed = True
                    continue
                their_child = theirs.children.get(pe)
                rest = child if their_child is None or their_child.empty() else done[id(child), id(their_child)]
                changed = changed or rest is not child or rest.empty()
                if not rest.empty():
                    children[pe] = rest
            done[id(mine), id(theirs)] = Set(members, children) if changed else mine
        return done.get((id(self), id(other)), self)

    def leaves(self) -> Set:
        """The members that have no children, at every level."""
        root = Set()
        stack = [(self, root)]
        while stack:
            node, out = stack.pop()
            out.members = {pe for pe in node.members if pe not in node.children}
            for pe, child in node.children.items():
                out.children[pe] = Set()
                stack.append((child, out.children[pe]))
        return root

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Set):
            return NotImplemented
        stack = [(self, other)]
        while stack:
            mine, theirs = stack.pop()
            if mine.members != theirs.members or mine.children.keys() != theirs.children.keys():
                return False
            stack.extend((child, theirs.children[pe]) for pe, child in mine.children.items())
        return True

    __hash__ = None  # type: ignore[assignment]

    def iterate(self, prefix: Path = ()) -> Iterator[Path]:
        """Every path, in upstream's order: this node's members sorted, then each child sorted."""
        stack = [(self, prefix)]
        while stack:
            node, path = stack.pop()
            for pe in sorted(node.members):
                yield (*path, pe)
            stack.extend((node.children[pe], (*path, pe)) for pe in sorted(node.children, reverse=True))

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
        write of the object) costs nothing (but for sets too deep to remember)."""
        if self.v1 is not None:
            return orjson.loads(self.v1)
        fields = _emit(self)
        try:
            self.v1 = orjson.dumps(fields)
        except orjson.JSONEncodeError:
            return fields
        _CACHE.remember(self.v1, self)
        return fields

    def to_json(self) -> bytes:
        """The FieldsV1 bytes exactly as upstream's Set.ToJSON writes them (Go's escaping included)."""
        return _emit_json(self).encode()

    @classmethod
    def from_fields_v1(cls, fields: Any) -> Set:
        """upstream's Set.FromJSON over a FieldsV1 JSON object (already parsed). The result is shared
        with other decodings of the same FieldsV1: read-only."""
        try:
            text = orjson.dumps(fields)
        except TypeError:  # not JSON, or deeper than sets worth remembering
            text = b""
        cached = _CACHE.get(text) if text else None
        if cached is not None:
            return cached
        s = _read(fields)
        if text:
            s.v1 = orjson.dumps(_emit(s))
            _CACHE.remember(text, s)
        return s

    @classmethod
    def from_json(cls, data: bytes | str) -> Set:
        try:
            parsed = deep.loads(data)
        except ValueError as e:
            raise FieldsV1Error(str(e)) from None
        return cls.from_fields_v1(parsed)


def _nodes(s: Set) -> Iterator[Set]:
    """Every node of a set."""
    stack = [s]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


PairWalk = Callable[[Set, Set], Iterator[tuple[Set, Set]]]


def _pairs(a: Set, b: Set, walk: PairWalk) -> list[tuple[Set, Set]]:
    """The pairs of nodes an operation on ``a`` and ``b`` combines, parents before children:
    ``walk`` yields the pairs below one pair that need combining."""
    order: list[tuple[Set, Set]] = []
    stack = [(a, b)]
    while stack:
        pair = stack.pop()
        order.append(pair)
        stack.extend(walk(*pair))
    return order


def _shared_pairs(a: Set, b: Set) -> Iterator[tuple[Set, Set]]:
    """The children both nodes have."""
    for pe, child in a.children.items():
        their_child = b.children.get(pe)
        if their_child is not None:
            yield child, their_child


def _nonempty_pairs(a: Set, b: Set) -> Iterator[tuple[Set, Set]]:
    """The children both nodes have, when neither node is empty (union and difference of an empty
    node need no walk)."""
    if not a.empty() and not b.empty():
        yield from _shared_pairs(a, b)


def _recursive_pairs(a: Set, b: Set) -> Iterator[tuple[Set, Set]]:
    """The children both nodes have, but those ``b`` holds as members (removed whole)."""
    for pe, child in a.children.items():
        their_child = b.children.get(pe)
        if their_child is not None and pe not in b.members:
            yield child, their_child


def _union(a: Set, b: Set, done: dict[tuple[int, int], Set]) -> Set:
    if b.empty():
        return a
    if a.empty():
        return b
    return done[id(a), id(b)]


def _union_node(a: Set, b: Set, done: dict[tuple[int, int], Set]) -> Set:
    """The union of two nodes whose shared children are done: ``a`` or ``b`` itself when it holds
    the other."""
    if a.empty() or b.empty():
        return _union(a, b, done)
    children = dict(a.children)
    is_a = b.members <= a.members
    is_b = a.members <= b.members and a.children.keys() <= b.children.keys()
    for pe, their_child in b.children.items():
        child = children.get(pe)
        merged = their_child if child is None else _union(child, their_child, done)
        children[pe] = merged
        is_a = is_a and merged is child
        is_b = is_b and merged is their_child
    if is_a:
        return a
    if is_b:
        return b
    return Set(a.members | b.members, children)


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


_CACHE: Final = _SetCache()


def _ordered(node: Set) -> list[PathElement]:
    """A node's members and children, in order."""
    if not node.children:
        return sorted(node.members)
    return sorted(node.members | node.children.keys())


def _emit(s: Set) -> dict[str, Any]:
    """The FieldsV1 object of a set (upstream's emitContentsV1): a member with children is marked
    by "." among them."""
    root: dict[str, Any] = {}
    stack = [(s, root)]
    while stack:
        node, out = stack.pop()
        for pe in _ordered(node):
            child = node.children.get(pe)
            below: dict[str, Any] = {".": {}} if child is not None and pe in node.members else {}
            out[serialize_element(pe)] = below
            if child is not None:
                stack.append((child, below))
    return root


def _emit_json(s: Set) -> str:
    """``_emit``'s object written as upstream writes it."""
    out: list[str] = []
    # Work items: a node to write (and whether it is marked by "."), or text to append as it is.
    stack: list[tuple[Set, bool] | str] = [(s, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, marked = item
        out.append('{".":{}' if marked else "{")
        stack.append("}")
        for i, pe in reversed(list(enumerate(_ordered(node)))):
            child = node.children.get(pe)
            stack.append("{}" if child is None else (child, pe in node.members))
            stack.append(("," if i or marked else "") + go_json_string(serialize_element(pe)) + ":")
    return "".join(out)


def _read(fields: Any) -> Set:
    """upstream's readIterV1 over a FieldsV1 object (null: the empty set). An element is a member
    when it has no children or is marked by "."; of two keys naming one element the later wins."""
    root = Set()
    if fields is None:
        return root
    if not isinstance(fields, dict):
        raise FieldsV1Error(f"ReadMapCB: expect {{ or n, but found {json.dumps(fields)[:1]}")
    read: list[tuple[dict[str, Any], Set, Set, PathElement]] = []  # (object, its set, parent's set, element)
    stack = [(name, sub, root) for name, sub in reversed(fields.items())]
    while stack:
        name, sub, parent = stack.pop()
        if name == ".":
            continue
        try:
            pe = deserialize_element(name)
        except _Unknown:
            continue
        if sub is None:
            parent.members.add(pe)
            continue
        if not isinstance(sub, dict):
            raise FieldsV1Error(f"ReadMapCB: expect {{ or n, but found {json.dumps(sub)[:1]}")
        node = Set()
        read.append((sub, node, parent, pe))
        stack.extend((child_name, child, node) for child_name, child in reversed(sub.items()))
    for obj, node, parent, pe in read[::-1]:  # children before their parents, later keys first
        if "." in obj or node.empty():
            parent.members.add(pe)
        if not node.empty() and pe not in parent.children:
            parent.children[pe] = node
    return root
