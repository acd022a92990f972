"""etcd's gRPC errors, with etcd's exact codes and messages (clients match on the text)."""

from __future__ import annotations

from grpc import StatusCode


class StorageError(Exception):
    """An error sent to the client as a gRPC status."""

    def __init__(self, code: StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _error(code: StatusCode, message: str) -> StorageError:
    return StorageError(code, message)


EMPTY_KEY = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided")
KEY_NOT_FOUND = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: key not found")
VALUE_PROVIDED = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: value is provided")
LEASE_PROVIDED = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: lease is provided")
TOO_MANY_OPS = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: too many operations in txn request")
DUPLICATE_KEY = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request")
INVALID_SORT_OPTION = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: invalid sort option")
COMPACTED = _error(StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted")
FUTURE_REV = _error(StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")
LEASE_NOT_FOUND = _error(StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
LEASE_EXIST = _error(StatusCode.FAILED_PRECONDITION, "etcdserver: lease already exists")
LEASE_TTL_TOO_LARGE = _error(StatusCode.OUT_OF_RANGE, "etcdserver: too large lease TTL")
REQUEST_TOO_LARGE = _error(StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large")
STOPPED = _error(StatusCode.UNAVAILABLE, "etcdserver: server stopped")


def invalid(message: str) -> StorageError:
    """A malformed request that etcd has no dedicated error for."""
    return StorageError(StatusCode.INVALID_ARGUMENT, f"etcdserver: {message}")
