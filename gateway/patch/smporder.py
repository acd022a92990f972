"""The order of a merged list in strategic merge patch (upstream: normalizeElementOrder and friends in
k8s.io/apimachinery/pkg/util/strategicpatch/patch.go; design: "preserve order in strategic merge
patch").

A merged list is split into the items the patch (or its ``$setElementOrder`` list) names and the
server-only items. Each part is sorted by its own order (the patch's, the live list's), and the
server-only items are then slotted in front of the first patch item that comes after them in the
live list. Items the live list does not know (new ones) therefore go where the patch puts them,
and server-only items keep their place relative to the items around them when it is known.
Items to delete (``$patch: delete``) go last. Upstream's comparisons are kept exactly, including
Go's ``==`` on merge key values (an int64 is never a float64) and its stable sort.
"""

from __future__ import annotations

from typing import Any

from protokube.gateway.patch.gofmt import go_eq, go_key
from protokube.gateway.patch.gosort import slice_stable
from protokube.gateway.patch.smperrors import bad_map_arg, internal, no_merge_key

DIRECTIVE = "$patch"
DELETE = "delete"


def _identity(item: Any, merge_key: str, is_map: bool) -> Any:
    if is_map:
        return item.get(merge_key) if isinstance(item, dict) else None
    return item


def index(items: list[Any], wanted: Any, merge_key: str, is_map: bool) -> int:
    """The first position of ``wanted`` (by merge key value for maps), or -1."""
    key = _identity(wanted, merge_key, is_map)
    for position, item in enumerate(items):
        if go_eq(key, _identity(item, merge_key, is_map)):
            return position
    return -1


def validate_merge_keys(merge_key: str, *lists: list[Any]) -> None:
    """validateMergeKeyInLists: every item is a map holding the merge key."""
    for items in lists:
        for item in items:
            if not isinstance(item, dict):
                raise bad_map_arg(item)
            if merge_key not in item:
                raise no_merge_key(item, merge_key)


def split_deletions(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """extractToDeleteItems: (items to keep, items carrying ``$patch: delete``)."""
    keep: list[Any] = []
    delete: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise bad_map_arg(item)
        (delete if item.get(DIRECTIVE) == DELETE else keep).append(item)
    return keep, delete


def sort_by(items: list[Any], order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """normalizeSliceOrder: ``items`` ordered as in ``order``, deletions last."""
    deletions: list[Any] = []
    if is_map:
        validate_merge_keys(merge_key, items, order)
        items, deletions = split_deletions(items)
    else:
        items = list(items)

    def less(a: Any, b: Any) -> bool:
        ia = index(order, a, merge_key, is_map)
        if ia >= 0:
            ib = index(order, b, merge_key, is_map)
            if ib >= 0:
                return ia < ib
        return True

    slice_stable(items, less)
    return items + deletions


def interleave(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """mergeSortedSlice: insert the server-only items (left) among the patch items (right)."""
    result: list[Any] = []
    i = j = 0
    for _ in range(len(left) + len(right)):
        if i >= len(left) and j < len(right):
            result.append(right[j])
            j += 1
        elif j >= len(right) and i < len(left):
            result.append(left[i])
            i += 1
        else:
            li = index(server_order, left[i], merge_key, is_map)
            ri = index(server_order, right[j], merge_key, is_map)
            if li >= 0 and ri >= 0 and li < ri:
                result.append(left[i])
                i += 1
            else:
                result.append(right[j])
                j += 1
    return result


def normalize(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    is_map: bool,
) -> list[Any]:
    """normalizeElementOrder."""
    patch_items = sort_by(patch_items, patch_order, merge_key, is_map)
    server_only = sort_by(server_only, server_order, merge_key, is_map)
    return interleave(server_only, patch_items, server_order, merge_key, is_map)


def partition_primitives(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    """partitionPrimitivesByPresentInList: (items present in ``by``, the others)."""
    present = {go_key(v) for v in by}
    inside: list[Any] = []
    outside: list[Any] = []
    for item in items:
        (inside if go_key(item) in present else outside).append(item)
    return inside, outside


def find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    """findMapInSliceBasedOnKeyValue: the position of the map whose merge key equals ``value``."""
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise internal(f"value for key {position} is not a map")
        if merge_key in item and go_eq(item[merge_key], value):
            return position
    return -1


def partition_maps(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """partitionMapsByPresentInList."""
    inside: list[Any] = []
    outside: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise bad_map_arg(item)
        if merge_key not in item:
            raise no_merge_key(item, merge_key)
        (inside if find_by_key(by, merge_key, item[merge_key]) >= 0 else outside).append(item)
    return inside, outside


def partition(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    if merge_key:
        return partition_maps(items, by, merge_key)
    return partition_primitives(items, by)
