"""JSON patch (RFC 6902, ``application/json-patch+json``) as kube-apiserver 1.32 applies it.

Upstream decodes and applies the patch with gopkg.in/evanphx/json-patch.v4 (v4.12.0), whose
readings differ from the RFC in places clients can observe, all kept here:

- ``add`` to an array index ``-`` appends; a negative index counts from the end, for ``add`` from
  one past the end (``-1`` appends); indexes are Go's Atoi (``+1``, ``01`` accepted).
- ``replace`` of a missing object member adds it (only array indexes are checked).
- ``copy`` from a missing object member copies ``null``; ``test`` of a missing or null member
  passes when the value is ``null``; a value left out is ``null`` for ``add`` and ``replace``.
- ``test`` compares scalars by their JSON text: ``1`` is not ``1.0``, and a string the server
  wrote with Go's HTML escaping (``\\u003c``) is not the same string written plainly.
- a path without a leading ``/`` has its first segment ignored; ``replace`` of the whole document
  (path ``""``) with a scalar does nothing.
- at most 10000 operations (kube-apiserver's maxJSONPatchOperations, 413), copies may add at
  most 3 MiB in total (kube-apiserver's JSONPatchMaxCopyBytes).

Any failure while applying answers 422 with the generic message upstream gives (patch.go wraps
the library's error in NewGenericServerResponse, which keeps only the status code); the
library's own text is kept on the exception for logs and tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import protokube.gateway.patch.gojson as gojson
from protokube.gateway import errors
from protokube.gateway.errors import StatusError
from protokube.gateway.patch.gofmt import NIL_DEREF, ServerPanic
from protokube.gateway.patch.lazynode import Node, NotContainer, deep_copy, parse_text, split

MAX_OPERATIONS = 10000  # k8s.io/apiserver/pkg/endpoints/handlers/patch.go: maxJSONPatchOperations
COPY_SIZE_LIMIT = 3 * 1024 * 1024  # k8s.io/apiserver/pkg/server/config.go: JSONPatchMaxCopyBytes

_FIELDS = ("op", "path", "from", "value")  # handlers.jsonPatchOp
_ATOI = re.compile(r"[+-]?[0-9]+")

Operation = dict[str, str | None]  # member name → raw JSON text (None: JSON null)


class PatchFailed(Exception):
    """An operation did not apply (the error of evanphx/json-patch, for logs)."""


def apply_failed(error: PatchFailed) -> StatusError:
    """patch.go applyJSPatch: NewGenericServerResponse(422, ...) — the library's text is dropped."""
    status_error = errors.generic_server_response(422, str(error))
    status_error.__cause__ = error
    return status_error


# -- Decoding ------------------------------------------------------------------------------------


def strict_decode(body: bytes) -> list[str]:
    """patch.go: kjson.UnmarshalStrict(patchBytes, &[]jsonPatchOp) under fieldValidation Warn or
    Strict; a failure is 400 "error decoding patch: ..."; returns the strict errors."""
    try:
        value, duplicates = gojson.loads(body)
    except gojson.GoJSONError as e:
        raise errors.bad_request(f"error decoding patch: {e}") from None
    if duplicates:
        value = gojson.pairs_loads(body)
    found = gojson.StrictErrors()
    error = _check_ops(value, found)
    if error is not None:
        raise errors.bad_request(f"error decoding patch: {error}")
    return [f"json patch {e}" for e in found.items]


def _check_ops(value: Any, found: gojson.StrictErrors) -> str | None:
    """The first decoding error into []jsonPatchOp (document order), noting strict errors."""
    if value is None:
        return None
    if not isinstance(value, list) or isinstance(value, gojson.Pairs):
        return gojson.type_error(value, "[]handlers.jsonPatchOp")
    for index, op in enumerate(value):
        if op is None:
            continue
        if not isinstance(op, dict | gojson.Pairs):
            return gojson.type_error(op, "handlers.jsonPatchOp")
        seen: set[str] = set()
        for key, item in gojson.members(op):
            if key not in _FIELDS:
                found.add("unknown field", f"[{index}].{key}")
                continue
            if key in seen:
                found.add("duplicate field", f"[{index}].{key}")
            seen.add(key)
            if key != "value":
                if item is not None and not isinstance(item, str):
                    return gojson.type_error(item, "string", f"jsonPatchOp.{key}")
                continue
            bad = gojson.first_bad_number(item)
            if bad is not None:
                return gojson.number_error(bad, "jsonPatchOp.value")
            gojson.duplicate_fields(item, f"[{index}].value", found)
    return None


def decode(body: bytes) -> list[Operation | None]:
    """jsonpatch.DecodePatch: encoding/json into []map[string]*json.RawMessage (400 on failure),
    then the operation-count limit (413)."""
    try:
        gojson.check(body)
    except gojson.GoJSONError as e:
        raise errors.bad_request(str(e)) from None
    text = parse_text(body).strip(" \t\r\n")
    if text == "null":
        return []
    if not text.startswith("["):
        raise errors.bad_request(gojson.type_error(_kind_of(text), "jsonpatch.Patch"))
    ops: list[Operation | None] = []
    for _, raw in split(text)[1]:
        if raw is None:
            ops.append(None)
        elif not raw.startswith("{"):
            raise errors.bad_request(gojson.type_error(_kind_of(raw), "jsonpatch.Operation"))
        else:
            ops.append(dict(split(raw)[1]))
    if len(ops) > MAX_OPERATIONS:
        # patch.go: NewRequestEntityTooLargeError
        raise errors.request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(ops)}"
        )
    return ops


def _kind_of(raw: str) -> Any:
    """A stand-in value of the JSON kind of a raw text, for type error messages."""
    first = raw[0]
    return {"{": {}, "[": [], '"': ""}.get(first, True if first in "tf" else 0)


# -- Applying ------------------------------------------------------------------------------------


def apply(current: dict[str, Any] | list[Any], ops: Sequence[Operation | None]) -> Node:
    """Patch.Apply: each operation in turn; the document's root node (an object, or whatever a
    ``replace`` of the whole document made it). Upstream's documents are objects; arrays work too."""
    root = Node.of(current)
    assert root is not None
    if isinstance(current, list):
        root.into_ary()
    else:
        root.into_doc()
    copied = [0]
    for op in ops:
        kind = _string_member(op, "op")
        if kind == "add":
            _add(root, op)
        elif kind == "remove":
            _remove(root, op)
        elif kind == "replace":
            root = _replace(root, op)
        elif kind == "move":
            _move(root, op)
        elif kind == "test":
            _test(root, op)
        elif kind == "copy":
            _copy(root, op, copied)
        else:
            raise PatchFailed(f"Unexpected kind: {kind or 'unknown'}")
    return root


def _string_member(op: Operation | None, name: str) -> str | None:
    """A member decoded as a Go string; None if absent, null or not a string."""
    raw = (op or {}).get(name)
    if raw is None or not raw.startswith('"'):
        return None
    return gojson.SURROGATES.sub("\ufffd", json.loads(raw))


def _path(op: Operation | None, name: str, what: str) -> str:
    value = _string_member(op, name)
    if value is None:
        raise PatchFailed(f"{what} operation failed to decode {name}")
    return value


def _value(op: Operation | None) -> Node | None:
    """Operation.value(): a node when the member is present (its raw text None when null)."""
    if op is None or "value" not in op:
        return None
    return Node(op["value"])


def _decode_key(part: str) -> str:
    """RFC 6901: ~1 is "/", ~0 is "~", left to right."""
    return re.sub("~[01]", lambda m: "/" if m.group() == "~1" else "~", part)


def _find(root: Node, path: str) -> tuple[Node, str] | None:
    """findObject: the container of the path's last segment, and that segment."""
    segments = path.split("/")
    if len(segments) < 2:
        return None
    node = root
    for part in segments[1:-1]:
        try:
            child = _get(node, _decode_key(part))
        except PatchFailed:
            return None
        if child is None:
            return None
        try:
            if child.is_array():
                child.into_ary()
            else:
                child.into_doc()
        except NotContainer:
            return None
        node = child
    return node, _decode_key(segments[-1])


def _atoi(key: str) -> int:
    if not _ATOI.fullmatch(key) or not -(2**63) <= int(key) < 2**63:
        raise PatchFailed(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _index(node: Node, key: str, size: int) -> int:
    """An array index as partialArray get/set/remove take it (negative counts from the end)."""
    index = _atoi(key)
    if index < -size or index >= size:
        raise PatchFailed(f"Unable to access invalid index: {index}: invalid index referenced")
    return index + size if index < 0 else index


def _get(node: Node, key: str) -> Node | None:
    if node.which == "doc":
        return (node.doc or {}).get(key)
    items = node.ary or []
    return items[_index(node, key, len(items))]


def _set(node: Node, key: str, value: Node | None) -> None:
    if node.which == "doc":
        _insert(node, key, value)
        return
    items = node.ary or []
    items[_index(node, key, len(items))] = value


def _insert(node: Node, key: str, value: Node | None) -> None:
    """partialDoc.add / partialArray.add."""
    if node.which == "doc":
        if node.doc is None:
            raise ServerPanic("assignment to entry in nil map")
        node.doc[key] = value
        return
    items = list(node.ary or [])
    if key == "-":
        node.ary = [*items, value]
        return
    try:
        index = _atoi(key)
    except PatchFailed as e:
        raise PatchFailed(f"value was not a proper array index: '{key}': {e}") from None
    size = len(items) + 1
    if index >= size or index < -size:
        raise PatchFailed(f"Unable to access invalid index: {index}: invalid index referenced")
    if index < 0:
        index += size
    node.ary = [*items[:index], value, *items[index:]]


def _delete(node: Node, key: str) -> None:
    """partialDoc.remove / partialArray.remove."""
    if node.which == "doc":
        if node.doc is None or key not in node.doc:
            raise PatchFailed(f"Unable to remove nonexistent key: {key}: missing value")
        del node.doc[key]
        return
    items = list(node.ary or [])
    index = _index(node, key, len(items))
    node.ary = items[:index] + items[index + 1 :]


def _add(root: Node, op: Operation | None) -> None:
    path = _path(op, "path", "add")
    found = _find(root, path)
    if found is None:
        raise PatchFailed(f'add operation does not apply: doc is missing path: "{path}": missing value')
    _insert(found[0], found[1], _value(op))


def _remove(root: Node, op: Operation | None) -> None:
    path = _path(op, "path", "remove")
    found = _find(root, path)
    if found is None:
        raise PatchFailed(f'remove operation does not apply: doc is missing path: "{path}": missing value')
    _delete(*found)


def _replace(root: Node, op: Operation | None) -> Node:
    path = _path(op, "path", "replace")
    if path == "":
        value = _value(op)
        if value is None:
            raise ServerPanic(NIL_DEREF)
        if value.which == "raw" and not value.try_doc() and not value.try_ary():
            return root  # upstream wraps a nil error here: the operation succeeds and does nothing
        return value
    found = _find(root, path)
    if found is None:
        raise PatchFailed(f"replace operation does not apply: doc is missing path: {path}: missing value")
    container, key = found
    _get(container, key)  # only arrays can fail here: a missing object member is added
    _set(container, key, _value(op))
    return root


def _move(root: Node, op: Operation | None) -> None:
    source = _path(op, "from", "move")
    found = _find(root, source)
    if found is None:
        raise PatchFailed(f"move operation does not apply: doc is missing from path: {source}: missing value")
    value = _get(*found)
    _delete(*found)
    path = _path(op, "path", "move")
    target = _find(root, path)
    if target is None:
        raise PatchFailed(f"move operation does not apply: doc is missing destination path: {path}: missing value")
    _insert(target[0], target[1], value)


def _test(root: Node, op: Operation | None) -> None:
    path = _path(op, "path", "test")
    expected = _value(op)
    if path == "":
        if root.equal(expected):
            return
        raise PatchFailed(f"testing value {path} failed: test failed")
    found = _find(root, path)
    if found is None:
        raise PatchFailed(f"test operation does not apply: is missing path: {path}: missing value")
    actual = _get(*found)
    if actual is None:
        if expected is None:
            raise ServerPanic(NIL_DEREF)
        if expected.which == "raw" and expected.raw is None:
            return
    elif expected is not None and actual.equal(expected):
        return
    raise PatchFailed(f"testing value {path} failed: test failed")


def _copy(root: Node, op: Operation | None, copied: list[int]) -> None:
    source = _path(op, "from", "copy")
    found = _find(root, source)
    if found is None:
        raise PatchFailed(f"copy operation does not apply: doc is missing from path: {source}: missing value")
    value = _get(*found)
    path = _path(op, "path", "copy")
    target = _find(root, path)
    if target is None:
        raise PatchFailed(f"copy operation does not apply: doc is missing destination path: {path}: missing value")
    duplicate, size = deep_copy(value)
    copied[0] += size
    if copied[0] > COPY_SIZE_LIMIT:
        raise PatchFailed(
            "Unable to complete the copy, the accumulated size increase of copy is "
            f"{copied[0]}, exceeding the limit {COPY_SIZE_LIMIT}"
        )
    _insert(target[0], target[1], duplicate)
