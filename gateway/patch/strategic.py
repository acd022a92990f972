"""Strategic merge patch (``application/strategic-merge-patch+json``) as kube-apiserver 1.32 applies
it: k8s.io/apimachinery/pkg/util/strategicpatch StrategicMergeMapPatch, with the server's merge
options (parallel lists are merged, nulls with nothing to delete are dropped).

Semantics, driven by the type tree (``smpschema``):

- objects merge key by key; ``null`` deletes a key; a value of another JSON type replaces;
- lists whose field has patch strategy ``merge`` merge: maps by their merge key (items the live
  list lacks are added as the patch gives them), scalars as a set; other lists are replaced by
  the patch list as it is;
- directives: ``$patch: replace|delete`` on an object, ``$patch: delete`` on a merge list item,
  a ``{"$patch": "replace"}`` item (the list becomes the patch's other items),
  ``$retainKeys`` (live keys not listed are cleared; patch keys must be listed),
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``;
- the order of merged lists follows ``smporder``.

The merge works in place on a copy of the current object and on the decoded patch, as upstream
does on its maps: the result shares values with the patch, and the patch is left as upstream
leaves it (``%+v`` of it is part of a strict-decoding error message).
"""

from __future__ import annotations

import copy
from typing import Any

import protokube.gateway.patch.smporder as smporder
from protokube.gateway.patch.gofmt import MAP_TYPE, NIL_DEREF, SLICE_TYPE, ServerPanic, go_eq, go_key, go_type, sprint_v
from protokube.gateway.patch.smperrors import (
    BAD_PRIMITIVE_LIST,
    BAD_RETAIN_KEYS,
    BAD_SET_ELEMENT_ORDER,
    bad_arg_type,
    bad_map_arg,
    bad_patch_type,
    bad_request,
    internal,
    no_list_of_lists,
    no_merge_key,
)
from protokube.gateway.patch.smpschema import Schema
from protokube.schema.typetree import Type

DIRECTIVE = "$patch"
DELETE, REPLACE, MERGE = "delete", "replace", "merge"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"


def apply(current: dict[str, Any], patch: dict[str, Any] | None, obj_type: Type) -> dict[str, Any]:
    """StrategicMergeMapPatch(current, patch, the kind's type): the merged object.

    ``current`` is not changed; ``patch`` is (as upstream changes its patch map).
    """
    return merge_map(copy.deepcopy(current), patch if patch is not None else {}, Schema(obj_type, root=True))


# -- Maps ----------------------------------------------------------------------------------------


def merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """mergeMap."""
    if DIRECTIVE in patch:
        return _map_directive(patch[DIRECTIVE], patch)
    if original is None:
        original = {}
    _retain_keys(original, patch)
    _set_element_orders(original, patch, schema)
    for key, value in list(patch.items()):
        _merge_key(original, key, value, schema)
    return original


def _map_directive(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    """handleDirectiveInMergeMap: replace (the patch, directive removed) or delete (empty)."""
    if directive == REPLACE:
        del patch[DIRECTIVE]
        return patch
    if directive == DELETE:
        return {}
    raise bad_patch_type(directive, patch)


def _merge_key(original: dict[str, Any], key: str, value: Any, schema: Schema) -> None:
    """One member of the patch, as mergeMap's loop handles it."""
    is_delete_list = False
    if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
        is_delete_list = True
        key = _directive_target(key, DELETE_FROM_PRIMITIVE_LIST, BAD_PRIMITIVE_LIST) or key
    if value is None:
        original.pop(key, None)
        return
    if key not in original or go_type(original[key]) != go_type(value):
        if not is_delete_list:
            _discard_nulls(value)
            _set_without_directives(original, key, value)
        return
    kind = go_type(value)
    if kind == MAP_TYPE:
        sub, meta = schema.lookup_struct(key)
        original[key] = value if meta.strategy == REPLACE else merge_map(original[key], value, sub)
    elif kind == SLICE_TYPE:
        sub, meta = schema.lookup_slice(key)
        original[key] = _merge_list(original[key], value, sub, meta.strategy, meta.merge_key, is_delete_list)
    else:
        _set_without_directives(original, key, value)


def _set_without_directives(original: dict[str, Any], key: str, value: Any) -> None:
    cleaned, keep = remove_directives(value)
    if keep:
        original[key] = cleaned
    else:
        original.pop(key, None)


def _directive_target(key: str, prefix: str, malformed: str) -> str:
    """extractKey: the field a ``<prefix>/<field>`` directive is about."""
    head, slash, tail = key.partition("/")
    if not slash or head != prefix:
        raise bad_request(malformed)
    return tail


def remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives: drop maps carrying ``$patch`` (and list items that are such maps)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            cleaned, keep = remove_directives(value[key])
            if keep:
                value[key] = cleaned
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        return [cleaned for cleaned, keep in map(remove_directives, value) if keep], True
    return value, True


def _discard_nulls(value: Any) -> None:
    """discardNullValuesFromPatch: null members go, recursively (null list items stay)."""
    if isinstance(value, dict):
        for key in list(value):
            if value[key] is None:
                del value[key]
            else:
                _discard_nulls(value[key])
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: clear live keys not listed; every (non-null) patch key must be listed."""
    if RETAIN_KEYS not in patch:
        return
    listed = patch.pop(RETAIN_KEYS)
    if not isinstance(listed, list):
        raise bad_request(BAD_RETAIN_KEYS)
    retained = {go_key(v) for v in listed}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if ("string", key) not in retained:
            raise bad_request(BAD_RETAIN_KEYS)
    for key in [k for k in original if ("string", k) not in retained]:
        del original[key]


def _set_element_orders(original: dict[str, Any], patch: dict[str, Any], schema: Schema) -> None:
    """mergePatchIntoOriginal: merge each list named by a ``$setElementOrder/<field>`` together with
    its patch list, then order it: the directive's order, then the patch's, then the live list's."""
    for directive in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        if directive not in patch:
            continue
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise bad_arg_type(SLICE_TYPE, order)
        key = _directive_target(directive, SET_ELEMENT_ORDER, BAD_SET_ELEMENT_ORDER)
        live = original.get(key) if key in original else None
        if key in original and not isinstance(live, list):
            raise bad_arg_type(SLICE_TYPE, live)
        patch_list = patch.get(key) if key in patch else None
        if key in patch and not isinstance(patch_list, list):
            raise bad_arg_type(SLICE_TYPE, patch_list)
        sub, meta = schema.lookup_slice(key)
        _check_order(patch_list or [], order, meta.merge_key)
        if live is not None and patch_list is None:
            merged = live
        elif live is None and patch_list is not None:
            merged, _ = remove_directives(patch_list)
        elif live is not None and patch_list is not None:
            merged = _merge_list(live, patch_list, sub, meta.strategy, meta.merge_key, False)
        else:
            continue
        named, server_only = smporder.partition(merged, order, meta.merge_key)
        is_map = _element_type(live or [], patch_list or []) == MAP_TYPE
        original[key] = smporder.normalize(named, server_only, order, live or [], meta.merge_key, is_map)
        patch.pop(key, None)


def _check_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch list's items (deletions aside) appear in the
    ``$setElementOrder`` list, in the same relative order."""
    if not order or not patch_list:
        return
    items = smporder.split_deletions(patch_list)[0] if merge_key else patch_list
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and DIRECTIVE in items[i]:
            i += 1
            continue
        if _same_item(items[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise internal(
            f"The order in patch list:\n{sprint_v(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} list:\n"
            f"{sprint_v(order)}\n"
        )


def _same_item(left: Any, right: Any, merge_key: str) -> bool:
    """mergeKeyValueEqual."""
    if not merge_key:
        return go_eq(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise bad_map_arg(item)
    for item in (left, right):
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
    return go_eq(left[merge_key], right[merge_key])


# -- Lists ---------------------------------------------------------------------------------------


def _merge_list(
    original: list[Any], patch: list[Any], schema: Schema, strategy: str, merge_key: str, is_delete_list: bool
) -> list[Any]:
    """mergeSliceHandler: merge lists (and delete lists) merge; other lists are replaced as given."""
    if strategy == MERGE or is_delete_list:
        return merge_list(original, patch, schema, merge_key, is_delete_list)
    return patch


def _element_type(*lists: list[Any]) -> str:
    """sliceElementType: the one Go type of all items (no lists of lists)."""
    found: str | None = None
    first = True
    for items in lists:
        for item in items:
            kind = go_type(item)
            if first:
                if kind is None:
                    raise ServerPanic(NIL_DEREF)  # reflect.TypeOf(nil).Kind()
                if kind == SLICE_TYPE:
                    raise no_list_of_lists()
                found, first = kind, False
            elif kind != found:
                raise internal(f"list element types are not identical: {sprint_v(list(lists))}")
    if found is None:
        raise internal("no elements in any of the given slices")
    return found


def merge_list(
    original: list[Any], patch: list[Any], schema: Schema, merge_key: str, is_delete_list: bool
) -> list[Any]:
    """mergeSlice.

    Go slices share their backing array: upstream deletes items from the live list in place and
    appends new items into the slots that frees, and a caller ordering by the live list afterwards
    (``$setElementOrder``) sees those changes. ``original`` is changed here the same way (its
    length stays; its slots are what Go's backing array holds).
    """
    if not original and not patch:
        return original
    is_map = _element_type(original, patch) == MAP_TYPE
    if not is_map:
        if is_delete_list:
            doomed = {go_key(v) for v in patch}
            return [v for v in original if go_key(v) not in doomed]
        # append(original, patch...) shares original's backing array only when nothing is appended
        merged = _unique_scalars(original if not patch else original + patch)
    else:
        if not merge_key:
            raise internal(f"cannot merge lists without merge key for {schema.element_name()}")
        original, patch, backing = _special_items(original, patch, merge_key)
        merged = _merge_items(original, patch, merge_key, schema, backing)
    named, server_only = smporder.partition(merged, patch, merge_key)
    return smporder.normalize(named, server_only, patch, original, merge_key, is_map)


def _unique_scalars(items: list[Any]) -> list[Any]:
    """deduplicateScalars, in place: a later duplicate is overwritten by the current last item (so
    the order changes); the result is the first part of ``items``."""
    last = len(items) - 1
    i = 0
    while i < last:
        j = i + 1
        while j <= last:
            if go_eq(items[i], items[j]):
                items[j] = items[last]
                last -= 1
                j -= 1
            j += 1
        i += 1
    return items[: last + 1]


def _special_items(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any], list[Any] | None]:
    """mergeSliceWithSpecialElements: apply ``$patch`` items; (the list to merge into, the other
    patch items, the backing array later appends may fill). With a ``$patch: replace`` item the
    list becomes the other patch items (and nothing is merged)."""
    length = len(original)
    rest: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            rest.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in item:
                raise no_merge_key(item, merge_key)
            # deleteMatchingEntries: append(s[:i], s[i+1:]...) shifts the backing array in place
            while (position := smporder.find_by_key(original[:length], merge_key, item[merge_key])) >= 0:
                original[position : length - 1] = original[position + 1 : length]
                length -= 1
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise internal("merging lists cannot yet be specified in the patch")
        else:
            raise bad_patch_type(directive, item)
    if replace:
        return rest, [], None
    return original[:length], rest, original


def _merge_items(
    original: list[Any], patch: list[Any], merge_key: str, schema: Schema, backing: list[Any] | None
) -> list[Any]:
    """mergeSliceWithoutSpecialElements: each patch item merges into the item with its key, or is
    appended as it is (nulls and directives inside it included). While the appends fit the
    backing array (the live list's slots freed by deletions) they are written there too."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
        position = smporder.find_by_key(merged, merge_key, item[merge_key])
        if position >= 0:
            merged[position] = merge_map(merged[position], item, schema)
            if backing is not None:
                backing[position] = merged[position]
        else:
            if backing is not None and len(merged) < len(backing):
                backing[len(merged)] = item
            else:
                backing = None  # append reallocates: the live list is no longer written
            merged.append(item)
    return merged
