"""Server-side apply and managedFields, as upstream's structured-merge-diff and field manager do them.

Public entry points:

- ``FieldManager(type, api_version, kind, reset_fields=...)``: ``update(live, new, manager,
  subresource, now=...)`` for every create/update/non-apply patch, ``apply(live, applied, manager,
  force, subresource, now=...)`` for server-side apply (returns the merged object or ``Unchanged``).
- ``options``: fieldManager validation, the manager name from the User-Agent, managedFields checks.
- ``Set`` and path helpers (fieldpath), FieldsV1 in both directions.
- ``ignore_managed_fields_timestamps``: the store's revert of timestamp-only managedFields changes.
"""

from gateway.fieldmanager.equality import ignore_managed_fields_timestamps
from gateway.fieldmanager.fieldpath import FieldsV1Error, Path, PathElement, Set, field, index, key, make_path, value
from gateway.fieldmanager.manager import ANCIENT_CHANGES, BEFORE_FIRST_APPLY, FieldManager, Unchanged
from gateway.fieldmanager.options import (
    manager_or_user_agent,
    patch_options_errors,
    prefix_from_user_agent,
    validate_field_manager,
)

__all__ = [
    "ANCIENT_CHANGES",
    "BEFORE_FIRST_APPLY",
    "FieldManager",
    "FieldsV1Error",
    "Path",
    "PathElement",
    "Set",
    "Unchanged",
    "field",
    "ignore_managed_fields_timestamps",
    "index",
    "key",
    "make_path",
    "manager_or_user_agent",
    "patch_options_errors",
    "prefix_from_user_agent",
    "validate_field_manager",
    "value",
]
