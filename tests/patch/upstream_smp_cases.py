"""Test data transcribed from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go (v0.32):
upstream's facts about strategic merge patch on its MergeItem test struct (see schemas.py).

- RAW_CASES: from strategicMergePatchRawTestCases and replaceRawExtensionPatchTestCases, each case's
  TwoWay patch applied to Original (giving TwoWayResult, or Modified) and its ThreeWay patch applied
  to Current (giving Result). Upstream compares these results byte for byte, list order included.
  Entries: (upstream description / which patch, object, patch, result).
- CUSTOM_RAW_CASES: customStrategicMergePatchRawTestCases: (description, original, patch, result,
  expected error substring).
- CUSTOM_YAML: customStrategicMergePatchTestCaseData as upstream writes it (testCases with
  original, twoWay, modified).
"""

RAW_CASES = [
    (
        "nested patch merge with empty list / TwoWay",
        """
name: hi
""",
        """
mergingList:
- name: hello
- $patch: delete
  name: doesntexist
""",
        """
name: hi
mergingList:
- name: hello
""",
    ),
    (
        "nested patch merge with empty list / ThreeWay",
        """
name: hi
mergingList:
- name: hello2
""",
        """
$setElementOrder/mergingList:
- name: hello
- name: doesntexist
mergingList:
- name: hello
""",
        """
name: hi
mergingList:
- name: hello
- name: hello2
""",
    ),
    (
        "delete items in lists of scalars / TwoWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
""",
    ),
    (
        "delete items in lists of scalars / ThreeWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
  - 4
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
  - 4
""",
    ),
    (
        "delete all duplicate items in lists of scalars / TwoWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
  - 3
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
""",
    ),
    (
        "delete all duplicate items in lists of scalars / ThreeWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
  - 3
  - 4
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
  - 4
""",
    ),
    (
        "add and delete items in lists of scalars / TwoWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
  - 4
$deleteFromPrimitiveList/mergingIntList:
  - 3
mergingIntList:
  - 4
""",
        """
mergingIntList:
  - 1
  - 2
  - 4
""",
    ),
    (
        "add and delete items in lists of scalars / ThreeWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
  - 4
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
  - 4
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
  - 4
""",
    ),
    (
        "merge lists of maps / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 1
  - name: 2
  - name: 3
mergingList:
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 1
  - name: 2
    value: 2
  - name: 3
    value: 3
""",
    ),
    (
        "merge lists of maps / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 1
  - name: 2
  - name: 3
mergingList:
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
  - name: 3
    value: 3
""",
    ),
    (
        "add field to map in merging list / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: 1
""",
        """
mergingList:
  - name: 1
    value: 1
  - name: 2
    value: 2
""",
    ),
    (
        "add field to map in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: 1
""",
        """
mergingList:
  - name: 1
    value: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
    ),
    (
        "add an item that already exists in current object in merging list / TwoWay",
        """
mergingList:
  - name: 1
    value: a
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
  - name: 3
mergingList:
  - name: 3
""",
        """
mergingList:
  - name: 1
    value: a
  - name: 2
  - name: 3
""",
    ),
    (
        "add an item that already exists in current object in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    value: a
    other: x
  - name: 2
  - name: 3
""",
        """{}""",
        """
mergingList:
  - name: 1
    value: a
    other: x
  - name: 2
  - name: 3
""",
    ),
    (
        "replace map field value in merging list / TwoWay",
        """
mergingList:
  - name: 1
    value: 1
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: a
""",
        """
mergingList:
  - name: 1
    value: a
  - name: 2
    value: 2
""",
    ),
    (
        "replace map field value in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    value: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: a
""",
        """
mergingList:
  - name: 1
    value: a
    other: a
  - name: 2
    value: 2
    other: b
""",
    ),
    (
        "delete map from merging list / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 2
mergingList:
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
""",
    ),
    (
        "delete map from merging list / ThreeWay",
        """
mergingList:
  - name: 1
  - name: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 2
mergingList:
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
    other: b
""",
    ),
    (
        "delete missing map from merging list / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 2
mergingList:
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
""",
    ),
    (
        "delete missing map from merging list / ThreeWay",
        """
mergingList:
  - name: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 2
mergingList:
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
    other: b
""",
    ),
    (
        "add map and delete map from merging list / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
mergingList:
  - name: 3
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
  - name: 3
""",
    ),
    (
        "add map and delete map from merging list / ThreeWay",
        """
mergingList:
  - name: 1
  - name: 2
    other: b
  - name: 4
    other: c
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
mergingList:
  - name: 3
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
    other: b
  - name: 4
    other: c
  - name: 3
""",
    ),
    (
        "add map and delete map from merging list with conflict / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
mergingList:
  - name: 3
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 2
  - name: 3
""",
    ),
    (
        "add map and delete map from merging list with conflict / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 4
    other: c
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
mergingList:
  - name: 2
  - name: 3
  - name: 1
    $patch: delete
""",
        """
mergingList:
  - name: 4
    other: c
  - name: 2
  - name: 3
""",
    ),
    (
        "delete field from map in merging list / TwoWay",
        """
mergingList:
  - name: 1
    value: 1
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: null
""",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
""",
    ),
    (
        "delete field from map in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    value: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    value: null
""",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
    ),
    (
        "replace non merging list nested in merging list / TwoWay",
        """
mergingList:
  - name: 1
    nonMergingList:
      - name: 1
      - name: 2
        value: 2
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    nonMergingList:
      - name: 1
        value: 1
""",
        """
mergingList:
  - name: 1
    nonMergingList:
      - name: 1
        value: 1
  - name: 2
""",
    ),
    (
        "replace non merging list nested in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
    nonMergingList:
      - name: 1
      - name: 2
        value: 2
  - name: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 1
    nonMergingList:
      - name: 1
        value: 1
""",
        """
mergingList:
  - name: 1
    other: a
    nonMergingList:
      - name: 1
        value: 1
  - name: 2
    other: b
""",
    ),
    (
        "add field to map in merging list nested in merging list / TwoWay",
        """
mergingList:
  - name: 1
    mergingList:
      - name: 1
      - name: 2
        value: 2
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - $setElementOrder/mergingList:
      - name: 1
      - name: 2
    name: 1
    mergingList:
      - name: 1
        value: 1
""",
        """
mergingList:
  - name: 1
    mergingList:
      - name: 1
        value: 1
      - name: 2
        value: 2
  - name: 2
""",
    ),
    (
        "add field to map in merging list nested in merging list / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
    mergingList:
      - name: 1
      - name: 2
        value: 2
  - name: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - $setElementOrder/mergingList:
      - name: 1
      - name: 2
    name: 1
    mergingList:
      - name: 1
        value: 1
""",
        """
mergingList:
  - name: 1
    other: a
    mergingList:
      - name: 1
        value: 1
      - name: 2
        value: 2
  - name: 2
    other: b
""",
    ),
    (
        "add map to merging list by pointer / TwoWay",
        """
mergeItemPtr:
  - name: 1
""",
        """
$setElementOrder/mergeItemPtr:
  - name: 1
  - name: 2
mergeItemPtr:
  - name: 2
""",
        """
mergeItemPtr:
  - name: 1
  - name: 2
""",
    ),
    (
        "add map to merging list by pointer / ThreeWay",
        """
mergeItemPtr:
  - name: 1
    other: a
  - name: 3
""",
        """
$setElementOrder/mergeItemPtr:
  - name: 1
  - name: 2
mergeItemPtr:
  - name: 2
""",
        """
mergeItemPtr:
  - name: 1
    other: a
  - name: 2
  - name: 3
""",
    ),
    (
        "merge lists of scalars / TwoWay",
        """
mergingIntList:
- 1
- 2
""",
        """
$setElementOrder/mergingIntList:
- 1
- 2
- 3
mergingIntList:
- 3
""",
        """
mergingIntList:
- 1
- 2
- 3
""",
    ),
    (
        "merge lists of scalars / ThreeWay",
        """
mergingIntList:
- 1
- 2
- 4
""",
        """
$setElementOrder/mergingIntList:
- 1
- 2
- 3
mergingIntList:
- 3
""",
        """
mergingIntList:
- 1
- 2
- 3
- 4
""",
    ),
    (
        "add an item in a list of primitives and preserve order / TwoWay",
        """
mergingIntList:
- 1
- 2
""",
        """
$setElementOrder/mergingIntList:
- 3
- 1
- 2
mergingIntList:
- 3
""",
        """
mergingIntList:
- 3
- 1
- 2
""",
    ),
    (
        "add an item in a list of primitives and preserve order / ThreeWay",
        """
mergingIntList:
- 1
- 4
- 2
""",
        """
$setElementOrder/mergingIntList:
- 3
- 1
- 2
mergingIntList:
- 3
""",
        """
mergingIntList:
- 3
- 1
- 4
- 2
""",
    ),
    (
        "delete an item in a list of primitives and preserve order / TwoWay",
        """
mergingIntList:
- 1
- 2
- 3
""",
        """
$setElementOrder/mergingIntList:
- 2
- 1
$deleteFromPrimitiveList/mergingIntList:
- 3
""",
        """
mergingIntList:
- 2
- 1
""",
    ),
    (
        "delete an item in a list of primitives and preserve order / ThreeWay",
        """
mergingIntList:
- 1
- 2
- 3
""",
        """
$setElementOrder/mergingIntList:
- 2
- 1
$deleteFromPrimitiveList/mergingIntList:
- 3
""",
        """
mergingIntList:
- 2
- 1
""",
    ),
    (
        "add multiple items in a list and preserve order / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 4
  - name: 2
  - name: 3
mergingList:
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
        """
mergingList:
  - name: 1
  - name: 4
    value: 4
  - name: 2
    value: 2
  - name: 3
    value: 3
""",
    ),
    (
        "add multiple items in a list and preserve order / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 4
  - name: 2
  - name: 3
mergingList:
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
        """
mergingList:
  - name: 1
    other: a
  - name: 4
    value: 4
  - name: 2
    value: 2
    other: b
  - name: 3
    value: 3
""",
    ),
    (
        "change an item in a list and preserve order / TwoWay",
        """
mergingList:
  - name: 1
  - name: 3
    value: 3
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
  - name: 1
mergingList:
  - name: 3
    value: x
""",
        """
mergingList:
  - name: 2
    value: 2
  - name: 3
    value: x
  - name: 1
""",
    ),
    (
        "change an item in a list and preserve order / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
  - name: 3
    value: 3
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 3
  - name: 1
mergingList:
  - name: 3
    value: x
""",
        """
mergingList:
  - name: 2
    value: 2
    other: b
  - name: 3
    value: x
  - name: 1
    other: a
""",
    ),
    (
        "add and delete an item in a list and preserve order / TwoWay",
        """
mergingList:
  - name: 1
  - name: 3
    value: 3
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 2
  - name: 1
mergingList:
  - name: 4
    value: 4
  - name: 3
    $patch: delete
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 2
    value: 2
  - name: 1
""",
    ),
    (
        "add and delete an item in a list and preserve order / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
    other: b
  - name: 3
    value: 3
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 2
  - name: 1
mergingList:
  - name: 4
    value: 4
  - name: 3
    $patch: delete
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 2
    value: 2
    other: b
  - name: 1
    other: a
""",
    ),
    (
        "set elements order in a list with server-only items / TwoWay",
        """
mergingList:
  - name: 1
  - name: 3
    value: 3
  - name: 4
    value: 4
  - name: 2
    value: 2
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 2
  - name: 3
  - name: 1
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 2
    value: 2
  - name: 3
    value: 3
  - name: 1
""",
    ),
    (
        "set elements order in a list with server-only items / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 3
    value: 3
  - name: 4
    value: 4
  - name: 2
    value: 2
  - name: 9
""",
        """
$setElementOrder/mergingList:
  - name: 4
  - name: 2
  - name: 3
  - name: 1
""",
        """
mergingList:
  - name: 4
    value: 4
  - name: 2
    value: 2
  - name: 3
    value: 3
  - name: 1
    other: a
  - name: 9
""",
    ),
    (
        "set elements order in a list with server-only items 2 / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
  - name: 3
    value: 3
  - name: 4
    value: 4
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 1
  - name: 4
  - name: 3
""",
        """
mergingList:
  - name: 2
    value: 2
  - name: 1
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
    ),
    (
        "set elements order in a list with server-only items 2 / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
  - name: 9
  - name: 3
    value: 3
  - name: 4
    value: 4
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 1
  - name: 4
  - name: 3
""",
        """
mergingList:
  - name: 2
    value: 2
  - name: 1
    other: a
  - name: 9
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
    ),
    (
        "set elements order in a list with server-only items 3 / TwoWay",
        """
mergingList:
  - name: 1
  - name: 2
    value: 2
  - name: 3
    value: 3
  - name: 4
    value: 4
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 1
  - name: 4
  - name: 3
""",
        """
mergingList:
  - name: 2
    value: 2
  - name: 1
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
    ),
    (
        "set elements order in a list with server-only items 3 / ThreeWay",
        """
mergingList:
  - name: 1
    other: a
  - name: 2
    value: 2
  - name: 7
  - name: 9
  - name: 8
  - name: 3
    value: 3
  - name: 4
    value: 4
""",
        """
$setElementOrder/mergingList:
  - name: 2
  - name: 1
  - name: 4
  - name: 3
""",
        """
mergingList:
  - name: 2
    value: 2
  - name: 1
    other: a
  - name: 7
  - name: 9
  - name: 8
  - name: 4
    value: 4
  - name: 3
    value: 3
""",
    ),
    (
        "set elements order in a int list with server-only items 3 / TwoWay",
        """
mergingIntList:
  - 1
  - 2
  - 3
  - 4
""",
        """
$setElementOrder/mergingIntList:
  - 2
  - 1
  - 4
  - 3
""",
        """
mergingIntList:
  - 2
  - 1
  - 4
  - 3
""",
    ),
    (
        "set elements order in a int list with server-only items 3 / ThreeWay",
        """
mergingIntList:
  - 1
  - 2
  - 7
  - 9
  - 8
  - 3
  - 4
""",
        """
$setElementOrder/mergingIntList:
  - 2
  - 1
  - 4
  - 3
""",
        """
mergingIntList:
  - 2
  - 1
  - 7
  - 9
  - 8
  - 4
  - 3
""",
    ),
    (
        "behavior of set element order for a merging list with duplicate / TwoWay",
        """
mergingList:
- name: 1
- name: 2
  value: dup1
- name: 3
- name: 2
  value: dup2
- name: 4
""",
        """
$setElementOrder/mergingList:
- name: 2
- name: 1
- name: 4
- name: 3
- name: 2
""",
        """
mergingList:
- name: 2
  value: dup1
- name: 2
  value: dup2
- name: 1
- name: 4
- name: 3
""",
    ),
    (
        "behavior of set element order for a merging list with duplicate / ThreeWay",
        """
mergingList:
- name: 1
- name: 2
  value: dup1
- name: 3
- name: 2
  value: dup2
- name: 4
""",
        """
$setElementOrder/mergingList:
- name: 2
- name: 1
- name: 4
- name: 3
- name: 2
""",
        """
mergingList:
- name: 2
  value: dup1
- name: 2
  value: dup2
- name: 1
- name: 4
- name: 3
""",
    ),
    (
        "behavior of set element order for a merging int list with duplicate / TwoWay",
        """
mergingIntList:
- 1
- 2
- 3
- 2
- 4
""",
        """
$setElementOrder/mergingIntList:
- 2
- 1
- 4
- 3
- 2
""",
        """
mergingIntList:
- 2
- 2
- 1
- 4
- 3
""",
    ),
    (
        "behavior of set element order for a merging int list with duplicate / ThreeWay",
        """
mergingIntList:
- 1
- 2
- 3
- 2
- 4
""",
        """
$setElementOrder/mergingIntList:
- 2
- 1
- 4
- 3
- 2
""",
        """
mergingIntList:
- 2
- 2
- 1
- 4
- 3
""",
    ),
    (
        "retainKeys map should clear defaulted field / TwoWay",
        """{}""",
        """
retainKeysMap:
  other: bar
""",
        """
retainKeysMap:
  other: bar
""",
    ),
    (
        "retainKeys map should clear defaulted field / ThreeWay",
        """
retainKeysMap:
  value: foo
""",
        """
retainKeysMap:
  $retainKeys:
    - other
  other: bar
""",
        """
retainKeysMap:
  other: bar
""",
    ),
    (
        "retainKeys map adds a field and clear a field / TwoWay",
        """
retainKeysMap:
  name: foo
""",
        """
retainKeysMap:
  $retainKeys:
    - name
    - value
  value: bar
""",
        """
retainKeysMap:
  name: foo
  value: bar
""",
    ),
    (
        "retainKeys map adds a field and clear a field / ThreeWay",
        """
retainKeysMap:
  name: foo
  other: a
""",
        """
retainKeysMap:
  $retainKeys:
    - name
    - value
  value: bar
""",
        """
retainKeysMap:
  name: foo
  value: bar
""",
    ),
    (
        "retainKeys map deletes a field and clears a field / TwoWay",
        """
retainKeysMap:
  name: foo
  value: bar
""",
        """
retainKeysMap:
  $retainKeys:
    - name
  value: null
""",
        """
retainKeysMap:
  name: foo
""",
    ),
    (
        "retainKeys map deletes a field and clears a field / ThreeWay",
        """
retainKeysMap:
  name: foo
  value: bar
  other: a
""",
        """
retainKeysMap:
  $retainKeys:
    - name
  value: null
""",
        """
retainKeysMap:
  name: foo
""",
    ),
    (
        "retainKeys map replaces non-merging list / TwoWay",
        """
retainKeysMap:
  name: foo
  value: bar
  nonMergingList:
  - name: a
  - name: b
""",
        """
retainKeysMap:
  $retainKeys:
    - name
    - nonMergingList
    - value
  nonMergingList:
  - name: a
  - name: c
  - name: b
""",
        """
retainKeysMap:
  name: foo
  value: bar
  nonMergingList:
  - name: a
  - name: c
  - name: b
""",
    ),
    (
        "retainKeys map replaces non-merging list / ThreeWay",
        """
retainKeysMap:
  name: foo
  value: bar
  nonMergingList:
  - name: a
  - name: b
""",
        """
retainKeysMap:
  $retainKeys:
    - name
    - nonMergingList
    - value
  nonMergingList:
  - name: a
  - name: c
  - name: b
""",
        """
retainKeysMap:
  name: foo
  value: bar
  nonMergingList:
  - name: a
  - name: c
  - name: b
""",
    ),
    (
        "retainKeys map adds an item and deletes an item in nested merging int list / TwoWay",
        """
retainKeysMap:
  name: foo
  mergingIntList:
  - 1
  - 2
  - 3
""",
        """
retainKeysMap:
  $retainKeys:
    - mergingIntList
    - name
  mergingIntList:
  - 5
  $deleteFromPrimitiveList/mergingIntList:
  - 2
  $setElementOrder/mergingIntList:
    - 1
    - 3
    - 5
""",
        """
retainKeysMap:
  name: foo
  mergingIntList:
  - 1
  - 3
  - 5
""",
    ),
    (
        "retainKeys map adds an item and deletes an item in nested merging int list / ThreeWay",
        """
retainKeysMap:
  name: foo
  mergingIntList:
  - 1
  - 2
  - 3
  - 4
""",
        """
retainKeysMap:
  $retainKeys:
    - mergingIntList
    - name
  mergingIntList:
  - 5
  $deleteFromPrimitiveList/mergingIntList:
  - 2
  $setElementOrder/mergingIntList:
    - 1
    - 3
    - 5
""",
        """
retainKeysMap:
  name: foo
  mergingIntList:
  - 1
  - 3
  - 5
  - 4
""",
    ),
    (
        "retainKeys list of maps clears a field / TwoWay",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: a
""",
        """{}""",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: a
""",
    ),
    (
        "retainKeys list of maps clears a field / ThreeWay",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: a
  other: x
""",
        """
$setElementOrder/retainKeysMergingList:
  - name: bar
  - name: foo
retainKeysMergingList:
- $retainKeys:
    - name
    - value
  name: foo
""",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: a
""",
    ),
    (
        "retainKeys list of maps changes a field and clear a field / TwoWay",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: old
""",
        """
$setElementOrder/retainKeysMergingList:
  - name: bar
  - name: foo
retainKeysMergingList:
- $retainKeys:
    - name
    - value
  name: foo
  value: new
""",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: new
""",
    ),
    (
        "retainKeys list of maps changes a field and clear a field / ThreeWay",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: old
  other: x
""",
        """
$setElementOrder/retainKeysMergingList:
  - name: bar
  - name: foo
retainKeysMergingList:
- $retainKeys:
    - name
    - value
  name: foo
  value: new
""",
        """
retainKeysMergingList:
- name: bar
- name: foo
  value: new
""",
    ),
    (
        "delete and reorder in one list, reorder in another / TwoWay",
        """
mergingList:
- name: a
  value: a
- name: b
  value: b
mergeItemPtr:
- name: c
  value: c
- name: d
  value: d
""",
        """
$setElementOrder/mergingList:
- name: b
$setElementOrder/mergeItemPtr:
- name: d
- name: c
mergingList:
- $patch: delete
  name: a
""",
        """
mergingList:
- name: b
  value: b
mergeItemPtr:
- name: d
  value: d
- name: c
  value: c
""",
    ),
    (
        "delete and reorder in one list, reorder in another / ThreeWay",
        """
mergingList:
- name: a
  value: a
- name: b
  value: b
mergeItemPtr:
- name: c
  value: c
- name: d
  value: d
""",
        """
$setElementOrder/mergingList:
- name: b
$setElementOrder/mergeItemPtr:
- name: d
- name: c
mergingList:
- $patch: delete
  name: a
""",
        """
mergingList:
- name: b
  value: b
mergeItemPtr:
- name: d
  value: d
- name: c
  value: c
""",
    ),
    (
        "replace RawExtension field and merge list / TwoWay",
        """
name: my-object
value: some-value
other: current-other
mergingList:
  - name: 1
replacingItem:
  Some: Generic
  Yaml: Inside
  The: RawExtension
  Field: Period
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 2
replacingItem:
  Newly: Modified
  Yaml: Inside
  The: RawExtension
""",
        """
name: my-object
value: some-value
other: current-other
mergingList:
  - name: 1
  - name: 2
replacingItem:
  Newly: Modified
  Yaml: Inside
  The: RawExtension
""",
    ),
    (
        "replace RawExtension field and merge list / ThreeWay",
        """
name: my-object
value: some-value
other: current-other
mergingList:
  - name: 1
  - name: 3
replacingItem:
  Some: Generic
  Yaml: Inside
  The: RawExtension
  Field: Period
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
mergingList:
  - name: 2
replacingItem:
  Newly: Modified
  Yaml: Inside
  The: RawExtension
""",
        """
name: my-object
value: some-value
other: current-other
mergingList:
  - name: 1
  - name: 2
  - name: 3
replacingItem:
  Newly: Modified
  Yaml: Inside
  The: RawExtension
""",
    ),
]

CUSTOM_RAW_CASES = [
    (
        "$setElementOrder contains item that is not present in the list to be merged",
        """
mergingList:
  - name: 1
  - name: 3
""",
        """
$setElementOrder/mergingList:
  - name: 3
  - name: 2
  - name: 1
mergingList:
  - name: 3
    value: 3
  - name: 1
    value: 1
""",
        """
mergingList:
  - name: 3
    value: 3
  - name: 1
    value: 1
""",
        "",
    ),
    (
        "$setElementOrder contains item that is not present in the int list to be merged",
        """
mergingIntList:
  - 1
  - 3
""",
        """
$setElementOrder/mergingIntList:
  - 3
  - 2
  - 1
""",
        """
mergingIntList:
  - 3
  - 1
""",
        "",
    ),
    (
        "should check if order in $setElementOrder and patch list match",
        """
mergingList:
  - name: 1
  - name: 3
  - name: 2
""",
        """
$setElementOrder/mergingList:
  - name: 1
  - name: 2
  - name: 3
mergingList:
  - name: 3
    value: 3
  - name: 1
    value: 1
""",
        """""",
        "doesn't match",
    ),
    (
        "$setElementOrder contains item that is not present in the int list to be merged",
        """
mergingIntList:
  - 1
  - 3
  - 2
""",
        """
$setElementOrder/mergingIntList:
  - 1
  - 2
  - 3
mergingIntList:
  - 3
  - 1
""",
        """""",
        "doesn't match",
    ),
    (
        "missing merge key should error out",
        """
mergingList:
  - name: 1
    value: a
""",
        """
mergingList:
  - value: b
""",
        """""",
        "does not contain declared merge key",
    ),
    (
        "$deleteFromPrimitiveList of nonexistent item in primitive list should not add the item to the list",
        """
mergingIntList:
  - 1
  - 2
""",
        """
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
  - 1
  - 2
""",
        "",
    ),
    (
        "$deleteFromPrimitiveList on empty primitive list should not add the item to the list",
        """
mergingIntList:
""",
        """
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
mergingIntList:
""",
        "",
    ),
    (
        "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list",
        """
foo:
  - bar
""",
        """
$deleteFromPrimitiveList/mergingIntList:
  - 3
""",
        """
foo:
  - bar
""",
        "",
    ),
    (
        "$deleteFromPrimitiveList should delete item from a list with merge patch strategy",
        """
mergingIntList:
  - 1
  - 2
  - 3
""",
        """
$deleteFromPrimitiveList/mergingIntList:
  - 2
""",
        """
mergingIntList:
  - 1
  - 3
""",
        "",
    ),
    (
        "$deleteFromPrimitiveList should delete item from a list without merge patch strategy",
        """
nonMergingIntList:
  - 1
  - 2
  - 3
""",
        """
$deleteFromPrimitiveList/nonMergingIntList:
  - 2
""",
        """
nonMergingIntList:
  - 1
  - 3
""",
        "",
    ),
]

CUSTOM_YAML = """
testCases:
  - description: unique scalars when merging lists
    original:
      mergingIntList:
        - 1
        - 2
    twoWay:
      mergingIntList:
        - 2
        - 3
    modified:
      mergingIntList:
        - 1
        - 2
        - 3
  - description: delete map from nested map
    original:
      simpleMap:
        key1: 1
        key2: 1
    twoWay:
      simpleMap:
        $patch: delete
    modified:
      simpleMap:
        {}
  - description: delete all items from merging list
    original:
      mergingList:
        - name: 1
        - name: 2
    twoWay:
      mergingList:
        - $patch: replace
    modified:
      mergingList: []
  - description: merge empty merging lists
    original:
      mergingList: []
    twoWay:
      mergingList: []
    modified:
      mergingList: []
  - description: delete all keys from map
    original:
      name: 1
      value: 1
    twoWay:
      $patch: replace
    modified: {}
  - description: add key and delete all keys from map
    original:
      name: 1
      value: 1
    twoWay:
      other: a
      $patch: replace
    modified:
      other: a
  - description: delete all duplicate entries in a merging list
    original:
      mergingList:
        - name: 1
        - name: 1
        - name: 2
          value: a
        - name: 3
        - name: 3
    twoWay:
      mergingList:
        - name: 1
          $patch: delete
        - name: 3
          $patch: delete
    modified:
      mergingList:
        - name: 2
          value: a
  - description: retainKeys map can add a field when no retainKeys directive present
    original:
      retainKeysMap:
        name: foo
    twoWay:
      retainKeysMap:
        value: bar
    modified:
      retainKeysMap:
        name: foo
        value: bar
  - description: retainKeys map can change a field when no retainKeys directive present
    original:
      retainKeysMap:
        name: foo
        value: a
    twoWay:
      retainKeysMap:
        value: b
    modified:
      retainKeysMap:
        name: foo
        value: b
  - description: retainKeys map can delete a field when no retainKeys directive present
    original:
      retainKeysMap:
        name: foo
        value: a
    twoWay:
      retainKeysMap:
        value: null
    modified:
      retainKeysMap:
        name: foo
  - description: retainKeys map merge an empty map
    original:
      retainKeysMap:
        name: foo
        value: a
    twoWay:
      retainKeysMap: {}
    modified:
      retainKeysMap:
        name: foo
        value: a
  - description: retainKeys list can add a field when no retainKeys directive present
    original:
      retainKeysMergingList:
      - name: bar
      - name: foo
    twoWay:
      retainKeysMergingList:
      - name: foo
        value: a
    modified:
      retainKeysMergingList:
      - name: bar
      - name: foo
        value: a
  - description: retainKeys list can change a field when no retainKeys directive present
    original:
      retainKeysMergingList:
      - name: bar
      - name: foo
        value: a
    twoWay:
      retainKeysMergingList:
      - name: foo
        value: b
    modified:
      retainKeysMergingList:
      - name: bar
      - name: foo
        value: b
  - description: retainKeys list can delete a field when no retainKeys directive present
    original:
      retainKeysMergingList:
      - name: bar
      - name: foo
        value: a
    twoWay:
      retainKeysMergingList:
      - name: foo
        value: null
    modified:
      retainKeysMergingList:
      - name: bar
      - name: foo
  - description: preserve the order from the patch in a merging list
    original:
      mergingList:
        - name: 1
        - name: 2
          value: b
        - name: 3
    twoWay:
      mergingList:
        - name: 3
          value: c
        - name: 1
          value: a
        - name: 2
          other: x
    modified:
      mergingList:
        - name: 3
          value: c
        - name: 1
          value: a
        - name: 2
          value: b
          other: x
  - description: preserve the order from the patch in a merging list 2
    original:
      mergingList:
        - name: 1
        - name: 2
          value: b
        - name: 3
    twoWay:
      mergingList:
        - name: 3
          value: c
        - name: 1
          value: a
    modified:
      mergingList:
        - name: 2
          value: b
        - name: 3
          value: c
        - name: 1
          value: a
  - description: preserve the order from the patch in a merging int list
    original:
      mergingIntList:
        - 1
        - 2
        - 3
    twoWay:
      mergingIntList:
        - 3
        - 1
        - 2
    modified:
      mergingIntList:
        - 3
        - 1
        - 2
  - description: preserve the order from the patch in a merging int list
    original:
      mergingIntList:
        - 1
        - 2
        - 3
    twoWay:
      mergingIntList:
        - 3
        - 1
    modified:
      mergingIntList:
        - 2
        - 3
        - 1
"""
