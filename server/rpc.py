"""gRPC plumbing: method handlers built from the service descriptors, with etcd-style errors.

Handlers may return a message or already-serialized bytes (hot paths pre-encode responses).
A StorageError becomes its gRPC status; any other exception is logged and becomes INTERNAL.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import NoReturn

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError

from protokube.gen.etcdserverpb import rpc_pb2
from protokube.server import errors
from protokube.server.errors import StorageError
from protokube.server.metrics import MethodCalls, StorageMetrics

log = logging.getLogger(__name__)


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


async def _abort(
    exc: BaseException, method: MethodDescriptor, context: grpc.aio.ServicerContext, calls: MethodCalls
) -> NoReturn:
    """End a call whose handler raised: etcd's errors as gRPC statuses, anything unexpected as INTERNAL
    (logged, without details). The call is counted with the code it ends with before the status goes
    out (a client that has its answer finds the call counted). Always raises."""
    if isinstance(exc, StorageError):
        calls.handled(exc.code)
        await context.abort(exc.code, exc.message)
    elif isinstance(exc, asyncio.CancelledError):
        calls.handled(grpc.StatusCode.CANCELLED)
    elif isinstance(exc, grpc.aio.AbortError):  # the handler aborted the call itself
        calls.handled(context.code() or grpc.StatusCode.UNKNOWN)
    elif isinstance(exc, Exception):
        log.error("%s failed", method.full_name, exc_info=exc)
        calls.handled(grpc.StatusCode.INTERNAL)
        await context.abort(grpc.StatusCode.INTERNAL, errors.INTERNAL_MESSAGE)
    raise exc


def _guard_unary(method: MethodDescriptor, fn: Callable, calls: MethodCalls):
    async def handler(request, context: grpc.aio.ServicerContext):
        calls.start()
        try:
            require_valid(request)
            response = await fn(request, context)
        except BaseException as exc:
            await _abort(exc, method, context, calls)
        calls.handled_ok()
        return response

    return handler


def _guard_stream(method: MethodDescriptor, fn: Callable, calls: MethodCalls):
    async def handler(request_iterator, context: grpc.aio.ServicerContext):
        calls.start()
        try:
            await fn(request_iterator, context)
        except BaseException as exc:
            await _abort(exc, method, context, calls)
        calls.handled_ok()

    return handler


def generic_handler(service_name: str, servicer: object, metrics: StorageMetrics) -> grpc.GenericRpcHandler:
    """Handlers for every method of etcdserverpb.<service_name> that `servicer` implements.

    Unary methods are `async def Name(request, context)` (or plain methods that return an awaitable,
    as KV.Put does); bidirectional streams are
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
            calls = metrics.calls("bidi_stream", service.full_name, method.name)
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _guard_stream(method, fn, calls),
                request_deserializer=_deserializer(request_cls),
                response_serializer=_serialize,
            )
        else:
            calls = metrics.calls("unary", service.full_name, method.name)
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _guard_unary(method, fn, calls),
                request_deserializer=_deserializer(request_cls),
                response_serializer=_serialize,
            )
    return grpc.method_handlers_generic_handler(service.full_name, handlers)
