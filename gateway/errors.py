"""Errors as kube-apiserver reports them: a ``StatusError`` carries a ``metav1.Status``.

Handlers raise; one place (responses.py) renders the Status in the negotiated format. Each
constructor matches the upstream function in k8s.io/apimachinery/pkg/api/errors of the same
name: status code, reason, message wording and details.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import Resource
from protokube.schema.validtext import valid_text

_FIELD_ERROR_LABELS = {
    "FieldValueInvalid": "Invalid value",
    "FieldValueRequired": "Required value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueTooLong": "Too long",
    "FieldValueNotFound": "Not found",
    "FieldValueTooMany": "Too many",
    "FieldValueTypeInvalid": "Invalid value",
}


@dataclass(frozen=True, slots=True)
class FieldError:
    """One entry of upstream's field.ErrorList: ``metadata.name: Invalid value: "X": detail``."""

    type: str  # FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueForbidden...
    field: str
    detail: str = ""
    value: object = None
    has_value: bool = False

    @classmethod
    def invalid(cls, field: str, value: object, detail: str) -> FieldError:
        return cls("FieldValueInvalid", field, detail, value, True)

    @classmethod
    def type_invalid(cls, field: str, value: object, detail: str) -> FieldError:
        """upstream's field.TypeInvalid (a schema's "must be of type" errors)."""
        return cls("FieldValueTypeInvalid", field, detail, value, True)

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        return cls("FieldValueRequired", field, detail)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        return cls("FieldValueForbidden", field, detail)

    @classmethod
    def not_supported(cls, field: str, value: object, supported: Sequence[str]) -> FieldError:
        detail = "supported values: " + ", ".join(f'"{s}"' for s in supported) if supported else ""
        return cls("FieldValueNotSupported", field, detail, value, True)

    @classmethod
    def duplicate(cls, field: str, value: object) -> FieldError:
        return cls("FieldValueDuplicate", field, "", value, True)

    @classmethod
    def not_found(cls, field: str, value: object) -> FieldError:
        return cls("FieldValueNotFound", field, "", value, True)

    @classmethod
    def too_long(cls, field: str, max_length: int) -> FieldError:
        """upstream's field.TooLong: the value is never shown, only the limit in bytes."""
        return cls("FieldValueTooLong", field, f"may not be more than {max_length} bytes")

    @classmethod
    def too_many(cls, field: str, actual: int, max_items: int) -> FieldError:
        return cls("FieldValueTooMany", field, f"must have at most {max_items} items", actual, True)

    def body(self) -> str:
        """The message without the field path (upstream's Error.ErrorBody)."""
        text = _FIELD_ERROR_LABELS.get(self.type, self.type)
        if self.has_value:
            text += f": {_go_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


class GoText(str):
    """A value already printed as upstream prints it (a Stringer's String(), a struct's %#v)."""


def _go_value(value: object) -> str:
    """Format a value as upstream's field errors do (%q for strings, Go syntax for lists)."""
    if value is None:
        return "null"  # a nil pointer
    if isinstance(value, GoText):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[]string{" + ", ".join(_go_value(v) for v in value) + "}"
    return str(value)


def aggregate(errors: Sequence[FieldError | str]) -> str:
    """upstream's utilerrors.NewAggregate(...).Error(): repeated messages once; one error as is,
    several as [a, b]."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


class StatusError(Exception):
    """An API error; ``status`` is the metav1.Status sent to the client."""

    def __init__(self, status: meta.Status, headers: dict[str, str] | None = None) -> None:
        super().__init__(status.message)
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return self.status.code


def _status(code: int, reason: str, message: str, details: meta.StatusDetails | None = None) -> meta.Status:
    # A message may quote client input; a lone surrogate in it could not be encoded (U+FFFD, as Go).
    status = meta.Status(status="Failure", message=valid_text(message), reason=reason, code=code)
    status.metadata.SetInParent()
    if details is not None:
        status.details.CopyFrom(details)
    return status


def _details(resource: Resource | None, name: str, kind: str | None = None) -> meta.StatusDetails:
    details = meta.StatusDetails(name=name)
    if resource is not None:
        if resource.group:
            details.group = resource.group
        details.kind = kind or resource.plural
    return details


def new(code: int, reason: str, message: str, details: meta.StatusDetails | None = None) -> StatusError:
    return StatusError(_status(code, reason, message, details))


def not_found(resource: Resource, name: str) -> StatusError:
    return new(404, "NotFound", f'{resource.group_resource} "{name}" not found', _details(resource, name))


def already_exists(resource: Resource, name: str) -> StatusError:
    return new(409, "AlreadyExists", f'{resource.group_resource} "{name}" already exists', _details(resource, name))


def generate_name_conflict(resource: Resource, name: str) -> StatusError:
    """All generated names were taken (upstream: NewAlreadyExists plus retryAfterSeconds 1)."""
    details = _details(resource, name)
    details.retryAfterSeconds = 1
    message = (
        f'{resource.group_resource} "{name}" already exists, '
        "the server was not able to generate a unique name for the object"
    )
    return StatusError(_status(409, "AlreadyExists", message, details), {"Retry-After": "1"})


def conflict(resource: Resource, name: str, cause: str) -> StatusError:
    message = f'Operation cannot be fulfilled on {resource.group_resource} "{name}": {cause}'
    return new(409, "Conflict", message, _details(resource, name))


def conflict_on(group_resource: str, name: str, cause: str) -> StatusError:
    """A conflict on a resource named as upstream names it, e.g. "deployments/scale.apps"."""
    plural, _, group = group_resource.partition(".")
    details = meta.StatusDetails(name=name, kind=plural)
    if group:
        details.group = group
    message = f'Operation cannot be fulfilled on {group_resource} "{name}": {cause}'
    return new(409, "Conflict", message, details)


OBJECT_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> StatusError:
    qualified = f"{kind}.{group}" if group else kind
    details = meta.StatusDetails(name=valid_text(name), kind=kind)
    if group:
        details.group = group
    for error in errors:  # values may quote client input
        details.causes.add(reason=error.type, message=valid_text(error.body()), field=valid_text(error.field))
    return new(422, "Invalid", f'{qualified} "{name}" is invalid: {aggregate(errors)}', details)


def invalid_options(kind: str, errors: Sequence[FieldError]) -> StatusError:
    """Invalid query options, e.g. ``ListOptions.meta.k8s.io "" is invalid: ...``."""
    return invalid("meta.k8s.io", kind, "", errors)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return new(401, "Unauthorized", message)


def forbidden(group: str, resource: str, name: str, reason: str) -> StatusError:
    """upstream's NewForbidden: ``pods "x" is forbidden: <reason>`` (``forbidden: <reason>`` for paths)."""
    qualified = f"{resource}.{group}" if group and resource else resource
    if qualified:
        message = f'{qualified} "{name}" is forbidden: {reason}' if name else f"{qualified} is forbidden: {reason}"
    else:
        message = f"forbidden: {reason}"
    details = meta.StatusDetails(name=name, kind=resource)
    if group:
        details.group = group
    return new(403, "Forbidden", message, details)


def bad_request(message: str) -> StatusError:
    return new(400, "BadRequest", message)


def method_not_supported(resource: Resource, action: str) -> StatusError:
    details = meta.StatusDetails(kind=resource.plural)
    if resource.group:
        details.group = resource.group
    message = f'{action} is not supported on resources of kind "{resource.group_resource}"'
    return new(405, "MethodNotAllowed", message, details)


def method_not_allowed() -> StatusError:
    """go-restful's 405 (no route for the method at the path), as upstream's serviceErrorHandler
    writes it: a generic server response, its details present and empty."""
    return generic_server_response(405, "")


def path_not_found() -> StatusError:
    return new(404, "NotFound", "the server could not find the requested resource", meta.StatusDetails())


class PageNotFound(StatusError):
    """Go's http.NotFound, which ends kube-apiserver's delegation chain: a path outside every
    go-restful web service of a compiled API is answered "404 page not found" in text, not a Status."""


def page_not_found() -> PageNotFound:
    return PageNotFound(_status(404, "NotFound", "404 page not found"))


def expired(message: str) -> StatusError:
    return new(410, "Expired", message)


def gone(message: str) -> StatusError:
    return new(410, "Gone", message)


def timeout(message: str, retry_after: int = 0) -> StatusError:
    details = meta.StatusDetails(retryAfterSeconds=retry_after) if retry_after else None
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return StatusError(_status(504, "Timeout", f"Timeout: {message}", details), headers)


def not_acceptable(message: str) -> StatusError:
    return new(406, "NotAcceptable", message)


def unsupported_media_type(message: str) -> StatusError:
    return new(415, "UnsupportedMediaType", message)


def request_entity_too_large(message: str) -> StatusError:
    """upstream's NewRequestEntityTooLargeError."""
    return new(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def service_unavailable(message: str) -> StatusError:
    return new(503, "ServiceUnavailable", message)


def internal(message: str) -> StatusError:
    details = meta.StatusDetails()
    details.causes.add(message=message)
    return new(500, "InternalError", f"Internal error occurred: {message}", details)


# NewGenericServerResponse's reason and message for each code (verb "", no resource, no name).
_GENERIC_RESPONSES = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: ("Conflict", "the server reported a conflict"),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: ("TooManyRequests", "the server has received too many requests and has asked us to try again later"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "the server was unable to return a response in the time allotted, but may still be processing the request",
    ),
}


def generic_server_response(code: int, server_message: str) -> StatusError:
    """upstream's NewGenericServerResponse(code, "", schema.GroupResource{}, "", serverMessage, 0, false).

    Most codes keep only a fixed message (the server message is dropped); 403, 406 and 415 keep
    the server message. Details are present and empty.
    """
    if code in _GENERIC_RESPONSES:
        reason, message = _GENERIC_RESPONSES[code]
    elif code == 403:
        reason, message = "Forbidden", server_message
    elif code == 406:
        reason = "NotAcceptable"
        message = server_message
        if not server_message or server_message == "unknown":
            message = "the server was unable to respond with a content type that the client supports"
    elif code == 415:
        reason, message = "UnsupportedMediaType", server_message
    elif code >= 500:
        reason = "InternalError"
        message = f"an error on the server ({go_quote(server_message)}) has prevented the request from succeeding"
    else:
        reason, message = "", f"the server responded with the status code {code} but did not return more information"
    status = _status(code, reason, message, meta.StatusDetails())
    status.details.SetInParent()
    return StatusError(status)


def go_quote(text: str) -> str:
    """Go's %q of a string (strconv.Quote)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code == 0x20 or unicodedata.category(ch)[0] in "LMNPS":
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def apply_conflict(causes: Sequence[tuple[str, str, str]], message: str) -> StatusError:
    """upstream's NewApplyConflict: 409 Conflict whose details carry only causes (reason, message, field)."""
    details = meta.StatusDetails()
    for reason, cause_message, field in causes:
        details.causes.add(reason=reason, message=cause_message, field=field)
    return new(409, "Conflict", message, details)


def not_a_status(message: str) -> StatusError:
    """What upstream's ErrorToAPIStatus makes of an error that is not a metav1.Status: 500, no reason."""
    return new(500, "", message)
