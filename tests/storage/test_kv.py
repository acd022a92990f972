"""KV over gRPC: Range, Put, DeleteRange, Txn, Compact — semantics and errors as etcd's."""

from __future__ import annotations

import grpc
import pytest

from protokube.gen.etcdserverpb import rpc_pb2 as pb

from .helpers import run

SortOrder = pb.RangeRequest.SortOrder
SortTarget = pb.RangeRequest.SortTarget
Compare = pb.Compare


def prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


async def expect_error(call, code: grpc.StatusCode, message: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert info.value.code() == code
    assert info.value.details() == message


def test_fresh_store_revisions(storage_factory):
    server = storage_factory("--compaction-retention", "0")

    async def test(s):
        empty = await s.kv.Range(pb.RangeRequest(key=b"a"))
        assert empty.header.revision == 1 and empty.count == 0 and not empty.kvs
        first = await s.kv.Put(pb.PutRequest(key=b"a", value=b"1"))
        assert first.header.revision == 2
        second = await s.kv.Put(pb.PutRequest(key=b"a", value=b"2"))
        assert second.header.revision == 3
        kv = (await s.kv.Range(pb.RangeRequest(key=b"a"))).kvs[0]
        assert (kv.create_revision, kv.mod_revision, kv.version, kv.value) == (2, 3, 2, b"2")
        await s.kv.DeleteRange(pb.DeleteRangeRequest(key=b"a"))
        await s.kv.Put(pb.PutRequest(key=b"a", value=b"3"))
        kv = (await s.kv.Range(pb.RangeRequest(key=b"a"))).kvs[0]
        assert (kv.create_revision, kv.mod_revision, kv.version) == (5, 5, 1)  # version reset after delete
        header = (await s.kv.Range(pb.RangeRequest(key=b"a"))).header
        assert header.cluster_id and header.member_id and header.raft_term == 1

    run(server.address, test)


def test_put_and_ranges(storage, prefix):
    async def test(s):
        keys = [prefix + k for k in (b"a", b"b", b"c", b"d", b"e")]
        for i, key in enumerate(keys):
            await s.kv.Put(pb.PutRequest(key=key, value=b"v%d" % i))
        end = prefix_end(prefix)
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end))
        assert [kv.key for kv in r.kvs] == keys and r.count == 5 and not r.more
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, limit=2))
        assert [kv.key for kv in r.kvs] == keys[:2] and r.count == 5 and r.more
        r = await s.kv.Range(pb.RangeRequest(key=keys[1], range_end=keys[3]))
        assert [kv.key for kv in r.kvs] == keys[1:3]
        r = await s.kv.Range(pb.RangeRequest(key=keys[3], range_end=b"\x00"))  # every key >= keys[3]
        assert [kv.key for kv in r.kvs][:2] == keys[3:]
        r = await s.kv.Range(pb.RangeRequest(key=b"\x00", range_end=b"\x00", count_only=True))
        assert r.count >= 5 and not r.kvs
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, keys_only=True))
        assert all(kv.value == b"" and kv.version == 1 for kv in r.kvs)
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, count_only=True))
        assert r.count == 5 and not r.kvs
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, serializable=True))
        assert r.count == 5
        r = await s.kv.Range(pb.RangeRequest(key=keys[4], range_end=keys[0]))  # end before key
        assert r.count == 0 and not r.kvs
        r = await s.kv.Range(pb.RangeRequest(key=prefix + b"zz"))
        assert r.count == 0 and not r.kvs

    run(storage.address, test)


def test_sorting_and_filters(storage, prefix):
    async def test(s):
        end = prefix_end(prefix)
        for key, value in ((b"b", b"3"), (b"a", b"2"), (b"c", b"1")):
            await s.kv.Put(pb.PutRequest(key=prefix + key, value=value))
        await s.kv.Put(pb.PutRequest(key=prefix + b"a", value=b"2"))  # a: version 2, newest mod

        async def keys(**kw):
            r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, **kw))
            return [kv.key[len(prefix) :] for kv in r.kvs]

        assert await keys(sort_order=SortOrder.DESCEND) == [b"c", b"b", b"a"]
        assert await keys(sort_order=SortOrder.ASCEND, sort_target=SortTarget.VALUE) == [b"c", b"a", b"b"]
        assert await keys(sort_order=SortOrder.DESCEND, sort_target=SortTarget.VALUE) == [b"b", b"a", b"c"]
        assert await keys(sort_target=SortTarget.MOD) == [b"b", b"c", b"a"]  # NONE + target: ascending
        assert await keys(sort_order=SortOrder.DESCEND, sort_target=SortTarget.CREATE) == [b"c", b"a", b"b"]
        assert (await keys(sort_order=SortOrder.DESCEND, sort_target=SortTarget.VERSION))[:1] == [b"a"]
        assert await keys(sort_order=SortOrder.DESCEND, limit=2) == [b"c", b"b"]
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end))
        mods = {kv.key[len(prefix) :]: kv.mod_revision for kv in r.kvs}
        creates = {kv.key[len(prefix) :]: kv.create_revision for kv in r.kvs}
        assert await keys(min_mod_revision=mods[b"c"]) == [b"a", b"c"]
        assert await keys(max_mod_revision=mods[b"c"]) == [b"b", b"c"]
        assert await keys(min_create_revision=creates[b"a"], max_create_revision=creates[b"a"]) == [b"a"]
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=end, min_mod_revision=mods[b"c"], limit=1))
        assert r.count == 3 and r.more and len(r.kvs) == 1  # count is before filters, as etcd

    run(storage.address, test)


def test_past_revisions(storage, prefix):
    async def test(s):
        key = prefix + b"k"
        revs = [(await s.kv.Put(pb.PutRequest(key=key, value=b"v%d" % i))).header.revision for i in range(3)]
        deleted = await s.kv.DeleteRange(pb.DeleteRangeRequest(key=key))
        for i, rev in enumerate(revs):
            r = await s.kv.Range(pb.RangeRequest(key=key, revision=rev))
            assert r.kvs[0].value == b"v%d" % i and r.kvs[0].version == i + 1
            assert r.header.revision >= deleted.header.revision  # header: the current revision
        r = await s.kv.Range(pb.RangeRequest(key=key, revision=deleted.header.revision))
        assert not r.kvs
        r = await s.kv.Range(pb.RangeRequest(key=prefix, range_end=prefix_end(prefix), revision=revs[1]))
        assert [kv.value for kv in r.kvs] == [b"v1"] and r.count == 1
        await expect_error(
            s.kv.Range(pb.RangeRequest(key=key, revision=deleted.header.revision + 1000)),
            grpc.StatusCode.OUT_OF_RANGE,
            "etcdserver: mvcc: required revision is a future revision",
        )

    run(storage.address, test)


def test_put_options_and_errors(storage, prefix):
    async def test(s):
        key = prefix + b"k"
        first = await s.kv.Put(pb.PutRequest(key=key, value=b"one", prev_kv=True))
        assert not first.HasField("prev_kv")
        second = await s.kv.Put(pb.PutRequest(key=key, value=b"two", prev_kv=True))
        assert second.prev_kv.value == b"one" and second.prev_kv.mod_revision == first.header.revision
        lease = await s.lease.LeaseGrant(pb.LeaseGrantRequest(TTL=60))
        await s.kv.Put(pb.PutRequest(key=key, ignore_value=True, lease=lease.ID))
        kv = (await s.kv.Range(pb.RangeRequest(key=key))).kvs[0]
        assert (kv.value, kv.lease, kv.version) == (b"two", lease.ID, 3)
        await s.kv.Put(pb.PutRequest(key=key, value=b"three", ignore_lease=True))
        kv = (await s.kv.Range(pb.RangeRequest(key=key))).kvs[0]
        assert (kv.value, kv.lease) == (b"three", lease.ID)
        bad = grpc.StatusCode.INVALID_ARGUMENT
        await expect_error(s.kv.Put(pb.PutRequest(key=b"", value=b"x")), bad, "etcdserver: key is not provided")
        await expect_error(
            s.kv.Put(pb.PutRequest(key=prefix + b"missing", ignore_value=True)),
            bad,
            "etcdserver: key not found",
        )
        await expect_error(
            s.kv.Put(pb.PutRequest(key=key, value=b"x", ignore_value=True)),
            bad,
            "etcdserver: value is provided",
        )
        await expect_error(
            s.kv.Put(pb.PutRequest(key=key, lease=lease.ID, ignore_lease=True)),
            bad,
            "etcdserver: lease is provided",
        )
        await expect_error(
            s.kv.Put(pb.PutRequest(key=key, value=b"x", lease=12345)),
            grpc.StatusCode.NOT_FOUND,
            "etcdserver: requested lease not found",
        )
        await expect_error(s.kv.Range(pb.RangeRequest(key=b"")), bad, "etcdserver: key is not provided")
        await expect_error(s.kv.DeleteRange(pb.DeleteRangeRequest()), bad, "etcdserver: key is not provided")
        await expect_error(s.kv.Range(pb.RangeRequest(key=key, sort_order=7)), bad, "etcdserver: invalid sort option")

    run(storage.address, test)


def test_delete_range(storage, prefix):
    async def test(s):
        for k in (b"a", b"b", b"c"):
            await s.kv.Put(pb.PutRequest(key=prefix + k, value=k))
        before = (await s.kv.Range(pb.RangeRequest(key=prefix))).header.revision
        none = await s.kv.DeleteRange(pb.DeleteRangeRequest(key=prefix + b"zz"))
        assert none.deleted == 0 and none.header.revision == before  # no change, no new revision
        one = await s.kv.DeleteRange(pb.DeleteRangeRequest(key=prefix + b"a", prev_kv=True))
        assert one.deleted == 1 and one.prev_kvs[0].value == b"a" and one.header.revision == before + 1
        rest = await s.kv.DeleteRange(pb.DeleteRangeRequest(key=prefix, range_end=prefix_end(prefix), prev_kv=True))
        assert rest.deleted == 2 and [kv.value for kv in rest.prev_kvs] == [b"b", b"c"]
        assert rest.header.revision == before + 2  # one revision for the whole range
        assert (await s.kv.Range(pb.RangeRequest(key=prefix, range_end=prefix_end(prefix)))).count == 0

    run(storage.address, test)


def _cmp(key: bytes, target: int, result: int, **value) -> pb.Compare:
    return pb.Compare(key=key, target=target, result=result, **value)


def test_txn_compares(storage, prefix):
    async def test(s):
        key = prefix + b"k"
        lease = await s.lease.LeaseGrant(pb.LeaseGrantRequest(TTL=60))
        put = await s.kv.Put(pb.PutRequest(key=key, value=b"m", lease=lease.ID))
        await s.kv.Put(pb.PutRequest(key=key, value=b"m", lease=lease.ID))  # version 2
        create, mod = put.header.revision, put.header.revision + 1
        cases = [
            (Compare.VERSION, {"version": 2}),
            (Compare.CREATE, {"create_revision": create}),
            (Compare.MOD, {"mod_revision": mod}),
            (Compare.VALUE, {"value": b"m"}),
            (Compare.LEASE, {"lease": lease.ID}),
        ]
        for target, value in cases:
            (field, actual) = next(iter(value.items()))
            lower = {field: b"a"} if field == "value" else {field: actual - 1}
            higher = {field: b"z"} if field == "value" else {field: actual + 1}
            expectations = [
                (Compare.EQUAL, value, True),
                (Compare.EQUAL, lower, False),
                (Compare.NOT_EQUAL, lower, True),
                (Compare.NOT_EQUAL, value, False),
                (Compare.GREATER, lower, True),
                (Compare.GREATER, value, False),
                (Compare.LESS, higher, True),
                (Compare.LESS, value, False),
            ]
            for result, given, holds in expectations:
                r = await s.kv.Txn(pb.TxnRequest(compare=[_cmp(key, target, result, **given)]))
                assert r.succeeded is holds, (target, result, given)

        missing = prefix + b"missing"
        assert (
            await s.kv.Txn(pb.TxnRequest(compare=[_cmp(missing, Compare.VERSION, Compare.EQUAL, version=0)]))
        ).succeeded
        assert (
            await s.kv.Txn(pb.TxnRequest(compare=[_cmp(missing, Compare.MOD, Compare.EQUAL, mod_revision=0)]))
        ).succeeded
        value_on_missing = _cmp(missing, Compare.VALUE, Compare.NOT_EQUAL, value=b"x")
        assert not (await s.kv.Txn(pb.TxnRequest(compare=[value_on_missing]))).succeeded

        # range_end: the compare must hold for every key in the range
        for k, v in ((b"r/a", b"1"), (b"r/b", b"1"), (b"r/c", b"2")):
            await s.kv.Put(pb.PutRequest(key=prefix + k, value=v))
        all_one = pb.Compare(
            key=prefix + b"r/",
            range_end=prefix + b"r0",
            target=Compare.VALUE,
            result=Compare.EQUAL,
            value=b"1",
        )
        assert not (await s.kv.Txn(pb.TxnRequest(compare=[all_one]))).succeeded
        all_one.range_end = prefix + b"r/c"
        assert (await s.kv.Txn(pb.TxnRequest(compare=[all_one]))).succeeded

    run(storage.address, test)


def test_txn_branches_are_atomic_with_one_revision(storage, prefix):
    async def test(s):
        a, b, c = prefix + b"a", prefix + b"b", prefix + b"c"
        await s.kv.Put(pb.PutRequest(key=c, value=b"old"))
        start = (await s.kv.Range(pb.RangeRequest(key=a))).header.revision
        txn = pb.TxnRequest(
            compare=[_cmp(a, Compare.CREATE, Compare.EQUAL, create_revision=0)],
            success=[
                pb.RequestOp(request_put=pb.PutRequest(key=a, value=b"1")),
                pb.RequestOp(request_put=pb.PutRequest(key=b, value=b"2", prev_kv=True)),
                pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=c, prev_kv=True)),
                pb.RequestOp(request_range=pb.RangeRequest(key=prefix, range_end=prefix_end(prefix))),
            ],
            failure=[pb.RequestOp(request_range=pb.RangeRequest(key=a))],
        )
        r = await s.kv.Txn(txn)
        assert r.succeeded and r.header.revision == start + 1
        assert [op.WhichOneof("response") for op in r.responses] == [
            "response_put",
            "response_put",
            "response_delete_range",
            "response_range",
        ]
        assert r.responses[2].response_delete_range.deleted == 1
        assert r.responses[2].response_delete_range.prev_kvs[0].value == b"old"
        # the range sees the txn's own writes
        assert [kv.key for kv in r.responses[3].response_range.kvs] == [a, b]
        for key in (a, b):
            kv = (await s.kv.Range(pb.RangeRequest(key=key))).kvs[0]
            assert kv.mod_revision == kv.create_revision == start + 1
        again = await s.kv.Txn(txn)  # a exists now: failure branch, read only, no new revision
        assert not again.succeeded and again.header.revision == start + 1
        assert again.responses[0].response_range.kvs[0].value == b"1"

        nested = pb.TxnRequest(
            success=[
                pb.RequestOp(
                    request_txn=pb.TxnRequest(
                        compare=[_cmp(a, Compare.VALUE, Compare.EQUAL, value=b"1")],
                        success=[pb.RequestOp(request_put=pb.PutRequest(key=a, value=b"nested"))],
                    )
                ),
                pb.RequestOp(request_put=pb.PutRequest(key=b, value=b"outer")),
            ]
        )
        r = await s.kv.Txn(nested)
        assert r.succeeded and r.responses[0].response_txn.succeeded and r.header.revision == start + 2
        assert (await s.kv.Range(pb.RangeRequest(key=a))).kvs[0].value == b"nested"

        # a failing op (unknown lease) aborts the whole txn: nothing applied
        bad = pb.TxnRequest(
            success=[
                pb.RequestOp(request_put=pb.PutRequest(key=a, value=b"no")),
                pb.RequestOp(request_put=pb.PutRequest(key=c, value=b"no", lease=999)),
            ]
        )
        await expect_error(s.kv.Txn(bad), grpc.StatusCode.NOT_FOUND, "etcdserver: requested lease not found")
        assert (await s.kv.Range(pb.RangeRequest(key=a))).kvs[0].value == b"nested"
        assert (await s.kv.Range(pb.RangeRequest(key=a))).header.revision == start + 2

    run(storage.address, test)


def test_txn_limits(storage, prefix):
    async def test(s):
        bad = grpc.StatusCode.INVALID_ARGUMENT
        many = [pb.RequestOp(request_put=pb.PutRequest(key=prefix + b"%d" % i)) for i in range(129)]
        await expect_error(s.kv.Txn(pb.TxnRequest(success=many)), bad, "etcdserver: too many operations in txn request")
        assert (await s.kv.Txn(pb.TxnRequest(success=many[:128]))).succeeded
        dup = [pb.RequestOp(request_put=pb.PutRequest(key=prefix + b"x"))] * 2
        await expect_error(s.kv.Txn(pb.TxnRequest(success=dup)), bad, "etcdserver: duplicate key given in txn request")
        overlap = [
            pb.RequestOp(request_put=pb.PutRequest(key=prefix + b"x")),
            pb.RequestOp(request_delete_range=pb.DeleteRangeRequest(key=prefix, range_end=prefix_end(prefix))),
        ]
        await expect_error(
            s.kv.Txn(pb.TxnRequest(success=overlap)), bad, "etcdserver: duplicate key given in txn request"
        )
        await expect_error(s.kv.Txn(pb.TxnRequest(success=[pb.RequestOp()])), bad, "etcdserver: request op is empty")

    run(storage.address, test)


def test_compaction(storage_factory):
    server = storage_factory("--compaction-retention", "0")

    async def test(s):
        revs = [(await s.kv.Put(pb.PutRequest(key=b"c", value=b"%d" % i))).header.revision for i in range(5)]
        await s.kv.Put(pb.PutRequest(key=b"gone", value=b"x"))
        await s.kv.DeleteRange(pb.DeleteRangeRequest(key=b"gone"))
        current = (await s.kv.Range(pb.RangeRequest(key=b"c"))).header.revision
        await expect_error(
            s.kv.Compact(pb.CompactionRequest(revision=current + 1)),
            grpc.StatusCode.OUT_OF_RANGE,
            "etcdserver: mvcc: required revision is a future revision",
        )
        r = await s.kv.Compact(pb.CompactionRequest(revision=revs[3], physical=True))
        assert r.header.revision == current
        compacted = "etcdserver: mvcc: required revision has been compacted"
        await expect_error(
            s.kv.Compact(pb.CompactionRequest(revision=revs[3])), grpc.StatusCode.OUT_OF_RANGE, compacted
        )
        await expect_error(
            s.kv.Compact(pb.CompactionRequest(revision=revs[1])), grpc.StatusCode.OUT_OF_RANGE, compacted
        )
        await expect_error(
            s.kv.Range(pb.RangeRequest(key=b"c", revision=revs[2])), grpc.StatusCode.OUT_OF_RANGE, compacted
        )
        at = await s.kv.Range(pb.RangeRequest(key=b"c", revision=revs[3]))  # the compacted revision itself
        assert at.kvs[0].value == b"3"
        assert (await s.kv.Range(pb.RangeRequest(key=b"c", revision=revs[4]))).kvs[0].value == b"4"
        assert (await s.kv.Range(pb.RangeRequest(key=b"c"))).kvs[0].value == b"4"
        await s.kv.Compact(pb.CompactionRequest(revision=current, physical=True))
        assert not (await s.kv.Range(pb.RangeRequest(key=b"gone", revision=current))).kvs
        assert (await s.kv.Range(pb.RangeRequest(key=b"c", revision=current))).kvs[0].value == b"4"

    run(server.address, test)


def test_request_size_limit(storage_factory):
    server = storage_factory("--compaction-retention", "0", "--max-request-bytes", "100000")

    async def test(s):
        big = b"x" * 90_000
        assert (await s.kv.Put(pb.PutRequest(key=b"big", value=big))).header.revision == 2
        assert (await s.kv.Range(pb.RangeRequest(key=b"big"))).kvs[0].value == big
        await expect_error(
            s.kv.Put(pb.PutRequest(key=b"big", value=b"x" * 100_001)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "etcdserver: request is too large",
        )
        txn = pb.TxnRequest(success=[pb.RequestOp(request_put=pb.PutRequest(key=b"t", value=b"y" * 100_001))])
        await expect_error(s.kv.Txn(txn), grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: request is too large")

    run(server.address, test)


def test_default_limit_allows_large_values(storage, prefix):
    async def test(s):
        value = bytes(range(256)) * 5000  # 1.28 MB, like a large Kubernetes object
        await s.kv.Put(pb.PutRequest(key=prefix + b"large", value=value))
        assert (await s.kv.Range(pb.RangeRequest(key=prefix + b"large"))).kvs[0].value == value
        await expect_error(
            s.kv.Put(pb.PutRequest(key=prefix + b"huge", value=b"z" * 1_600_000)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "etcdserver: request is too large",
        )

    run(storage.address, test)


def test_malformed_request_bytes(storage):
    """Bytes that do not parse as the request message: INVALID_ARGUMENT, and the server lives on."""

    async def test(s):
        call = s.channel.unary_unary("/etcdserverpb.KV/Range")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(b"\xff\xff\xff")
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "malformed request" in info.value.details()
        assert (await s.kv.Range(pb.RangeRequest(key=b"k"))).header.revision >= 1

    run(storage.address, test)
