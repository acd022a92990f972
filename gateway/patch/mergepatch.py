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

import contextlib
from typing import Any

import protokube.gateway.patch.gojson as gojson
from protokube.gateway import errors
from protokube.gateway.patch.lazynode import Node, NotContainer, parse_text

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
    """mergeDocs: the patch's members into the document's, objects into objects (at any depth)."""
    stack = [(doc, patch)]
    while stack:
        target, changes = stack.pop()
        assert target is not None
        for key, value in (changes or {}).items():
            if value is None:
                target.pop(key, None)
                continue
            current = target.get(key)
            if current is None:
                _prune(value)
                target[key] = value
                continue
            try:
                current_doc = current.into_doc()
            except NotContainer:
                _prune(value)
                target[key] = value
                continue
            try:
                patch_doc = value.into_doc()
            except NotContainer:
                target[key] = value  # an object replaced by a non-object: nulls inside it stay
                continue
            target[key] = current
            stack.append((current_doc, patch_doc))


def _prune(node: Node) -> None:
    """pruneNulls: drop null members of objects, at any depth, also inside arrays."""
    stack = [node]
    while stack:
        item = stack.pop()
        try:
            doc = item.into_doc()
        except NotContainer:
            with contextlib.suppress(NotContainer):
                stack.extend(child for child in item.into_ary() or [] if child is not None)
            continue
        for key in [k for k, v in (doc or {}).items() if v is None]:
            del doc[key]  # type: ignore[union-attr]
        stack.extend(child for child in (doc or {}).values() if child is not None)
