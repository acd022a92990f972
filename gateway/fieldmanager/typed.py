"""Typed operations on an object's JSON form (sigs.k8s.io/structured-merge-diff/v4/typed).

Each function walks a value together with its ``Type``: validation (ObjectToTyped), the set of
fields a value sets (ToFieldSet), comparison (Compare), merging an applied configuration into a live
object (Merge), removing fields (RemoveItems), and the set algebra helpers the updater needs
(EnsureNamedFieldsAreMembers, ReconcileFieldSetWithSchema).

``MISSING`` stands for "no value here" (Go's nil Value); ``None`` is JSON null, which is a value.
Results may share unchanged subtrees with the inputs: callers copy before mutating.
"""

from __future__ import annotations

from typing import Any

import protokube.gateway.fieldmanager.deduced as deduced
import protokube.gateway.fieldmanager.schema as schema
from protokube.gateway.fieldmanager.fieldpath import (
    FIELD,
    KEY,
    VALUE,
    Path,
    PathElement,
    Set,
    element_string,
)
from protokube.gateway.fieldmanager.values import (
    JSON,
    MISSING,
    canonical,
    equals,
    go_quote,
    go_sharp_v_value,
    go_type,
    go_v_value,
)
from protokube.schema.typetree import ATOMIC, DEDUCED, LIST, MAP, SCALAR, STRUCT, UNTYPED, Type


class TypedError(Exception):
    """upstream's typed.ValidationErrors: ``path: message``, several as ``errors:\\n  a\\n  b``."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__(self.text())

    def text(self) -> str:
        lines = [f"{path}: {message}" if path else message for path, message in self.errors]
        if len(lines) == 1:
            return lines[0]
        return "\n".join(["errors:", *("  " + line for line in lines)])


class ItemError(Exception):
    """A list item that cannot be named by a path element (listItemToPathElement)."""


# --- list items (helpers.go) -------------------------------------------------------------------


def item_element(t: Type, item: JSON) -> PathElement:
    """The path element of an item of an associative list: its keys, or its value for a set.
    Messages: upstream's keyedAssociativeListItemToPathElement and setItemToPathElement."""
    keys = t.map_keys
    if keys:
        if item is None:
            raise ItemError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ItemError("associative list with keys may not have non-map elements")
        if len(keys) == 1:
            name = keys[0]
            v = item.get(name, MISSING)
            if v is MISSING:
                v = _key_default(t, name)
            return (KEY, ((name, canonical(v)),))
        pairs = []
        for name in keys:
            v = item.get(name, MISSING)
            if v is MISSING:
                v = _key_default(t, name)
            pairs.append((name, canonical(v)))
        pairs.sort(key=lambda p: p[0])
        return (KEY, tuple(pairs))
    if isinstance(item, dict):
        raise ItemError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ItemError("not supported: associative list with lists as elements")
    if item is None:
        raise ItemError("associative list without keys has an element that's an explicit null")
    return (VALUE, canonical(item))


def _key_default(t: Type, name: str) -> JSON:
    """getAssociativeKeyDefault; the message is keyedAssociativeListItemToPathElement's."""
    assert t.element is not None
    default = schema.key_default(t.element, name)
    if default is schema.NO_DEFAULT:
        raise ItemError(
            f"associative list with keys has an element that omits key field {go_quote(name)} "
            "(and doesn't have default value)"
        )
    return default


def _associative(t: Type) -> bool:
    """Sets and map lists (upstream's ElementRelationship Associative, with or without keys)."""
    return t.list_type != ATOMIC


# --- validation (validate.go) ------------------------------------------------------------------


def validate(value: JSON, t: Type, *, allow_duplicates: bool = False) -> None:
    """upstream's AsTyped: raises TypedError when ``value`` does not fit ``t``."""
    errors = _validate(value, t, allow_duplicates)
    if errors:
        raise TypedError(errors)


def _prefixed(prefix: str, errors: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(prefix + path, message) for path, message in errors]


def _validate_scalar(t: Type, v: JSON) -> str | None:
    """upstream's validateScalar (the %T, %#v and %v of its messages rendered as Go does)."""
    if v is None:
        return None
    number = isinstance(v, int | float) and not isinstance(v, bool)
    scalar = t.scalar
    if scalar in ("integer", "number"):
        if not number:
            return f"expected numeric (int or float), got {go_type(v)}"
    elif scalar == "string":
        if not isinstance(v, str):
            return f"expected string, got {go_sharp_v_value(v)}"
    elif scalar == "boolean":
        if not isinstance(v, bool):
            return f"expected boolean, got {go_v_value(v)}"
    elif not (number or isinstance(v, str | bool)):
        return f"expected any scalar, got {go_v_value(v)}"
    return None


def _validate(v: JSON, t: Type, allow_dups: bool) -> list[tuple[str, str]]:
    """validatingObjectWalker: doScalar, doList/visitListItems, doMap/visitMapItems. Errors carry
    their path relative to ``v``; callers prefix them (upstream's WithLazyPrefix)."""
    kind = t.kind
    if kind == SCALAR:
        message = _validate_scalar(t, v)
        return [("", message)] if message else []
    if kind in (UNTYPED, DEDUCED) or v is None:  # a deduced value fits whatever its form
        return []
    errors: list[tuple[str, str]] = []
    if kind == LIST:
        if not isinstance(v, list):
            return [("", f"expected list, got {go_v_value(v)}")]
        element = t.element
        assert element is not None
        if not _associative(t):
            for i, item in enumerate(v):
                errors += _prefixed(f"[{i}]", _validate(item, element, allow_dups))
            return errors
        observed: set[PathElement] = set()
        for i, item in enumerate(v):
            try:
                pe = item_element(t, item)
            except ItemError as e:
                errors.append(("", f"element {i}: {e}"))
                return errors
            if pe in observed and not allow_dups:
                errors.append(("", f"duplicate entries for key {element_string(pe)}"))
            observed.add(pe)
            sub = _validate(item, element, allow_dups)
            if sub:
                errors += _prefixed(element_string(pe), sub)
        return errors
    if not isinstance(v, dict):
        return [("", f"expected map, got {go_v_value(v)}")]
    for k, val in v.items():
        ft = schema.field_type(t, k)
        if ft is None:
            errors.append(("." + k, "field not declared in schema"))
            break
        sub = _validate(val, ft, allow_dups)
        if sub:
            errors += _prefixed("." + k, sub)
    return errors


# --- field sets (tofieldset.go) ----------------------------------------------------------------


def to_field_set(value: JSON, t: Type) -> Set:
    """The fields a value sets (upstream's TypedValue.ToFieldSet)."""
    _, below = _field_set(value, t)
    return below or Set()


def _field_set(v: JSON, t: Type) -> tuple[bool, Set | None]:
    """Whether the value's own path is in the set, and the paths below it."""
    kind = t.kind
    if kind == DEDUCED:
        return deduced.field_set(v)
    if kind in (SCALAR, UNTYPED):
        return True, None
    if kind == LIST:
        if t.list_type == ATOMIC:
            return True, None
        if not isinstance(v, list):
            return False, None
        element = t.element
        assert element is not None
        node = Set()
        pes = [item_element(t, item) for item in v]
        seen: set[PathElement] = set()
        duplicates: set[PathElement] = set()
        for pe in pes:
            if pe in seen:
                duplicates.add(pe)
            seen.add(pe)
        for pe, item in zip(pes, v, strict=True):
            node.members.add(pe)
            if pe in duplicates:
                continue
            _, below = _field_set(item, element)
            if below is not None and (below.members or below.children):
                node.children[pe] = below
        return False, node
    if t.atomic:
        return True, None
    if not isinstance(v, dict):
        return False, None
    node = Set()
    struct = kind == STRUCT
    for k, val in v.items():
        ft = schema.field_type(t, k)
        if ft is None:
            raise TypedError([("." + k, "field not declared in schema")])
        pe = (FIELD, k)
        member, below = _field_set(val, ft)
        if below is not None and (below.members or below.children):
            node.children[pe] = below
        if member or val is None or (isinstance(val, dict) and not val) or not (struct and k in t.fields):
            node.members.add(pe)
    return False, node


# --- comparison (compare.go) -------------------------------------------------------------------


# A plain class: a dataclass's generated ``__init__`` runs as Python, even compiled (README).
class Comparison:
    """Fields removed by the new object, modified in it, and added by it; no field is in two."""

    def __init__(self, removed: Set, modified: Set, added: Set) -> None:
        self.removed = removed
        self.modified = modified
        self.added = added

    def is_same(self) -> bool:
        return self.removed.empty() and self.modified.empty() and self.added.empty()

    def filtered(self, reset: Set | None) -> Comparison:
        """upstream's FilterFields with an exclude filter (RecursiveDifference)."""
        if reset is None:
            return self
        return Comparison(
            self.removed.recursive_difference(reset),
            self.modified.recursive_difference(reset),
            self.added.recursive_difference(reset),
        )


def compare(lhs: JSON, rhs: JSON, t: Type) -> Comparison:
    """upstream's TypedValue.Compare: what changed from ``lhs`` to ``rhs``."""
    c = Comparison(Set(), Set(), Set())
    _compare(lhs, rhs, t, (), c)
    return c


def _compare(lhs: JSON, rhs: JSON, t: Type, path: Path, c: Comparison) -> None:
    kind = t.kind
    if kind == DEDUCED:
        deduced.compare(lhs, rhs, path, c)
        return
    leaf = True
    if kind == LIST:
        l_list = lhs if isinstance(lhs, list) else None
        r_list = rhs if isinstance(rhs, list) else None
        if t.list_type != ATOMIC and (l_list or r_list):
            leaf = False
            _compare_list_items(t, l_list or [], r_list or [], path, c)
    elif kind in (STRUCT, MAP):
        l_map = lhs if isinstance(lhs, dict) else None
        r_map = rhs if isinstance(rhs, dict) else None
        if not t.atomic and (l_map or r_map):
            leaf = False
            _compare_map_items(t, l_map or {}, r_map or {}, path, c)
    if lhs is MISSING:
        c.added.insert(path)
    elif rhs is MISSING:
        c.removed.insert(path)
    elif leaf and not equals(lhs, rhs):
        c.modified.insert(path)


def _compare_map_items(t: Type, lhs: dict, rhs: dict, path: Path, c: Comparison) -> None:
    for k, lv in lhs.items():
        ft = schema.field_type(t, k)
        if ft is None:
            raise TypedError([(_path_text(path) + "." + k, "field not declared in schema")])
        rv = rhs.get(k, MISSING)
        if lv is rv or (schema.python_equality_is_exact(ft) and lv == rv):
            continue
        _compare(lv, rv, ft, (*path, (FIELD, k)), c)
    for k, rv in rhs.items():
        if k not in lhs:
            ft = schema.field_type(t, k)
            if ft is None:
                raise TypedError([(_path_text(path) + "." + k, "field not declared in schema")])
            _compare(MISSING, rv, ft, (*path, (FIELD, k)), c)


def _path_text(path: Path) -> str:
    return "".join(element_string(pe) for pe in path)


def _index_items(t: Type, items: list, path: Path) -> dict[PathElement, list]:
    out: dict[PathElement, list] = {}
    errors = []
    for i, item in enumerate(items):
        try:
            pe = item_element(t, item)
        except ItemError as e:
            errors.append((_path_text(path), f"element {i}: {e}"))
            continue
        out.setdefault(pe, []).append(item)
    if errors:
        raise TypedError(errors)
    return out


def _compare_list_items(t: Type, lhs: list, rhs: list, path: Path, c: Comparison) -> None:
    element = t.element
    assert element is not None
    l_values = _index_items(t, lhs, path)
    r_values = _index_items(t, rhs, path)
    for pe in [*l_values, *(pe for pe in r_values if pe not in l_values)]:
        l_list = l_values.get(pe, [])
        r_list = r_values.get(pe, [])
        item_path = (*path, pe)
        if len(l_list) <= 1 and len(r_list) <= 1:
            lv = l_list[0] if l_list else MISSING
            rv = r_list[0] if r_list else MISSING
            if lv is not rv and not (schema.python_equality_is_exact(element) and lv == rv):
                _compare(lv, rv, element, item_path, c)
        elif len(l_list) >= 2 and len(r_list) >= 2:
            if not equals(l_list, r_list):
                c.modified.insert(item_path)
        elif len(l_list) >= 2:
            if r_list:
                _compare(MISSING, r_list[0], element, item_path, c)
            c.removed.insert(item_path)
        else:
            if l_list:
                _compare(l_list[0], MISSING, element, item_path, c)
            c.added.insert(item_path)


# --- merging (merge.go) ------------------------------------------------------------------------


def merge(lhs: JSON, rhs: JSON, t: Type) -> JSON:
    """upstream's TypedValue.Merge with ruleKeepRHS: ``rhs`` applied onto ``lhs``."""
    return _merge(lhs, rhs, t)


def _merge(lhs: JSON, rhs: JSON, t: Type) -> JSON:
    # Merging with nothing on one side yields the other side unchanged.
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    kind = t.kind
    if kind == DEDUCED:
        return deduced.merge(lhs, rhs)
    if kind == LIST:
        l_list = lhs if isinstance(lhs, list) else None
        r_list = rhs if isinstance(rhs, list) else None
        if t.list_type == ATOMIC or (not l_list and not r_list):
            return rhs
        return _merge_list_items(t, l_list or [], r_list or [])
    if kind in (STRUCT, MAP):
        l_map = lhs if isinstance(lhs, dict) else None
        r_map = rhs if isinstance(rhs, dict) else None
        if t.atomic or (not l_map and not r_map):
            return rhs
        l_map = l_map or {}
        r_map = r_map or {}
        out: dict[str, JSON] = {}
        for k, lv in l_map.items():
            ft = schema.field_type(t, k)
            if ft is None:
                raise TypedError([("." + k, "field not declared in schema")])
            merged = _merge(lv, r_map.get(k, MISSING), ft)
            if merged is not MISSING:
                out[k] = merged
        for k, rv in r_map.items():
            if k not in l_map:
                out[k] = rv
        return out if out else MISSING
    return rhs


def _index_for_merge(t: Type, items: list, allow_duplicates: bool) -> tuple[list[PathElement], dict[PathElement, JSON]]:
    pes: list[PathElement] = []
    observed: dict[PathElement, JSON] = {}
    errors = []
    for i, item in enumerate(items):
        try:
            pe = item_element(t, item)
        except ItemError as e:
            errors.append(("", f"element {i}: {e}"))
            continue
        if pe in observed:
            if not allow_duplicates:
                errors.append(("", f"duplicate entries for key {element_string(pe)}"))
                continue
            observed[pe] = None  # duplicated items are not merged with the applied value
        else:
            observed[pe] = item
        pes.append(pe)
    if errors:
        raise TypedError(errors)
    return pes, observed


def _merge_list_items(t: Type, lhs: list, rhs: list) -> JSON:
    """Merge two associative lists as upstream does: live order kept, applied items placed after the
    live item they follow in the applied list (mergingWalker.visitListItems)."""
    element = t.element
    assert element is not None
    rhs_pes, observed_rhs = _index_for_merge(t, rhs, False)
    lhs_pes, observed_lhs = _index_for_merge(t, lhs, True)
    shared = [pe for pe in rhs_pes if pe in observed_lhs]
    shared_at = 0
    next_shared = shared[0] if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[JSON] = []

    def emit(value: JSON) -> None:
        if value is not MISSING:
            out.append(value)

    l_len, r_len = len(lhs_pes), len(rhs_pes)
    li = ri = 0
    while li < l_len or ri < r_len:
        if li < l_len and ri < r_len:
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                emit(_merge(observed_lhs[pe], observed_rhs[pe], element))
                li += 1
                ri += 1
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, but not the one due now: it comes with its applied position
                continue
        if li < l_len:
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                emit(_merge(lhs[li], MISSING, element))
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < r_len:
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            emit(_merge(observed_lhs.get(pe, MISSING), observed_rhs[pe], element))
            ri += 1
            if next_shared is not None and next_shared == pe:
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
    return out if out else MISSING


# --- removal (remove.go) -----------------------------------------------------------------------


def remove_items(value: JSON, t: Type, items: Set) -> JSON:
    """upstream's TypedValue.RemoveItems. Emptied maps and lists become null, as upstream's do."""
    return _remove(value, t, items)


def _remove(v: JSON, t: Type, items: Set) -> JSON:
    kind = t.kind
    if kind == DEDUCED:
        return deduced.remove(v, items)
    if kind == SCALAR:
        return v
    if kind == UNTYPED:
        return None if isinstance(v, dict | list) or v is None else v
    if kind == LIST:
        if not isinstance(v, list) or not v or t.list_type == ATOMIC:
            return None
        element = t.element
        assert element is not None
        new_items = []
        for item in v:
            try:
                pe = item_element(t, item)
            except ItemError:
                pe = (VALUE, (5,))
            if pe in items.members:
                continue
            below = items.children.get(pe)
            if below is not None and not below.empty():
                item = _remove(item, element, below)
            new_items.append(item)
        return new_items or None
    if not isinstance(v, dict) or not v or t.atomic:
        return None
    out: dict[str, JSON] = {}
    for k, val in v.items():
        pe = (FIELD, k)
        if pe in items.members:
            continue
        below = items.children.get(pe)
        if below is not None and not below.empty():
            ft = schema.field_type(t, k)
            val = None if ft is None else _remove(val, ft, below)
        out[k] = val
    return out or None


# --- set helpers -------------------------------------------------------------------------------


def ensure_named_fields_are_members(s: Set, t: Type | None) -> Set:
    """upstream's Set.EnsureNamedFieldsAreMembers: struct fields with children become members too."""
    if t is None or t.kind == DEDUCED:  # no named fields below
        return s
    members = set(s.members)
    children: dict[PathElement, Set] = {}
    for pe, child in s.children.items():
        child_type: Type | None = None
        if t is not None:
            if pe[0] == FIELD and t.kind in (STRUCT, MAP, UNTYPED):
                if schema.is_declared_field(t, pe[1]):
                    members.add(pe)
                child_type = schema.field_type(t, pe[1])
            elif pe[0] == KEY and t.kind in (LIST, UNTYPED):
                child_type = t.element if t.kind == LIST else t
        children[pe] = ensure_named_fields_are_members(child, child_type)
    return Set(members, children)


def reconcile_field_set(s: Set, t: Type) -> Set | None:
    """upstream's ReconcileFieldSetWithSchema: a set that owns parts of what is now an atomic list,
    map or struct owns it whole. None when nothing needs to change. Remembered on decoded sets."""
    memo = s.memo
    if memo is not None:
        known = memo.get(id(t))
        if known is not None and known[0] is t:
            return known[1]
    to_change: list[Path] = []
    _reconcile(s, t, (), False, to_change)
    result = None
    if to_change:
        changed = Set.of(*to_change)
        result = s.recursive_difference(changed).union(changed)
    if s.v1 is not None:  # a decoded, shared, read-only set
        if s.memo is None:
            s.memo = {}
        s.memo[id(t)] = (t, result)
    return result


def _reconcile(s: Set | None, t: Type, path: Path, is_atomic: bool, out: list[Path]) -> None:
    kind = t.kind
    if kind in (SCALAR, DEDUCED):  # upstream does not reconcile deduced values
        return
    if kind == LIST:
        if not is_atomic and t.list_type == ATOMIC:
            out.append(path)
            return
        if s is not None:
            assert t.element is not None
            _reconcile_children(s, lambda pe: t.element, path, out)
        return
    if not is_atomic and schema.is_atomic(t):
        if s is not None and s.size() > 0:
            out.append(path)
        return
    if s is not None:
        _reconcile_children(s, lambda pe: schema.field_type(t, pe[1]) if pe[0] == FIELD else _element(t), path, out)


def _element(t: Type) -> Type | None:
    return t.element if t.kind == MAP else None


def _reconcile_children(s: Set, type_of: Any, path: Path, out: list[Path]) -> None:
    for pe, child in s.children.items():
        if pe in s.members:
            continue
        ct = type_of(pe)
        if ct is not None:
            _reconcile(child, ct, (*path, pe), False, out)
    for pe in s.members:
        ct = type_of(pe)
        if ct is not None:
            nested = s.children.get(pe)
            _reconcile(nested, ct, (*path, pe), nested is None, out)
