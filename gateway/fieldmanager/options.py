"""Field manager names: validation of ``?fieldManager=``, the default from the User-Agent, and the
checks on managedFields that clients or admission send.

- ``validate_field_manager`` and ``patch_options_errors`` are upstream's ValidateFieldManager and
  ValidatePatchOptions (k8s.io/apimachinery/pkg/apis/meta/v1/validation); the handlers turn the
  errors into ``errors.invalid_options("PatchOptions" | "CreateOptions" | "UpdateOptions", errs)``
  (422 ``PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: ...``).
- ``manager_or_user_agent`` is k8s.io/apiserver handlers' managerOrUserAgent/prefixFromUserAgent.
- ``managed_fields_errors`` is ValidateManagedFields, part of ObjectMeta validation (422 on write).
- ``managed_fields_admission_warning`` is the apiserver's managedFieldsValidatingAdmissionController.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import protokube.gateway.fieldmanager.managedfields as managedfields
from protokube.gateway.errors import FieldError
from protokube.gateway.fieldmanager.values import go_quote

FIELD_MANAGER_MAX_LENGTH = 128  # validation.FieldManagerMaxLength
MAX_SUBRESOURCE_NAME_LENGTH = 256  # validation.MaxSubresourceNameLength

# upstream's InvalidManagedFieldsAfterMutatingAdmissionWarningFormat
INVALID_AFTER_ADMISSION_WARNING = (
    ".metadata.managedFields was in an invalid state after admission; this could be caused by an "
    "outdated mutating admission controller; please fix your requests: {}"
)


class _GoQuoted:
    """A string value printed in field errors the way Go's %q prints it."""

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return go_quote(self.text)


def _is_print(c: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return c == " " or c.isprintable()


def _rune_name(c: str) -> str:
    """Go's %#U of a non-printable rune: ``U+0000``."""
    return f"U+{ord(c):04X}"


def validate_field_manager(name: str, path: str = "fieldManager") -> list[FieldError]:
    """upstream's ValidateFieldManager: at most 128 bytes, printable characters only."""
    errors: list[FieldError] = []
    if len(name.encode()) > FIELD_MANAGER_MAX_LENGTH:
        errors.append(FieldError("FieldValueTooLong", path, f"may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"))
    offset = 0
    for c in name:
        if not _is_print(c):
            detail = f"invalid character {_rune_name(c)} (at position {offset})"
            errors.append(FieldError("FieldValueInvalid", path, detail, _GoQuoted(name), True))
        offset += len(c.encode("utf-8", "surrogatepass"))
    return errors


def patch_options_errors(field_manager: str, force: bool | None, is_apply: bool) -> list[FieldError]:
    """upstream's ValidatePatchOptions, the fieldManager and force parts."""
    errors: list[FieldError] = []
    if is_apply:
        if field_manager == "":
            # kubectl defaults it to "kubectl"; controllers must set it.
            errors.append(FieldError.required("fieldManager", "is required for apply patch"))
    elif force is not None:
        errors.append(FieldError.forbidden("force", "may not be specified for non-apply patch"))
    return errors + validate_field_manager(field_manager)


@functools.lru_cache(maxsize=256)
def prefix_from_user_agent(user_agent: str) -> str:
    """upstream's prefixFromUserAgent: what precedes the first ``/``, printable characters only,
    cut to 128 bytes (``kubectl/v1.32.0 (linux/amd64) kubernetes/abc`` → ``kubectl``). Remembered:
    a server sees few user agents, each in every write of its client."""
    out: list[str] = []
    size = 0
    for c in user_agent.split("/", 1)[0]:
        if not _is_print(c):
            continue
        n = len(c.encode("utf-8", "surrogatepass"))
        if size + n > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(c)
        size += n
    return "".join(out)


def manager_or_user_agent(field_manager: str, user_agent: str) -> str:
    """The manager of a create/update/non-apply patch: ``?fieldManager=`` or the User-Agent's product."""
    return field_manager or prefix_from_user_agent(user_agent)


def managed_fields_errors(entries: Sequence[Any], path: str = "metadata.managedFields") -> list[FieldError]:
    """upstream's ValidateManagedFields (ObjectMeta validation)."""
    errors: list[FieldError] = []
    for i, entry in enumerate(entries):
        entry = entry if isinstance(entry, dict) else {}
        here = f"{path}[{i}]"
        operation = entry.get("operation") or ""
        if operation not in (managedfields.APPLY, managedfields.UPDATE):
            errors.append(FieldError.invalid(f"{here}.operation", operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != managedfields.FIELDS_V1:
            errors.append(FieldError.invalid(f"{here}.fieldsType", fields_type, "must be `FieldsV1`"))
        errors += validate_field_manager(entry.get("manager") or "", f"{here}.manager")
        subresource = entry.get("subresource") or ""
        if len(subresource.encode()) > MAX_SUBRESOURCE_NAME_LENGTH:
            errors.append(
                FieldError(
                    "FieldValueTooLong",
                    f"{here}.subresource",
                    f"may not be more than {MAX_SUBRESOURCE_NAME_LENGTH} bytes",
                )
            )
    return errors


def managed_fields_admission_warning(entries: Any) -> str | None:
    """The warning when mutating admission left invalid managedFields (the caller then restores the
    managedFields from before admission), or None when they decode."""
    try:
        managedfields.decode(entries)
    except managedfields.DecodeError as e:
        return INVALID_AFTER_ADMISSION_WARNING.format(e)
    return None
