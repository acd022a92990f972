"""A mutating webhook's JSONPatch applied to the request's object, as upstream's mutating
dispatcher does (evanphx/json-patch semantics: gateway/patch/jsonpatch.py). An undecodable patch
or an unknown patch type is a failed call (failurePolicy decides); a patch that does not apply,
or whose result is not an object of the kind, is an internal error."""

from __future__ import annotations

from typing import Any

from protokube.gateway import errors
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.patch import jsonpatch
from protokube.gateway.patch.lazynode import to_value
from protokube.gateway.webhooks.client import CallFailed
from protokube.schema.jsondecode import DecodeError

JSON_PATCH = "JSONPatch"


def operations(patch: bytes, patch_type: str) -> list[Any]:
    """The patch's operations (CallFailed when it cannot be read)."""
    if patch_type != JSON_PATCH:
        raise CallFailed(f'unsupported patch type "{patch_type}"')
    try:
        return jsonpatch.decode(patch)
    except errors.StatusError as err:
        raise CallFailed(f"received undecodable patch in webhook response: {err.status.message}") from None


def patched(codec: Codec, current: dict[str, Any], ops: list[Any]) -> Obj | None:
    """The object ``ops`` make of ``current`` (its JSON), None when they change nothing."""
    try:
        value = to_value(jsonpatch.apply(current, ops))
    except jsonpatch.PatchFailed as err:
        raise errors.internal(str(err)) from None
    if value == current:
        return None
    if not isinstance(value, dict):
        raise errors.internal(f"json: cannot unmarshal {type(value).__name__} into Go value of type {codec.gvk.kind}")
    try:
        return codec.from_dict(value).obj
    except (DecodeError, errors.StatusError, ValueError, TypeError) as err:
        raise errors.internal(str(err)) from None
