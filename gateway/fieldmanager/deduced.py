"""Typed operations on deduced values (structured-merge-diff's deduced type): the fields a custom
resource preserves without declaring them. An object is a map whose every key is a field, an array
is atomic, anything else a scalar; null takes the form of a map.

Such values nest as deeply as JSON allows (10,000 levels), beyond Python's stack: these walks keep
their own. typed.py hands them every deduced value it meets; they follow its walks for a map, an
atomic list and a scalar (see there for upstream's rules).
"""

from __future__ import annotations

from typing import Any, Protocol

from protokube.gateway.fieldmanager.fieldpath import FIELD, Path, PathElement, Set
from protokube.gateway.fieldmanager.values import JSON, MISSING, equals


class Changes(Protocol):
    """What ``compare`` adds to: the fields added, removed and modified (typed.Comparison)."""

    added: Set
    removed: Set
    modified: Set


_MAP, _LIST, _SCALAR = "map", "list", "scalar"


def _form(value: JSON) -> str:
    if isinstance(value, dict) or value is None:
        return _MAP
    return _LIST if isinstance(value, list) else _SCALAR


def field_set(value: JSON) -> tuple[bool, Set | None]:
    """typed._field_set: whether the value's own path is in the set, and the paths below it."""
    if value is None:
        return False, None
    if not isinstance(value, dict):
        return True, None
    root = Set()
    stack = [(value, root)]
    while stack:
        obj, node = stack.pop()
        for key, child in obj.items():
            pe = (FIELD, key)
            node.members.add(pe)
            if isinstance(child, dict) and child:
                node.children[pe] = below = Set()
                stack.append((child, below))
    return False, root


class _At:
    """A path below the walk's start, with its node in each of the comparison's sets (made when
    something is inserted there, so that no node is empty)."""

    __slots__ = ("nodes", "parent", "pe")

    def __init__(self, parent: _At | None, pe: PathElement | None) -> None:
        self.parent = parent
        self.pe = pe
        self.nodes: dict[int, Set] = {}


def _insert(at: _At, result: Set, start: Path) -> None:
    if at.parent is None:
        result.insert(start)
    else:
        _node(at.parent, result, start).members.add(at.pe)  # type: ignore[arg-type]


def _node(at: _At, result: Set, start: Path) -> Set:
    """The node of ``at`` in ``result``, made with the nodes above it as needed."""
    chain = []
    while at.parent is not None and id(result) not in at.nodes:
        chain.append(at)
        at = at.parent
    node = at.nodes.get(id(result))
    if node is None:
        node = result
        for pe in start:
            node = node.children.setdefault(pe, Set())
        at.nodes[id(result)] = node
    for below in reversed(chain):
        node = node.children.setdefault(below.pe, Set())  # type: ignore[arg-type]
        below.nodes[id(result)] = node
    return node


def compare(lhs: JSON, rhs: JSON, start: Path, c: Changes) -> None:
    """typed._compare: what changed from ``lhs`` to ``rhs`` (either MISSING, not both) at ``start``.
    Values of different forms are compared in both forms (upstream's compare of two atoms)."""
    stack: list[tuple[JSON, JSON, _At, str | None]] = [(lhs, rhs, _At(None, None), None)]
    while stack:
        lhs, rhs, at, form = stack.pop()
        if form is None:
            form = _form(lhs) if rhs is MISSING else _form(rhs)
            if lhs is not MISSING and rhs is not MISSING and _form(lhs) != form:
                stack.append((lhs, rhs, at, _form(lhs)))
        leaf = True
        l_map = lhs if form == _MAP and isinstance(lhs, dict) else None
        r_map = rhs if form == _MAP and isinstance(rhs, dict) else None
        if l_map or r_map:
            leaf = False
            l_map, r_map = l_map or {}, r_map or {}
            for key, lv in l_map.items():
                rv = r_map.get(key, MISSING)
                if lv is not rv:
                    stack.append((lv, rv, _At(at, (FIELD, key)), None))
            stack.extend((MISSING, rv, _At(at, (FIELD, key)), None) for key, rv in r_map.items() if key not in l_map)
        if lhs is MISSING:
            _insert(at, c.added, start)
        elif rhs is MISSING:
            _insert(at, c.removed, start)
        elif leaf and not equals(lhs, rhs):
            _insert(at, c.modified, start)


def _object(value: JSON) -> dict[str, JSON]:
    return value if isinstance(value, dict) else {}


def _taken_whole(lhs: JSON, rhs: JSON) -> bool:
    """Whether merging ``rhs`` onto ``lhs`` yields ``rhs``: it is no object (nor null), or neither
    side has members."""
    return _form(rhs) != _MAP or not (_object(lhs) or rhs)


def merge(lhs: JSON, rhs: JSON) -> JSON:
    """typed._merge: ``rhs`` applied onto ``lhs`` (neither MISSING); of different forms, ``rhs``.
    Merging deduced values never yields MISSING."""
    if _taken_whole(lhs, rhs):
        return rhs
    root: dict[str, JSON] = {}
    stack = [(_object(lhs), _object(rhs), root)]
    while stack:
        l_map, r_map, out = stack.pop()
        for key, lv in l_map.items():
            rv = r_map.get(key, MISSING)
            if rv is MISSING:
                out[key] = lv
            elif _taken_whole(lv, rv):
                out[key] = rv
            else:
                out[key] = below = {}
                stack.append((_object(lv), _object(rv), below))
        for key, rv in r_map.items():
            if key not in l_map:
                out[key] = rv
    return root


def remove(value: JSON, items: Set) -> JSON:
    """typed._remove: ``value`` without ``items``; emptied objects, and arrays, become null."""
    if not isinstance(value, dict | list) and value is not None:
        return value
    if not isinstance(value, dict) or not value:
        return None
    root: dict[str, JSON] = {}
    made: list[tuple[dict[str, JSON], str, dict[str, JSON]]] = []  # (parent, key, object made)
    stack: list[tuple[dict[str, Any], Set, dict[str, JSON]]] = [(value, items, root)]
    while stack:
        obj, removed, out = stack.pop()
        for key, child in obj.items():
            pe = (FIELD, key)
            if pe in removed.members:
                continue
            below = removed.children.get(pe)
            if below is None or below.empty():
                out[key] = child
            elif isinstance(child, dict) and child:
                out[key] = made_child = {}
                made.append((out, key, made_child))
                stack.append((child, below, made_child))
            else:
                out[key] = remove(child, below)
    for parent, key, made_child in made:
        if not made_child:
            parent[key] = None
    return root or None
