"""gRPC plumbing: method handlers built from the service descriptors, with etcd-style errors.

Handlers may return a message or already-serialized bytes (hot paths pre-encode responses).
A StorageError becomes its gRPC status; any other exception is logged and becomes INTERNAL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import grpc
from etcdserverpb import rpc_pb2
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError

from server import errors
from server.errors import StorageError
from server.metrics import StorageMetrics

log = logging.getLogger(__name__)

INTERNAL_MESSAGE = "etcdserver: internal error"


def _serialize(response) -> bytes:
    return response if isinstance(response, bytes) else response.SerializeToString()


class MalformedRequest:
    """Stands for request bytes that did not parse; handlers answer INVALID_ARGUMENT."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name


def _deserializer(request_cls):
    def parse(data: bytes):
        try:
            return request_cls.FromString(data)
        except DecodeError:
            return MalformedRequest(request_cls.DESCRIPTOR.full_name)

    return parse


def require_valid(request) -> None:
    """Raise INVALID_ARGUMENT for a request that did not parse (stream handlers call it)."""
    if isinstance(request, MalformedRequest):
        raise errors.invalid(f"malformed request: not a valid {request.type_name}")


@contextlib.asynccontextmanager
async def _errors_to_status(
    method: MethodDescriptor, kind: str, context: grpc.aio.ServicerContext, metrics: StorageMetrics
):
    """etcd's errors as gRPC statuses; anything unexpected as INTERNAL, logged, without details.
    Every call is counted by method and the code it ended with."""
    service, name = method.containing_service.full_name, method.name
    metrics.rpc_started(kind, service, name)
    recorded = False

    def handled(code: grpc.StatusCode) -> None:
        # Counted before the status goes out: a client that has its answer finds the call counted.
        nonlocal recorded
        recorded = True
        metrics.rpc_handled(kind, service, name, code)

    try:
        yield
    except StorageError as exc:
        handled(exc.code)
        await context.abort(exc.code, exc.message)
    except asyncio.CancelledError:
        handled(grpc.StatusCode.CANCELLED)
        raise
    except grpc.aio.AbortError:
        if not recorded:
            handled(context.code() or grpc.StatusCode.UNKNOWN)
        raise
    except Exception:
        log.exception("%s failed", method.full_name)
        handled(grpc.StatusCode.INTERNAL)
        await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE)
    if not recorded:
        handled(grpc.StatusCode.OK)


def _guard_unary(method: MethodDescriptor, fn: Callable, metrics: StorageMetrics):
    async def handler(request, context: grpc.aio.ServicerContext):
        async with _errors_to_status(method, "unary", context, metrics):
            require_valid(request)
            return await fn(request, context)

    return handler


def _guard_stream(method: MethodDescriptor, fn: Callable, metrics: StorageMetrics):
    async def handler(request_iterator, context: grpc.aio.ServicerContext):
        async with _errors_to_status(method, "bidi_stream", context, metrics):
            await fn(request_iterator, context)

    return handler


def generic_handler(service_name: str, servicer: object, metrics: StorageMetrics) -> grpc.GenericRpcHandler:
    """Handlers for every method of etcdserverpb.<service_name> that `servicer` implements.

    Unary methods are `async def Name(request, context)`; bidirectional streams are
    `async def Name(request_iterator, context)` and write with `context.write`.
    """
    service = rpc_pb2.DESCRIPTOR.services_by_name[service_name]
    handlers = {}
    for method in service.methods:
        fn = getattr(servicer, method.name, None)
        if fn is None:
            continue
        request_cls = message_factory.GetMessageClass(method.input_type)
        if method.client_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _guard_stream(method, fn, metrics),
                request_deserializer=_deserializer(request_cls),
                response_serializer=_serialize,
            )
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _guard_unary(method, fn, metrics),
                request_deserializer=_deserializer(request_cls),
                response_serializer=_serialize,
            )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)
