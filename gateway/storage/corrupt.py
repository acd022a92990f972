"""Objects whose stored bytes cannot be decoded (or decrypted): upstream's corrupt objects.

Reading one is an error, never a crash: a get answers 500 InternalError naming the key (the
error funnel's answer to every StorageError, as upstream's InterpretGetError); a list
answers 500 StoreReadError with one cause per corrupt key (at most ``MAX_LISTED``), as upstream's
etcd3 store reports them; the watch cache skips them and remembers their keys. Only an unsafe
delete (``ignoreStoreReadErrorWithClusterBreakingPotential``) removes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from protokube.gateway import errors
from protokube.gateway.storage.backend import StorageError
from protokube.gen.k8s.io.apimachinery.pkg.apis.meta.v1 import types_pb2 as meta
from protokube.schema.registry import Resource

CORRUPT_CODE = 7  # upstream's storage.ErrCodeCorruptObj
MAX_LISTED = 100  # corrupt keys a list reports before it stops (upstream's aggregator)
TOO_MANY = "too many errors, the list is truncated"


class CorruptObject(StorageError):
    """The value at ``key`` (written at ``revision``) cannot be made an object."""

    def __init__(self, key: str, revision: int, cause: str) -> None:
        self.key = key
        self.revision = revision
        self.cause = cause
        super().__init__(
            f"StorageError: corrupt object, Code: {CORRUPT_CODE}, Key: {key}, ResourceVersion: 0, "
            f"AdditionalErrorMsg: object not decodable revision={revision}: {cause}"
        )


def list_error(resource: Resource, found: Sequence[CorruptObject]) -> errors.StatusError:
    """A list that met corrupt objects (upstream's aggregatedStorageError.NewAPIStatusError)."""
    details = meta.StatusDetails(name="list", kind=resource.plural)
    if resource.group:
        details.group = resource.group
    for corrupt in found[:MAX_LISTED]:
        details.causes.add(reason="UnexpectedServerResponse", field=corrupt.key, message=str(corrupt))
    if len(found) > MAX_LISTED:
        details.causes.add(reason="FieldValueTooMany", message=TOO_MANY)
    message = f"failed to read one or more {resource.group_resource} from the storage"
    return errors.new(500, "StoreReadError", message, details)
