"""Acknowledged writes survive kill -9; revisions keep growing after the restart."""

from __future__ import annotations

import asyncio
import os
import signal

import grpc

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.gen.etcdserverpb import rpc_pb2_grpc

CLIENTS = 8


async def load_until_killed(address: str, server_pid: int, acked: dict[bytes, tuple[bytes, int]]) -> None:
    async def client(n: int, kv: rpc_pb2_grpc.KVStub) -> None:
        i = 0
        while True:
            key, value = b"/durable/%d/%d" % (n, i % 50), b"value-%d-%d" % (n, i)
            try:
                r = await kv.Put(pb.PutRequest(key=key, value=value), timeout=5)
            except grpc.aio.AioRpcError:
                return  # the server is gone
            acked[key] = (value, r.header.revision)
            i += 1

    async with grpc.aio.insecure_channel(address) as channel:
        kv = rpc_pb2_grpc.KVStub(channel)
        clients = [asyncio.create_task(client(n, kv)) for n in range(CLIENTS)]
        while len(acked) < 400:  # under way: kill in the middle of the load
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        os.kill(server_pid, signal.SIGKILL)
        await asyncio.wait_for(asyncio.gather(*clients), 30)


def test_acknowledged_writes_survive_kill_9(storage_factory, tmp_path):
    data = tmp_path / "durable"
    server = storage_factory("--compaction-retention", "0", data_dir=data)
    acked: dict[bytes, tuple[bytes, int]] = {}
    asyncio.run(load_until_killed(server.address, server.proc.pid, acked))
    server.proc.wait(10)
    assert len(acked) >= 400
    newest_acked = max(rev for _, rev in acked.values())

    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def check() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            kv = rpc_pb2_grpc.KVStub(channel)
            r = await kv.Range(pb.RangeRequest(key=b"/durable/", range_end=b"/durable0"))
            stored = {item.key: (item.value, item.mod_revision) for item in r.kvs}
            for key, (value, rev) in acked.items():
                assert key in stored, key
                # the acknowledged value, or a later one whose ack was lost with the kill
                assert stored[key] == (value, rev) or stored[key][1] > rev, key
            assert r.header.revision >= newest_acked
            after = await kv.Put(pb.PutRequest(key=b"/durable/after", value=b"x"))
            assert after.header.revision > newest_acked

    asyncio.run(asyncio.wait_for(check(), 30))


def test_a_large_transaction_and_single_puts_survive_kill_9(storage_factory, tmp_path):
    """A transaction of more rows than one INSERT statement writes (several statements in one SQLite
    transaction), then concurrent single puts (a statement each, group-committed): after kill -9 every
    row is there and revisions go on from the newest acknowledged one (meta's revision, which a trigger
    keeps with the rows)."""
    data = tmp_path / "rows"
    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def write() -> tuple[int, int]:
        async with grpc.aio.insecure_channel(server.address) as channel:
            kv = rpc_pb2_grpc.KVStub(channel)
            ops = [
                pb.RequestOp(request_put=pb.PutRequest(key=b"/rows/txn/%03d" % i, value=b"t%d" % i)) for i in range(128)
            ]
            txn = await kv.Txn(pb.TxnRequest(success=ops))
            single = (pb.PutRequest(key=b"/rows/put/%d" % i, value=b"p") for i in range(40))
            puts = await asyncio.gather(*(kv.Put(request) for request in single))
            return txn.header.revision, max(p.header.revision for p in puts)

    txn_rev, newest = asyncio.run(asyncio.wait_for(write(), 30))
    assert newest == txn_rev + 40
    server.kill()
    server = storage_factory("--compaction-retention", "0", data_dir=data)

    async def check() -> None:
        async with grpc.aio.insecure_channel(server.address) as channel:
            kv = rpc_pb2_grpc.KVStub(channel)
            r = await kv.Range(pb.RangeRequest(key=b"/rows/", range_end=b"/rows0"))
            assert r.header.revision == newest
            stored = {item.key: (item.value, item.mod_revision) for item in r.kvs}
            assert {k: v for k, v in stored.items() if k.startswith(b"/rows/txn/")} == {
                b"/rows/txn/%03d" % i: (b"t%d" % i, txn_rev) for i in range(128)
            }
            assert sorted(rev for k, (_, rev) in stored.items() if k.startswith(b"/rows/put/")) == list(
                range(txn_rev + 1, newest + 1)
            )
            after = await kv.Put(pb.PutRequest(key=b"/rows/after", value=b"x"))
            assert after.header.revision == newest + 1

    asyncio.run(asyncio.wait_for(check(), 30))
