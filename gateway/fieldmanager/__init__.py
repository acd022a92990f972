"""Server-side apply and managedFields, as upstream's structured-merge-diff and field manager do them.

Public entry points:

- ``FieldManager(type, api_version, kind, reset_fields=...)``: ``update(live, new, manager,
  subresource, now=...)`` for every create/update/non-apply patch, ``apply(live, applied, manager,
  force, subresource, now=...)`` for server-side apply (returns the merged object or ``Unchanged``).
- ``options``: fieldManager validation, the manager name from the User-Agent, managedFields checks.
- ``Set`` and path helpers (fieldpath), FieldsV1 in both directions.
- ``ignore_managed_fields_timestamps``: the store's revert of timestamp-only managedFields changes.
"""
