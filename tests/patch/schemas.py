"""Type trees for upstream's strategicpatch test struct (k8s.io/apimachinery/pkg/util/strategicpatch/
patch_test.go: MergeItem, RetainKeysMergeItem), built with the type tree's own classes, so that
upstream's test tables can be applied as they are."""

from __future__ import annotations

from protokube.schema.typetree import LIST, MAP, SCALAR, STRUCT, UNTYPED, Field, Type

STRING = Type(SCALAR, scalar="string")
INTEGER = Type(SCALAR, scalar="integer")
MERGE = frozenset({"merge"})


def _retain_keys_item(item: Type) -> Type:
    fields: dict[str, Field] = {}
    retain = Type(STRUCT, name="strategicpatch.RetainKeysMergeItem", _fields=fields)
    fields.update(
        {
            "name": Field("name", STRING),
            "value": Field("value", STRING),
            "other": Field("other", STRING),
            "simpleMap": Field("simpleMap", Type(MAP, element=STRING)),
            "mergingIntList": Field("mergingIntList", Type(LIST, element=INTEGER), MERGE),
            "mergingList": Field("mergingList", Type(LIST, element=item), MERGE, "name"),
            "nonMergingList": Field("nonMergingList", Type(LIST, element=item)),
        }
    )
    return retain


def merge_item() -> Type:
    """MergeItem. ``mergeItemPtr`` (a *MergeItem that upstream's tests patch as a list) is a merge list."""
    fields: dict[str, Field] = {}
    item = Type(STRUCT, name="strategicpatch.MergeItem", _fields=fields)
    fields.update(
        {
            "name": Field("name", STRING),
            "value": Field("value", STRING),
            "other": Field("other", STRING),
            "mergingList": Field("mergingList", Type(LIST, element=item), MERGE, "name"),
            "nonMergingList": Field("nonMergingList", Type(LIST, element=item)),
            "mergingIntList": Field("mergingIntList", Type(LIST, element=INTEGER), MERGE),
            "nonMergingIntList": Field("nonMergingIntList", Type(LIST, element=INTEGER)),
            "mergeItemPtr": Field("mergeItemPtr", Type(LIST, element=item), MERGE, "name"),
            "simpleMap": Field("simpleMap", Type(MAP, element=STRING)),
            "replacingItem": Field("replacingItem", Type(UNTYPED), frozenset({"replace"})),
            "retainKeysMap": Field("retainKeysMap", _retain_keys_item(item), frozenset({"retainKeys"})),
            "retainKeysMergingList": Field(
                "retainKeysMergingList", Type(LIST, element=item), frozenset({"merge", "retainKeys"}), "name"
            ),
        }
    )
    return item


MERGE_ITEM = merge_item()
