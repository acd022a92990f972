"""The storage service's gRPC requests, generated from their message descriptors (and as raw
bytes): every call ends OK or with one of etcd's client-facing codes — never INTERNAL or UNKNOWN,
which is what an unexpected exception in the service becomes — and the service stays up."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from protokube.gen.etcdserverpb import rpc_pb2 as rpc
from protokube.gen.etcdserverpb import rpc_pb2_grpc
from tests.storage.helpers import StorageProcess

BAD_CODES = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.UNAVAILABLE)
KEYS = st.one_of(st.sampled_from([b"", b"\x00", b"a", b"a/", b"b", b"/registry/x", b"\xff" * 3]), st.binary(max_size=6))
INT64 = st.one_of(st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63), 5]), st.integers(-(2**63), 2**63 - 1))
SCALARS = {
    FieldDescriptor.TYPE_INT64: INT64,
    FieldDescriptor.TYPE_SINT64: INT64,
    FieldDescriptor.TYPE_SFIXED64: INT64,
    FieldDescriptor.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT64: st.one_of(st.sampled_from([0, 1, 2**64 - 1]), st.integers(0, 2**64 - 1)),
    FieldDescriptor.TYPE_FIXED64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_STRING: st.text(max_size=8),
    FieldDescriptor.TYPE_BYTES: KEYS,
}


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of a type with any subset of fields set to any value of their type."""
    fields = {}
    for fd in descriptor.fields:
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if depth >= 3:
                continue
            value = st.deferred(lambda fd=fd: messages(fd.message_type, depth + 1))
        elif fd.type == FieldDescriptor.TYPE_ENUM:
            value = st.sampled_from([v.number for v in fd.enum_type.values] + [99])
        else:
            value = SCALARS[fd.type]
        fields[fd.name] = st.lists(value, max_size=3) if fd.is_repeated else value
    message_class = _class(descriptor)
    return st.fixed_dictionaries({}, optional=fields).map(lambda kw: _build(message_class, kw))


def _class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def _build(message_class: type[Message], values: dict) -> Message:
    message = message_class()
    for name, value in values.items():
        fd = message.DESCRIPTOR.fields_by_name[name]
        if fd.containing_oneof is not None and message.WhichOneof(fd.containing_oneof.name):
            continue
        if fd.is_repeated:
            getattr(message, name).extend(value)
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(message, name).CopyFrom(value)
        else:
            setattr(message, name, value)
    return message


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[grpc.Channel]:
    server = StorageProcess(tmp_path_factory.mktemp("storage-fuzz"), "--compaction-retention", "0").start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            kv = rpc_pb2_grpc.KVStub(channel)
            for key in (b"a", b"a/", b"b", b"/registry/x"):
                kv.Put(rpc.PutRequest(key=key, value=b"v"), timeout=10)
            yield channel
    finally:
        server.kill()
        print("".join(server.log[-40:]))  # shown when a test failed
    assert not [line for line in server.log if "Traceback" in line], "".join(server.log)


UNARY = [
    ("etcdserverpb.KV", "Range", rpc.RangeRequest),
    ("etcdserverpb.KV", "Put", rpc.PutRequest),
    ("etcdserverpb.KV", "DeleteRange", rpc.DeleteRangeRequest),
    ("etcdserverpb.KV", "Txn", rpc.TxnRequest),
    ("etcdserverpb.KV", "Compact", rpc.CompactionRequest),
    ("etcdserverpb.Lease", "LeaseGrant", rpc.LeaseGrantRequest),
    ("etcdserverpb.Lease", "LeaseRevoke", rpc.LeaseRevokeRequest),
    ("etcdserverpb.Lease", "LeaseTimeToLive", rpc.LeaseTimeToLiveRequest),
    ("etcdserverpb.Lease", "LeaseLeases", rpc.LeaseLeasesRequest),
    ("etcdserverpb.Maintenance", "Status", rpc.StatusRequest),
]


def _alive(channel: grpc.Channel) -> None:
    rpc_pb2_grpc.MaintenanceStub(channel).Status(rpc.StatusRequest(), timeout=10)


def _call(channel: grpc.Channel, service: str, method: str, payload: bytes) -> None:
    call = channel.unary_unary(f"/{service}/{method}", request_serializer=None, response_deserializer=None)
    try:
        call(payload, timeout=10)
    except grpc.RpcError as err:
        assert err.code() not in BAD_CODES, (method, err.code(), err.details())
    _alive(channel)


@pytest.mark.parametrize(("service", "method", "request_class"), UNARY, ids=[m for _, m, _ in UNARY])
@given(data=st.data())
def test_unary_requests(
    channel: grpc.Channel, service: str, method: str, request_class: type, data: st.DataObject
) -> None:
    message = data.draw(messages(request_class.DESCRIPTOR))
    _call(channel, service, method, message.SerializeToString())


@pytest.mark.parametrize(("service", "method"), [(s, m) for s, m, _ in UNARY[:4]], ids=[m for _, m, _ in UNARY[:4]])
@given(payload=st.binary(max_size=40))
def test_raw_bytes(channel: grpc.Channel, service: str, method: str, payload: bytes) -> None:
    _call(channel, service, method, payload)


@given(requests=st.lists(messages(rpc.WatchRequest.DESCRIPTOR), min_size=1, max_size=3))
def test_watch_streams(channel: grpc.Channel, requests: list[Message]) -> None:
    stream = rpc_pb2_grpc.WatchStub(channel).Watch(iter(requests), timeout=0.2)
    try:
        for _ in stream:
            pass
    except grpc.RpcError as err:
        assert err.code() not in BAD_CODES, (err.code(), err.details())
    _alive(channel)


@given(requests=st.lists(messages(rpc.LeaseKeepAliveRequest.DESCRIPTOR), min_size=1, max_size=3))
def test_lease_keepalive_streams(channel: grpc.Channel, requests: list[Message]) -> None:
    stream = rpc_pb2_grpc.LeaseStub(channel).LeaseKeepAlive(iter(requests), timeout=0.2)
    try:
        for _ in stream:
            pass
    except grpc.RpcError as err:
        assert err.code() not in BAD_CODES, (err.code(), err.details())
    _alive(channel)
