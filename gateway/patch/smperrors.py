"""Strategic merge patch errors: upstream's texts (k8s.io/apimachinery/pkg/util/mergepatch/errors.go,
strategicpatch/patch.go) and the answer kube-apiserver gives for each
(k8s.io/apiserver/pkg/endpoints/handlers/patch.go: interpretStrategicMergePatchError).

- 400 BadRequest with the error text: ErrBadJSONDoc, ErrBadPatchFormatForPrimitiveList,
  ErrBadPatchFormatForRetainKeys, ErrBadPatchFormatForSetElementOrderList,
  ErrUnsupportedStrategicMergePatchFormat.
- 422 via NewGenericServerResponse (the text is replaced by a fixed message): ErrNoListOfLists,
  ErrPatchContentNotMatchRetainKeys.
- anything else is not a metav1.Status error: responsewriters.ErrorToAPIStatus makes it a 500
  with no reason and the error text as the message.
"""

from __future__ import annotations

from typing import Any

from protokube.gateway import errors
from protokube.gateway.errors import StatusError
from protokube.gateway.patch.gofmt import MAP_TYPE, sprint_s, sprint_v, type_string

# mergepatch sentinel errors
BAD_JSON_DOC = "invalid JSON document"
NO_LIST_OF_LISTS = "lists of lists are not supported"
BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
UNSUPPORTED_FORMAT = "strategic merge patch format is not supported"


def bad_request(text: str) -> StatusError:
    """One of the sentinels interpretStrategicMergePatchError answers with 400."""
    return errors.bad_request(text)


def no_list_of_lists() -> StatusError:
    """ErrNoListOfLists: NewGenericServerResponse(422, ...) keeps only its fixed message."""
    return errors.generic_server_response(422, NO_LIST_OF_LISTS)


def internal(text: str) -> StatusError:
    """A plain Go error: ErrorToAPIStatus gives 500, reason StatusReasonUnknown (""), the text."""
    return errors.new(500, "", text)


def no_merge_key(item: dict[str, Any], key: str) -> StatusError:
    """mergepatch.ErrNoMergeKey."""
    return internal(f"map: {sprint_v(item)} does not contain declared merge key: {key}")


def bad_arg_type(expected: str, actual: Any) -> StatusError:
    """mergepatch.ErrBadArgType: reflect type names of the expected and the received value."""
    return internal(f"expected a {expected}, but received a {type_string(actual)}")


def bad_map_arg(actual: Any) -> StatusError:
    return bad_arg_type(MAP_TYPE, actual)


def bad_patch_type(directive: Any, item: dict[str, Any]) -> StatusError:
    """mergepatch.ErrBadPatchType: ``unknown patch type: %s in map: %v``."""
    return internal(f"unknown patch type: {sprint_s(directive)} in map: {sprint_v(item)}")
