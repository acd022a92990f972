"""JSON merge patch (RFC 7386, ``application/merge-patch+json``) as kube-apiserver 1.32 applies it:
gopkg.in/evanphx/json-patch.v4 (v4.12.0) ``MergePatch``.

``null`` deletes a member; an object merges into an object recursively; anything else, lists
included, replaces. Details of that implementation kept here:

- a value that replaces (or is added) loses its ``null`` members recursively, also inside arrays
  (the arrays keep their ``null`` elements) — except when it replaces an *object* by a non-object,
  which is taken as it is;
- a patch that is an array is not an error: it becomes the document (the handler then fails to
  decode it as the kind); ``null`` or a scalar patch is 400 "Invalid JSON Patch".
"""

from __future__ import annotations

from typing import Any

import gateway.patch.gojson as gojson
from gateway import errors
from gateway.patch.lazynode import Node, NotContainer, parse_text

INVALID_PATCH = "Invalid JSON Patch"  # evanphx/json-patch: ErrBadJSONPatch


def strict_decode(body: bytes) -> list[str]:
    """patch.go: kjson.UnmarshalStrict(patchBytes, &map[string]interface{}) under fieldValidation
    Warn or Strict; a failure is 400 "error decoding patch: ..."; returns the strict errors."""
    try:
        return gojson.decode_map(body, strict=True)[1]
    except gojson.GoJSONError as e:
        raise errors.bad_request(f"error decoding patch: {e}") from None


def apply(current: dict[str, Any] | list[Any], body: bytes) -> Node:
    """jsonpatch.MergePatch(currentJSON, patch): the resulting document's node. (Upstream's
    documents are objects; for an array document the patch, nulls pruned, is the result.)"""
    try:
        gojson.check(body)
    except gojson.GoJSONError:
        raise errors.bad_request(INVALID_PATCH) from None
    text = parse_text(body).strip(" \t\r\n")
    if text.startswith("["):
        patch_array = Node(text)
        patch_array.into_ary()
        _prune(patch_array)
        return patch_array
    if not text.startswith("{"):  # null, or not an object
        raise errors.bad_request(INVALID_PATCH)
    patch = Node(text)
    if not isinstance(current, dict):
        _prune(patch)
        return patch
    document = Node.of(current)
    assert document is not None
    _merge_docs(document.into_doc(), patch.into_doc())
    return document


def _merge_docs(doc: dict[str, Node | None] | None, patch: dict[str, Node | None] | None) -> None:
    assert doc is not None
    for key, value in (patch or {}).items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if current is None:
            _prune(value)
            doc[key] = value
        else:
            doc[key] = _merge(current, value)


def _merge(current: Node, patch: Node) -> Node:
    try:
        current_doc = current.into_doc()
    except NotContainer:
        _prune(patch)
        return patch
    try:
        patch_doc = patch.into_doc()
    except NotContainer:
        return patch  # an object replaced by a non-object: nulls inside it stay
    _merge_docs(current_doc, patch_doc)
    return current


def _prune(node: Node) -> None:
    """pruneNulls: drop null members of objects, recursively, also inside arrays."""
    try:
        doc = node.into_doc()
    except NotContainer:
        try:
            items = node.into_ary()
        except NotContainer:
            return
        for item in items or []:
            if item is not None:
                _prune(item)
        return
    for key in [k for k, v in (doc or {}).items() if v is None]:
        del doc[key]  # type: ignore[union-attr]
    for item in (doc or {}).values():
        if item is not None:
            _prune(item)
