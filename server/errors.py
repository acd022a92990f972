"""etcd's gRPC errors, with etcd's exact codes and messages (clients match on the text).

Each error is made fresh where it is raised (a shared exception instance would collect the
tracebacks of every raise and keep their frames alive).
"""

from __future__ import annotations

from grpc import StatusCode


class StorageError(Exception):
    """An error sent to the client as a gRPC status."""

    def __init__(self, code: StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def empty_key() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided")


def key_not_found() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: key not found")


def value_provided() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: value is provided")


def lease_provided() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: lease is provided")


def too_many_ops() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: too many operations in txn request")


def duplicate_key() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: duplicate key given in txn request")


def invalid_sort_option() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: invalid sort option")


def compacted() -> StorageError:
    return StorageError(StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision has been compacted")


def future_rev() -> StorageError:
    return StorageError(StatusCode.OUT_OF_RANGE, "etcdserver: mvcc: required revision is a future revision")


def lease_not_found() -> StorageError:
    return StorageError(StatusCode.NOT_FOUND, "etcdserver: requested lease not found")


def lease_exist() -> StorageError:
    return StorageError(StatusCode.FAILED_PRECONDITION, "etcdserver: lease already exists")


def lease_ttl_too_large() -> StorageError:
    return StorageError(StatusCode.OUT_OF_RANGE, "etcdserver: too large lease TTL")


def request_too_large() -> StorageError:
    return StorageError(StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large")


def stopped() -> StorageError:
    return StorageError(StatusCode.UNAVAILABLE, "etcdserver: server stopped")


INTERNAL_MESSAGE = "etcdserver: internal error"


def internal() -> StorageError:
    """A request that failed on an error of the server's own."""
    return StorageError(StatusCode.INTERNAL, INTERNAL_MESSAGE)


def invalid(message: str) -> StorageError:
    """A malformed request that etcd has no dedicated error for."""
    return StorageError(StatusCode.INVALID_ARGUMENT, f"etcdserver: {message}")


def no_space() -> StorageError:
    """etcd's ErrGRPCNoSpace: the backend cannot grow (etcd: its quota; here: the disk is full)."""
    return StorageError(StatusCode.RESOURCE_EXHAUSTED, "etcdserver: mvcc: database space exceeded")


def commit_failed(exc: BaseException) -> StorageError:
    """A commit the disk refused: no space (as etcd's NOSPACE), a read-only data directory, or else."""
    text = str(exc).lower()
    if "full" in text or "no space" in text:
        return no_space()
    if "readonly" in text or "read-only" in text:
        return StorageError(StatusCode.INTERNAL, "etcdserver: commit failed: the data directory is read-only")
    return StorageError(StatusCode.INTERNAL, "etcdserver: commit failed")
